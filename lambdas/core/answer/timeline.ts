/**
 * The answer pipeline's record of its steps: each completed step's name, duration and, for a
 * `debug` request, what it found. It is `debug.steps` of an answer, `steps` of a preparation and
 * the seeds' agent steps.
 */

export interface PipelineStep {
  readonly name: string;
  readonly ms: number;
  readonly detail: unknown;
}

export interface Timeline {
  /** The steps recorded so far, in the order they completed. */
  readonly steps: readonly PipelineStep[];
  /**
   * Runs `fn` as the step `name` and records it with its duration (and `detail` of its result
   * when `debug`). A step that throws is not recorded.
   */
  step<T>(name: string, fn: () => Promise<T>, detail?: (result: T) => unknown): Promise<T>;
  /** Records steps that ran elsewhere (the preparation's, in the answer's record). */
  append(steps: readonly PipelineStep[]): void;
}

export function createTimeline(debug: boolean): Timeline {
  const steps: PipelineStep[] = [];
  return {
    steps,
    async step(name, fn, detail = () => undefined) {
      const t0 = performance.now();
      const result = await fn();
      steps.push({
        name,
        ms: Math.round((performance.now() - t0) * 10) / 10,
        detail: debug ? detail(result) : undefined,
      });
      return result;
    },
    append(more) {
      steps.push(...more);
    },
  };
}
