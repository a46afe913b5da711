/** Writes docs/openapi.json from the route table and zod schemas (`npm run openapi`). */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApi } from '../lambdas/http/openapi';

export const OPENAPI_PATH = path.join(__dirname, '..', 'docs', 'openapi.json');

writeFileSync(OPENAPI_PATH, `${JSON.stringify(buildOpenApi(), null, 2)}\n`);
console.log(`wrote ${path.relative(process.cwd(), OPENAPI_PATH)}`);
