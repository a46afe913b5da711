/**
 * The ingestion version (lambdas/core/ingestion/version.ts) is raised whenever what ingestion makes
 * of a file changes: documents indexed by an older version are indexed again, and only then. This
 * fingerprints that output (each parser's text and title, the chunks cut from it at the default
 * size and at a small one, and the text each chunk is embedded as) over the repository's sample
 * documents and documents of every other format built here. When it fails, the output changed:
 * raise INGESTION_VERSION and record the new fingerprint under it below.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { createDocumentParser } from '../../lambdas/adapters/parsers';
import { createTokenCounter } from '../../lambdas/adapters/tokenizer/gpt-token-counter';
import { chunkEmbeddingInput } from '../../lambdas/core/ingestion/chunk-embedding';
import { chunkText } from '../../lambdas/core/ingestion/chunker';
import { DEFAULT_INGESTION_SETTINGS } from '../../lambdas/core/ingestion/ingest';
import { INGESTION_VERSION } from '../../lambdas/core/ingestion/version';
import { toStorableText } from '../../lambdas/core/text/storable';
import { buildDocx, buildPdf } from '../support/documents';

/** The fingerprint of each version's output; a new version adds its own line. */
const FINGERPRINTS: Readonly<Record<number, string>> = {
  1: 'bd5b596186d53b67077d74fbe8149e1359f7f2acb40045924f5590e1fd866173',
  // A PDF whose recorded title is a file name or a placeholder is called by its first line.
  2: '9452bcfc77edfa52940b7a142dc7db0eb3a078c5218246b641cc671edbbb0988',
  // Markdown: an <h1> or an opening heading names the document, linked images (badges) and tags
  // over several lines go, bold over a line break loses its markers.
  3: 'bf07700039bca428d9681ca18746518fe0012d583db0b397859ea73e55dc2404',
};

const ROOT = path.resolve(__dirname, '../..');

const HTML = `<!doctype html><html><head><title>Field guide</title></head><body>
<nav><a href="/">Home</a></nav>
<h1>Field guide</h1><p>Tents are <b>pitched</b> before dusk.</p>
<h2>Stoves</h2><ul><li>Gas canisters stay outside.</li><li></li><li>Spare parts: 3 seals.</li></ul>
<table><tr><th>Item</th><th>Weight</th></tr><tr><td>Tent</td><td>2.1 kg</td></tr></table>
<pre># not a heading
make camp</pre>
<script>ignored()</script></body></html>`;

/** A project README as they are written: an HTML header, badges, a tag and bold over two lines. */
const README = `<div align="center">
  <h1>tarn</h1>
  <a href="https://ci.example/tarn"><img src="https://ci.example/tarn/badge.svg
?branch=main" alt="CI status"></a>
</div>

[![NPM Version][npm-image]][npm-url]

Tarn backs up folders to S3. **Snapshots are
encrypted** before they leave the machine.

## Install

\`\`\`sh
npm install -g tarn
\`\`\`

[npm-url]: https://npmjs.org/package/tarn
`;

/** The sample handbook, the natural question sets' documents and one of every other format. */
async function documents(): Promise<{ key: string; bytes: Uint8Array }[]> {
  const out: { key: string; bytes: Uint8Array }[] = [];
  const folders = [
    'samples/handbook',
    ...(await readdir(path.join(ROOT, 'eval/natural'), { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => `eval/natural/${d.name}/docs`),
  ];
  for (const folder of folders) {
    const names = await readdir(path.join(ROOT, folder)).catch(() => [] as string[]);
    for (const name of names.sort())
      out.push({
        key: `${folder}/${name}`,
        bytes: new Uint8Array(await readFile(path.join(ROOT, folder, name))),
      });
  }
  out.push({ key: 'built/page.html', bytes: new Uint8Array(Buffer.from(HTML, 'utf8')) });
  out.push({ key: 'built/guide.docx', bytes: await buildDocx({ title: 'Onboarding' }) });
  out.push({ key: 'built/README.md', bytes: new Uint8Array(Buffer.from(README, 'utf8')) });
  // A PDF whose recorded title is its file name, as print drivers record it: called by its first line.
  out.push({
    key: 'built/export.pdf',
    bytes: buildPdf({
      title: 'export.pdf',
      lines: ['Bin collections', 'Grey bins are emptied every two weeks.'],
    }),
  });
  out.push({
    key: 'built/manual.pdf',
    bytes: buildPdf({
      lines: [],
      layout: [
        { text: 'Getting started', size: 20, down: 0 },
        { text: 'Fill the tank with fresh water before the first use.', size: 11, down: 30 },
        { text: 'Descale the machine every three months.', size: 11, down: 14 },
        { text: 'Cleaning', size: 20, down: 30 },
        { text: 'The drip tray is dishwasher safe.', size: 11, down: 30 },
      ],
    }),
  });
  return out;
}

async function fingerprint(): Promise<{ digest: string; documents: number }> {
  const parser = createDocumentParser();
  const tokens = createTokenCounter();
  const hash = createHash('sha256');
  const docs = await documents();
  for (const { key, bytes } of docs) {
    const parsed = await parser.parse(bytes, { key });
    const text = toStorableText(parsed.text);
    const sizes = [DEFAULT_INGESTION_SETTINGS.chunking, { targetTokens: 64, overlapTokens: 16 }];
    const chunks = sizes.map((size) =>
      chunkText(text, size, tokens).map((c) => [
        c.start,
        c.end,
        c.tokenCount,
        chunkEmbeddingInput(DEFAULT_INGESTION_SETTINGS, parsed.title, c.text),
      ]),
    );
    hash.update(JSON.stringify({ key, format: parsed.format, title: parsed.title, text, chunks }));
  }
  return { digest: hash.digest('hex'), documents: docs.length };
}

describe('the ingestion version', () => {
  it('is raised, with a fingerprint of its own, whenever what ingestion makes of a file changes', async () => {
    const { digest, documents: count } = await fingerprint();
    expect(count).toBeGreaterThan(40);
    const latest = Math.max(...Object.keys(FINGERPRINTS).map(Number));
    expect(latest).toBe(INGESTION_VERSION);
    if (FINGERPRINTS[INGESTION_VERSION] !== digest) {
      throw new Error(
        `What ingestion makes of a file changed (fingerprint ${digest}): raise INGESTION_VERSION ` +
          '(lambdas/core/ingestion/version.ts) and record the fingerprint under the new version ' +
          'in test/unit/ingestion-version.test.ts, so that documents indexed before are indexed again.',
      );
    }
  });
});
