/**
 * Maps a document's ISO 639-1 language to a PostgreSQL text search configuration. The result is
 * always one of a fixed list and is still passed as a `$n::regconfig` parameter.
 */
const CONFIGS: Readonly<Record<string, string>> = {
  ar: 'arabic',
  ca: 'catalan',
  da: 'danish',
  de: 'german',
  el: 'greek',
  en: 'english',
  es: 'spanish',
  eu: 'basque',
  fi: 'finnish',
  fr: 'french',
  ga: 'irish',
  hi: 'hindi',
  hu: 'hungarian',
  hy: 'armenian',
  id: 'indonesian',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  nl: 'dutch',
  no: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  yi: 'yiddish',
};

/** `english` for `en` or `en-GB`; `simple` (no stemming) for languages PostgreSQL has no stemmer for. */
export function textSearchConfig(language: string): string {
  const base = language.toLowerCase().split(/[-_]/)[0] ?? '';
  return CONFIGS[base] ?? 'simple';
}
