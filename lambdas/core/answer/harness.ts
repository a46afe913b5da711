/**
 * The test harness: for a tenant admin, what the answer pipeline prepares for a question in
 * their tenant (the retrieved chunks with their scores, the context blocks with their sources,
 * the evidence an answer can cite, the confidence gate and the prompt), without calling the LLM
 * and without storing anything. It is `Answering.prepare`, the step the answer route generates
 * from, so what it shows is what an answer would be made of. Served by POST /api/admin/harness
 * and `groundwork harness`.
 */
import { assertAdmin, type AdminCaller } from '../admin/admin';
import type { Answering, PrepareRequest, PreparedAnswer } from './answer';

export interface Harness {
  run(caller: AdminCaller, request: PrepareRequest): Promise<PreparedAnswer>;
}

export function createHarness(deps: { answering: Pick<Answering, 'prepare'> }): Harness {
  return {
    async run(caller, request) {
      assertAdmin(caller);
      return deps.answering.prepare(caller, request);
    },
  };
}
