/**
 * Every route of the `documents` function, by name (bound to paths by bindRoutes): its own routes
 * and seed 004's upload. The one composition its Lambda entry and the embedded default both use.
 */
import type { Database } from '../adapters/postgres/database';
import type { Documents } from '../core/documents/documents';
import type { HttpHandlerDeps } from '../http/http-handler';
import { makeSeedUploadHandler } from '../seeds/upload';
import { makeDocumentHandlers } from './handler';

export function documentsRoutes(deps: HttpHandlerDeps & { db: Database; documents: Documents }) {
  return { ...makeDocumentHandlers(deps), 'api-upload': makeSeedUploadHandler(deps) };
}
