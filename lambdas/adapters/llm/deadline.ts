/**
 * Shared by the LLM adapters: a per-call deadline tied to the caller's abort signal, and error
 * description that works for errors from any realm.
 */

/** One call's deadline, tied to the caller's signal. */
export interface Deadline {
  /** Aborted when the deadline passes, the caller aborts, or the call is disposed. */
  readonly signal: AbortSignal;
  /** What aborted the call, if anything did before `dispose`. */
  firedBy(): 'timeout' | 'caller' | undefined;
  /** Settles as `promise` does, or rejects as soon as the signal aborts. */
  race<T>(promise: Promise<T>): Promise<T>;
  /** Stops the timer and aborts whatever is still in flight. */
  dispose(): void;
}

export function startDeadline(timeoutMs: number, callerSignal: AbortSignal | undefined): Deadline {
  const controller = new AbortController();
  let firedBy: 'timeout' | 'caller' | undefined;
  const fire = (why: 'timeout' | 'caller', reason: unknown): void => {
    if (controller.signal.aborted) return;
    firedBy = why;
    controller.abort(reason);
  };
  const timer = setTimeout(
    () => fire('timeout', new DOMException(`Timed out after ${timeoutMs} ms`, 'TimeoutError')),
    timeoutMs,
  );
  const onCallerAbort = (): void => fire('caller', callerSignal?.reason);
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  const { signal } = controller;

  return {
    signal,
    firedBy: () => firedBy,
    race<T>(promise: Promise<T>) {
      return new Promise<T>((resolve, reject) => {
        const onAbort = (): void => reject(abortReason(signal));
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
        promise.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, reject);
      });
    },
    dispose() {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
      controller.abort();
    },
  };
}

/** The abort reason as an Error (callers may abort with any value). */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return typeof reason === 'object' && reason !== null && 'message' in reason
    ? (reason as Error)
    : new DOMException(`The call was aborted: ${String(reason)}`, 'AbortError');
}

/** Name, message and cause of anything thrown; duck-typed, as errors may come from another realm. */
export function describeError(err: unknown): { name: string; message: string; cause: unknown } {
  if (typeof err === 'object' && err !== null && 'message' in err) {
    const { name, message, cause } = err as { name?: unknown; message?: unknown; cause?: unknown };
    return {
      name: typeof name === 'string' ? name : 'Error',
      message: typeof message === 'string' ? message : '',
      cause,
    };
  }
  return { name: 'Error', message: String(err), cause: undefined };
}
