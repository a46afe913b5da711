/**
 * The synthetic corpus of the search benchmark, generated from a seed so that every run (and
 * every machine) sees the same data and the same queries.
 *
 * Vectors: a three-level Gaussian mixture on the unit sphere of 512 dimensions (the local model's;
 * `BENCH_SEARCH_DIMENSIONS` sets another, 1,024 for Titan v2 or Cohere Embed v3), chosen so that
 * similarities look like those of a sentence-embedding model rather than random noise.
 *  - 50 topic centres, uniform on the sphere (independent Gaussian components, normalised);
 *  - 20 subtopics per topic (1,000 clusters): topic centre + isotropic noise of norm 1.0,
 *    normalised (a subtopic is at cosine ~0.7 to its topic, ~0.5 to a sibling subtopic);
 *  - each document picks one subtopic uniformly; its centre is the subtopic centre + noise of
 *    norm 0.6, normalised; each of its chunks is the document centre + noise of norm 0.6,
 *    normalised. Measured: chunks of one document are at cosine ~0.73, of one subtopic ~0.54,
 *    across sibling subtopics ~0.27 and across topics ~0;
 *  - a query is a subtopic centre + noise of norm 0.6, normalised: near a cluster centre (cosine
 *    ~0.63 to that cluster's chunks), never equal to a stored vector.
 * Noise "of norm r" is r / sqrt(dimension) per component, so its expected length is r.
 *
 * Text: pseudo-words (2-4 consonant-vowel syllables, so no English stop words) with a global
 * Zipf law (exponent 1) over a 20,000-word vocabulary, mixed with topic words (300 per topic)
 * and subtopic words (30 per subtopic), each list Zipf-distributed too. A chunk holds 150-250
 * words (75% global, 20% topic, 5% subtopic), about the 512 cl100k tokens the chunker targets;
 * a document title is 3 words. A query text is 3-8 words (40% global, 40% topic, 20% subtopic),
 * so the keyword arm both matches many chunks (common words) and ranks topical ones first.
 * No pseudo-word is an English stop word, so the head of the Zipf law (mostly stop words in
 * English, removed by the `english` configuration) is indexed and matched here: the keyword arm
 * matches more chunks per query than it would on English prose.
 *
 * Tenants: documents are assigned round-robin by index: 1 in 100 to the 1% tenant, 10 in 100
 * to the 10% tenant, 1 in 1,000 to the 0.1% tenant and the rest (88.9%) to the big tenant,
 * independently of their topic (the hard case for filtered vector search: the filter does not
 * follow the vector space).
 */
import { createPrng, createZipf, type Prng } from '../test/support/prng';

/** The vectors' dimension: `BENCH_SEARCH_DIMENSIONS`, else the local model's 512. */
function benchDimension(): number {
  const raw = process.env.BENCH_SEARCH_DIMENSIONS;
  if (raw === undefined || raw === '') return 512;
  const dimension = Number(raw);
  // pgvector indexes `vector` columns of at most 2,000 dimensions with HNSW.
  if (!Number.isInteger(dimension) || dimension < 2 || dimension > 2000)
    throw new Error(`BENCH_SEARCH_DIMENSIONS must be a whole number from 2 to 2,000, got ${raw}`);
  return dimension;
}

/** Everything that determines the data; stored with the loaded schema to detect stale data. */
export const GENERATOR = {
  version: 2,
  seed: 'groundwork-bench-search-v1',
  dimension: benchDimension(),
  topics: 50,
  subtopicsPerTopic: 20,
  chunksPerDocument: 5,
  noise: { subtopic: 1.0, document: 0.6, chunk: 0.6, query: 0.6 },
  vocabulary: 20_000,
  zipfExponent: 1,
  topicWords: 300,
  subtopicWords: 30,
  wordsPerChunk: [150, 250],
  wordsPerQuery: [3, 8],
  wordsPerTitle: 3,
  /** Share of words drawn from the global, topic and subtopic lists. */
  textMix: [0.75, 0.2, 0.05],
  queryMix: [0.4, 0.4, 0.2],
} as const;

export const TENANTS = {
  big: 'bench-big',
  tenPercent: 'bench-10pct',
  onePercent: 'bench-1pct',
  tenthPercent: 'bench-0.1pct',
} as const;

/** The tenant of the document with this index (1% / 10% / 0.1% / the rest). */
function tenantOfDocument(index: number): string {
  const r = index % 100;
  if (r === 0) return TENANTS.onePercent;
  if (r <= 10) return TENANTS.tenPercent;
  if (index % 1000 === 999) return TENANTS.tenthPercent;
  return TENANTS.big;
}

interface Subtopic {
  readonly topic: number;
  readonly centre: Float64Array;
  readonly words: readonly string[];
}

/** Cluster centres and vocabularies: everything the chunks and the queries are drawn from. */
export interface World {
  readonly subtopics: readonly Subtopic[];
  readonly vocabulary: readonly string[];
  readonly topicWords: readonly (readonly string[])[];
}

function normalise(v: Float64Array): Float64Array {
  let sum = 0;
  for (let i = 0; i < v.length; i += 1) sum += (v[i] ?? 0) ** 2;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i += 1) v[i] = (v[i] ?? 0) * inv;
  return v;
}

/** `centre` + isotropic Gaussian noise of expected norm `norm`, normalised. */
function around(centre: Float64Array | null, norm: number, rng: Prng): Float64Array {
  const dim = GENERATOR.dimension;
  const sigma = norm / Math.sqrt(dim);
  const v = new Float64Array(dim);
  for (let i = 0; i < dim; i += 1) v[i] = (centre?.[i] ?? 0) + sigma * rng.gaussian();
  return normalise(v);
}

function pseudoWords(count: number, rng: Prng): string[] {
  const consonants = 'bcdfgklmnprstvz';
  const vowels = 'aeiou';
  const seen = new Set<string>();
  while (seen.size < count) {
    let word = '';
    const syllables = 2 + rng.int(3);
    for (let s = 0; s < syllables; s += 1)
      word += consonants[rng.int(consonants.length)]! + vowels[rng.int(vowels.length)]!;
    seen.add(word);
  }
  return [...seen];
}

function pick<T>(list: readonly T[], count: number, from: number, rng: Prng): T[] {
  const out: T[] = [];
  for (let i = 0; i < count; i += 1) out.push(list[from + rng.int(list.length - from)]!);
  return out;
}

/** Builds the world from the generator's seed (a few milliseconds; not stored). */
export function createWorld(): World {
  const rng = createPrng(`${GENERATOR.seed}/world`);
  const vocabulary = pseudoWords(GENERATOR.vocabulary, rng);
  const topicCentres = Array.from({ length: GENERATOR.topics }, () => around(null, 1, rng));
  // Topic and subtopic words avoid the most frequent global words, as domain vocabulary does.
  const topicWords = topicCentres.map(() => pick(vocabulary, GENERATOR.topicWords, 200, rng));
  const subtopics: Subtopic[] = [];
  topicCentres.forEach((centre, topic) => {
    for (let s = 0; s < GENERATOR.subtopicsPerTopic; s += 1) {
      subtopics.push({
        topic,
        centre: around(centre, GENERATOR.noise.subtopic, rng),
        words: pick(vocabulary, GENERATOR.subtopicWords, 1000, rng),
      });
    }
  });
  return { subtopics, vocabulary, topicWords };
}

const globalZipf = createZipf(GENERATOR.vocabulary, GENERATOR.zipfExponent);
const topicZipf = createZipf(GENERATOR.topicWords, GENERATOR.zipfExponent);
const subtopicZipf = createZipf(GENERATOR.subtopicWords, GENERATOR.zipfExponent);

function words(
  world: World,
  subtopic: Subtopic,
  count: number,
  mix: readonly number[],
  rng: Prng,
): string[] {
  const [global = 1, topic = 0] = mix;
  const out: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const u = rng.next();
    if (u < global) out.push(world.vocabulary[globalZipf(rng)]!);
    else if (u < global + topic) out.push(world.topicWords[subtopic.topic]![topicZipf(rng)]!);
    else out.push(subtopic.words[subtopicZipf(rng)]!);
  }
  return out;
}

function between([min, max]: readonly [number, number], rng: Prng): number {
  return min + rng.int(max - min + 1);
}

/** pgvector's text form with 6 decimals (float4 keeps about 7 significant digits anyway). */
function vectorLiteral(v: ArrayLike<number>): string {
  const parts = new Array<string>(v.length);
  for (let i = 0; i < v.length; i += 1) parts[i] = (Math.round((v[i] ?? 0) * 1e6) / 1e6).toString();
  return `[${parts.join(',')}]`;
}

function uuid(rng: Prng): string {
  const hex = Array.from({ length: 4 }, () =>
    rng
      .int(2 ** 32)
      .toString(16)
      .padStart(8, '0'),
  ).join('');
  // Version 4, RFC 4122 variant, so the value is a well-formed random-style UUID.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface DocumentBatch {
  readonly documents: { id: string; tenantId: string; sourceUri: string; title: string }[];
  readonly chunks: {
    documentId: string;
    tenantId: string;
    index: number;
    text: string;
    title: string;
    tokenCount: number;
    embedding: string;
  }[];
}

/**
 * Generates documents `[from, to)`. Each document has its own random stream, derived from its
 * index, so a batch can be generated without generating the ones before it.
 */
export function generateDocuments(world: World, from: number, to: number): DocumentBatch {
  const batch: DocumentBatch = { documents: [], chunks: [] };
  for (let d = from; d < to; d += 1) {
    const rng = createPrng(`${GENERATOR.seed}/document/${d}`);
    const subtopic = world.subtopics[rng.int(world.subtopics.length)]!;
    const centre = around(subtopic.centre, GENERATOR.noise.document, rng);
    const id = uuid(rng);
    const tenantId = tenantOfDocument(d);
    const title = words(world, subtopic, GENERATOR.wordsPerTitle, GENERATOR.queryMix, rng).join(
      ' ',
    );
    batch.documents.push({ id, tenantId, sourceUri: `s3://bench/${tenantId}/doc-${d}.txt`, title });
    for (let c = 0; c < GENERATOR.chunksPerDocument; c += 1) {
      const text = words(
        world,
        subtopic,
        between(GENERATOR.wordsPerChunk, rng),
        GENERATOR.textMix,
        rng,
      ).join(' ');
      batch.chunks.push({
        documentId: id,
        tenantId,
        index: c,
        text,
        title,
        // Pseudo-words are 2-4 syllables: about 2.5 cl100k tokens each.
        tokenCount: Math.round(text.split(' ').length * 2.5),
        embedding: vectorLiteral(around(centre, GENERATOR.noise.chunk, rng)),
      });
    }
  }
  return batch;
}

export interface BenchQuery {
  readonly subtopic: number;
  readonly embedding: number[];
  readonly text: string;
}

/** `count` queries near random cluster centres, from the named stream. */
export function generateQueries(world: World, stream: string, count: number): BenchQuery[] {
  const rng = createPrng(`${GENERATOR.seed}/queries/${stream}`);
  return Array.from({ length: count }, () => {
    const subtopic = rng.int(world.subtopics.length);
    const s = world.subtopics[subtopic]!;
    // Rounded like the stored vectors, so the query sent is exactly the one measured.
    const embedding = Array.from(
      around(s.centre, GENERATOR.noise.query, rng),
      (x) => Math.round(x * 1e6) / 1e6,
    );
    const text = words(
      world,
      s,
      between(GENERATOR.wordsPerQuery, rng),
      GENERATOR.queryMix,
      rng,
    ).join(' ');
    return { subtopic, embedding, text };
  });
}
