/**
 * Files shaped to make a parser or the chunker rescan what follows each of many starting points
 * (a pattern that fails only at the end of a long run). Each took from tens of seconds to hours
 * at a megabyte before the patterns were written so that a run is matched from its start only;
 * now each takes a fraction of a second. They run in a child process with a deadline far above
 * that, so that a pattern that turns quadratic again fails this test instead of stalling the
 * suite (a regular expression blocks the event loop, so Jest's own timeout cannot fire).
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const MB = 1_000_000;

/** A file: `prefix`, then `unit` `repeat` times, then `suffix`, named `key`. */
interface Shape {
  readonly name: string;
  readonly key: string;
  readonly prefix?: string;
  readonly unit: string;
  readonly repeat: number;
  readonly suffix?: string;
}

const SHAPES: readonly Shape[] = [
  { name: 'blanks inside a line', key: 'a.txt', prefix: 'a', unit: ' ', repeat: MB, suffix: 'b' },
  {
    name: 'em spaces ending a line',
    key: 'b.txt',
    prefix: 'a\n',
    unit: '\u2003',
    repeat: MB / 4,
    suffix: 'b',
  },
  {
    name: 'lines of em spaces',
    key: 'c.txt',
    prefix: 'a',
    unit: '\n\u2003',
    repeat: MB / 4,
    suffix: 'b',
  },
  { name: 'Markdown link openers', key: 'd.md', unit: '[', repeat: MB },
  { name: 'Markdown image openers', key: 'e.md', unit: '![', repeat: MB / 2 },
  { name: 'Markdown autolink openers', key: 'f.md', unit: '<', repeat: MB },
  { name: 'Markdown comment openers', key: 'g.md', unit: '<!--', repeat: MB / 4 },
  { name: 'Markdown strikethrough openers', key: 'h.md', unit: '~~a ', repeat: MB / 4 },
  { name: 'Markdown blanks before text', key: 'i.md', unit: ' ', repeat: MB, suffix: 'x' },
  {
    name: 'Markdown blanks inside a heading',
    key: 'o.md',
    prefix: '# a',
    unit: ' ',
    repeat: MB,
    suffix: 'b',
  },
  {
    name: 'Markdown blanks inside a quoted heading',
    key: 'p.md',
    prefix: '> ## a',
    unit: '\t',
    repeat: MB,
    suffix: 'b #',
  },
  {
    name: 'Markdown blanks inside a front matter title',
    key: 'q.md',
    prefix: '---\ntitle: a',
    unit: ' ',
    repeat: MB,
    suffix: 'b\n---\nBody.',
  },
  { name: 'HTML doctype openers', key: 'j.html', unit: '<!doctype', repeat: MB / 9 },
  { name: 'HTML XML declaration openers', key: 'k.html', unit: '<?xml', repeat: MB / 5 },
  {
    name: 'HTML comment openers',
    key: 'l.html',
    prefix: '<p>kept</p>-->',
    unit: '<!--',
    repeat: MB / 4,
  },
  {
    name: 'HTML CDATA openers',
    key: 'm.html',
    prefix: '<p>kept</p>]]>',
    unit: '<![CDATA[',
    repeat: MB / 9,
  },
  {
    name: 'HTML preformatted line breaks',
    key: 'n.html',
    prefix: '<pre>',
    unit: '\n',
    repeat: MB,
    suffix: 'x</pre>',
  },
];

interface Outcome {
  readonly name: string;
  readonly text?: { readonly length: number; readonly start: string; readonly end: string };
  readonly chunks?: number;
  readonly tiled?: boolean;
  readonly error?: string;
}

const CHILD_SCRIPT = `
const { createDocumentParser } = require('./lambdas/adapters/parsers');
const { chunkText } = require('./lambdas/core/ingestion/chunker');
const { createTokenCounter } = require('./lambdas/adapters/tokenizer/gpt-token-counter');
let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', async () => {
  const parser = createDocumentParser();
  const tokens = createTokenCounter();
  const out = [];
  for (const s of JSON.parse(input)) {
    const bytes = Buffer.from((s.prefix ?? '') + s.unit.repeat(s.repeat) + (s.suffix ?? ''), 'utf8');
    try {
      const { text } = await parser.parse(new Uint8Array(bytes), { key: s.key });
      const chunks = chunkText(text, { targetTokens: 512, overlapTokens: 128 }, tokens);
      out.push({
        name: s.name,
        text: { length: text.length, start: text.slice(0, 12), end: text.slice(-12) },
        chunks: chunks.length,
        tiled: chunks[0].start === 0 && chunks[chunks.length - 1].end === text.length,
      });
    } catch (e) {
      out.push({ name: s.name, error: String(e && e.message) });
    }
  }
  process.stdout.write(JSON.stringify(out));
});
`;

describe('hostile text', () => {
  let outcomes: Map<string, Outcome>;

  beforeAll(async () => {
    const child = promisify(execFile)(
      process.execPath,
      ['--require', 'tsx/cjs', '-e', CHILD_SCRIPT],
      {
        cwd: REPO_ROOT,
        timeout: 120_000,
        maxBuffer: 1024 * 1024,
      },
    );
    child.child.stdin?.end(JSON.stringify(SHAPES));
    const { stdout } = await child;
    outcomes = new Map((JSON.parse(stdout) as Outcome[]).map((o) => [o.name, o]));
  }, 150_000);

  it.each(SHAPES.map((s) => [s.name]))('%s: parsed and chunked whole', (name) => {
    const outcome = outcomes.get(name);
    expect(outcome?.error).toBeUndefined();
    expect(outcome?.tiled).toBe(true);
  });

  it('keeps the text of each file', () => {
    const text = (name: string) => outcomes.get(name)?.text;
    expect(text('blanks inside a line')?.length).toBe(MB + 2);
    expect(text('em spaces ending a line')?.length).toBe(MB / 4 + 3);
    expect(text('lines of em spaces')?.length).toBe(MB / 2 + 2);
    expect(text('Markdown link openers')?.length).toBe(MB);
    expect(text('Markdown image openers')?.length).toBe(MB);
    expect(text('Markdown autolink openers')?.length).toBe(MB);
    expect(text('Markdown comment openers')?.length).toBe(MB);
    expect(text('Markdown strikethrough openers')?.end).toBe(' ~~a ~~a ~~a');
    expect(text('Markdown blanks before text')).toEqual({ length: 1, start: 'x', end: 'x' });
    expect(text('HTML comment openers')?.start).toBe('kept\n\n--><!-');
    expect(text('HTML comment openers')?.end).toBe('<!--<!--<!--');
    expect(text('HTML CDATA openers')?.start).toBe('kept\n\n]]><![');
    expect(text('HTML preformatted line breaks')).toEqual({ length: 1, start: 'x', end: 'x' });
  });
});
