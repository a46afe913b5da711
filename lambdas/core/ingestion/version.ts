/**
 * The version of what ingestion makes of a file: the text the parsers extract from it (headings
 * marked, tables as rows, running lines dropped), the chunks cut from that text and the text each
 * chunk is embedded as. Every document records the version that indexed it
 * (`documents.ingestion_version`). A document indexed by an older version is indexed again the
 * next time its object is synced, even with the same bytes (a re-upload, `groundwork ingest` of
 * its folder), and the embedded default announces such documents again at start, so an upgrade
 * reaches the documents indexed before it.
 *
 * Raise it with any change to those outputs. `test/unit/ingestion-version.test.ts` fingerprints
 * them over the repository's sample documents and fails until the version and its fingerprint
 * are raised together.
 */
export const INGESTION_VERSION = 3;
