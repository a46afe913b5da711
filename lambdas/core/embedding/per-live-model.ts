/**
 * The answer pipeline of the index's live model. The confidence gate's calibration is resolved
 * per embedding model when the pipeline is made (core/answer/calibrations.ts); after a model
 * switch completes, the next answer gets a pipeline made for the new model (its calibration, or
 * the uncalibrated gate when it has none), without a restart.
 */
import type { Answering } from '../answer/answer';
import type { Embedder } from '../ports';

/** Delegates to `make()`'s pipeline, made again whenever the live model changes. */
export function answeringPerLiveModel(embedder: Embedder, make: () => Answering): Answering {
  let made: { modelId: string; answering: Answering } | undefined;
  async function current(): Promise<Answering> {
    // The live embedder re-reads the recorded model here (cached while no switch runs).
    const { modelId } = (await embedder.current?.()) ?? embedder;
    if (made?.modelId !== modelId) made = { modelId, answering: make() };
    return made.answering;
  }
  return {
    answer: async (...args) => (await current()).answer(...args),
    prepare: async (...args) => (await current()).prepare(...args),
  };
}
