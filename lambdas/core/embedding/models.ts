/**
 * The embedding models an index knows: the live one (whose vectors search reads) and, during a
 * switch, the target being re-embedded into a second column beside it
 * (docs/decisions/0148-switching-embedding-models.md).
 */

/** A model as the index records it: its id, dimension and non-secret settings. */
export interface ModelRecord {
  readonly modelId: string;
  readonly dimension: number;
  /** What a process needs to build the embedder again (adapters/embeddings/embedder-spec.ts). */
  readonly settings: unknown;
}

export interface RecordedModels {
  /** Null on a fresh index (no model recorded yet). */
  readonly live: ModelRecord | null;
  /** The model being switched to; null when no switch is in progress. */
  readonly target: (ModelRecord & { readonly startedAt: Date }) | null;
}

/** Reads what the index records. */
export interface ModelRegistry {
  models(): Promise<RecordedModels>;
}
