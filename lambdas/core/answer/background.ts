/**
 * A query's background: how similar its embedding is to text that has nothing to do with it. An
 * embedding model's cosines live on a scale of their own (one model gives a question and its
 * answer 0.35, another 0.8), but every model gives a question a lower similarity to unrelated
 * sentences than to its answer. Measuring a chunk's cosine in standard deviations above the
 * query's own background makes the gate's thresholds mean the same thing across models, so a
 * model without a calibration still gets a meaningful gate (docs/confidence.md,
 * docs/decisions/0133-background-normalised-confidence.md).
 *
 * The background is a fixed set of short sentences on everyday topics, embedded once per
 * process with the model in use; each query then costs one dot product per sentence.
 */
import type { Embedder } from '../ports';

/** Sentences on everyday topics, none about a company's policies, products or projects. */
export const BACKGROUND_TEXTS: readonly string[] = [
  'The river froze early that winter and the children skated on it every afternoon.',
  'Add the onions to the pan and fry them slowly until they are golden brown.',
  'The striker scored twice in the second half and the crowd sang until the final whistle.',
  'Jupiter has dozens of moons, and the largest of them is bigger than the planet Mercury.',
  'The cathedral was built over two centuries and its towers were finished in 1880.',
  'Tomatoes need full sun, regular watering and a stake to support the heavy stems.',
  'The orchestra tuned their instruments while the audience found their seats.',
  'Heavy rain is expected along the coast tonight, with strong winds from the west.',
  'The fox slipped through the hedge and disappeared into the dark field.',
  'Her grandmother taught her to knit scarves from old wool jumpers.',
  'The treaty ended the war and redrew the borders of several kingdoms.',
  'Photosynthesis turns sunlight, water and carbon dioxide into sugar and oxygen.',
  'The marathon route follows the old harbour and ends in the city park.',
  'He painted the little boat blue and named it after his daughter.',
  'Volcanic ash from the eruption grounded flights across the region for a week.',
  'The novel follows three sisters who inherit a crumbling house by the sea.',
  'Bake the bread for forty minutes, until the crust sounds hollow when tapped.',
  'Penguins huddle together to survive the long Antarctic night.',
  'The chess champion sacrificed her queen and won the game ten moves later.',
  'Ancient Romans built aqueducts to carry fresh water into their cities.',
  'The museum reopened with a new wing dedicated to medieval tapestries.',
  'A rainbow appears when sunlight is refracted by raindrops in the air.',
  'The band recorded their first album in a barn outside the village.',
  'Bees communicate the location of flowers with a dance inside the hive.',
  'The mountain pass is closed in winter because of the risk of avalanches.',
  'She trained for years before swimming across the channel in fourteen hours.',
  'The poet wrote most of his sonnets by candlelight in a small attic room.',
  'Coral reefs are home to a quarter of all the species that live in the sea.',
  'The old steam train still runs on Sundays through the valley.',
  'The detective noticed that the clock in the library had stopped at midnight.',
  'Owls can turn their heads much further than most other birds.',
  'The farmers market sells honey, cheese and apples every Saturday morning.',
  'Earthquakes happen when plates of the earth crust suddenly slip past each other.',
  'The kite rose above the dunes and danced in the strong sea breeze.',
  'In the fairy tale the youngest son outwits the giant and wins the princess.',
  'Lightning strikes the tall oak on the hill almost every summer.',
  'The soup tastes better the next day, when the spices have had time to blend.',
  'Whales migrate thousands of kilometres between their feeding and breeding grounds.',
  'The choir sang carols in the market square on the longest night of the year.',
  'Ice cores from the glacier record the climate of the last hundred thousand years.',
];

/** Mean and standard deviation of a query's cosine to the background sentences. */
export interface BackgroundStats {
  readonly mean: number;
  readonly sd: number;
}

export interface Background {
  /** The query's background; rejects when the background sentences could not be embedded. */
  of(queryEmbedding: readonly number[]): Promise<BackgroundStats>;
}

function dot(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * (b[i] ?? 0);
  return s;
}

/** Statistics of a query's cosines to the background vectors (normalised vectors: dot = cosine). */
export function backgroundStats(
  queryEmbedding: readonly number[],
  vectors: readonly (readonly number[])[],
): BackgroundStats {
  const cos = vectors.map((v) => dot(queryEmbedding, v));
  const mean = cos.reduce((s, x) => s + x, 0) / Math.max(cos.length, 1);
  const variance = cos.reduce((s, x) => s + (x - mean) ** 2, 0) / Math.max(cos.length - 1, 1);
  return { mean, sd: Math.sqrt(variance) };
}

/**
 * The background of an embedder, embedded on first use and kept for the life of the process. If
 * embedding it fails, `of` rejects and the next query tries again.
 */
export function createBackground(
  embedder: Pick<Embedder, 'embed'>,
  texts: readonly string[] = BACKGROUND_TEXTS,
): Background {
  let vectors: Promise<number[][]> | null = null;
  return {
    async of(queryEmbedding) {
      vectors ??= embedder.embed(texts);
      const pending = vectors;
      try {
        return backgroundStats(queryEmbedding, await pending);
      } catch (err) {
        if (vectors === pending) vectors = null;
        throw err;
      }
    },
  };
}
