/**
 * Every route of the `rag-answer` function, by name (bound to paths by bindRoutes): its own
 * routes and the seed adapters it serves. The one composition its Lambda entry and the embedded
 * default both use.
 */
import type { Answering } from '../core/answer/answer';
import type { ConversationStore } from '../core/answer/conversations';
import type { Search } from '../core/retrieval/search';
import type { HttpHandlerDeps } from '../http/http-handler';
import { makeSeedSearchHandler } from '../seeds/search';
import { answerRouteHandlers } from './handler';
import { makeLexyBrainRagHandler } from './lexybrain';

export function ragAnswerRoutes(
  deps: HttpHandlerDeps & {
    answering: Answering;
    conversations: ConversationStore;
    search: Pick<Search, 'search'>;
    /** `LEXYBRAIN_RAG_ENABLED`. */
    lexybrainRagEnabled: boolean;
  },
) {
  return {
    ...answerRouteHandlers(deps),
    'lexybrain-rag': makeLexyBrainRagHandler({ ...deps, enabled: deps.lexybrainRagEnabled }),
    'api-search': makeSeedSearchHandler(deps),
  };
}
