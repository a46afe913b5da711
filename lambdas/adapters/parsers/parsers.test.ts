/**
 * Parser tests on real files built here (nothing is downloaded): a hand-written PDF with a
 * correct xref table, a DOCX zipped with jszip, HTML, Markdown and text, and broken files.
 *
 * PDF cases run in a child Node process: unpdf loads its PDF.js bundle with a native dynamic
 * import(), which jest's CommonJS sandbox cannot execute without --experimental-vm-modules.
 * The child runs the same TypeScript through tsx, as `local/` and a bundled Lambda would.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { promisify } from 'node:util';
import iconv from 'iconv-lite';
import JSZip from 'jszip';
import { DocumentRejectedError, type ParsedDocument } from '../../core/ingestion/types';
import { sentences } from '../../core/answer/text';
import { buildDocx, buildPdf, zippedMarkup } from '../../../test/support/documents';
import { createDocumentParser } from './index';
import { MAX_DOCX_ELEMENTS } from './docx';
import { MAX_HTML_ELEMENTS } from './html';
import { MAX_PDF_PAGES, pageTexts, withoutRunningLines, type PdfPages } from './pdf';

const parser = createDocumentParser();
const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));

/** The rejection a parse ends with (fails the test if it resolves or throws something else). */
async function rejection(
  bytes: Uint8Array,
  hint: { key: string; contentType?: string },
): Promise<DocumentRejectedError> {
  const error: unknown = await parser.parse(bytes, hint).then(
    () => new Error('expected the parse to be rejected'),
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(DocumentRejectedError);
  return error as DocumentRejectedError;
}

// ---------------------------------------------------------------------------------------------
// Plain text

describe('text', () => {
  it('decodes UTF-8, drops the BOM, turns CRLF into LF and collapses blank lines', async () => {
    const bytes = new Uint8Array([
      0xef,
      0xbb,
      0xbf,
      ...utf8('Caf\u00e9 menu\r\nSoup of the day   \r\n\r\n\r\n\r\n\r\nBread\r\n'),
    ]);
    await expect(parser.parse(bytes, { key: 'tenant/notes.txt' })).resolves.toEqual({
      format: 'text',
      text: 'Caf\u00e9 menu\nSoup of the day\n\nBread',
      title: 'Caf\u00e9 menu',
    });
  });

  it('is called by its first line when that line is a title over the next, else by nothing', async () => {
    const titled = await parser.parse(
      utf8(
        '\n\nCritical Results Telephoning Policy\n\nA critical result is telephoned within 30 minutes.\n',
      ),
      { key: 'lab/LAB-CR-01.txt' },
    );
    expect(titled.title).toBe('Critical Results Telephoning Policy');
    for (const text of [
      'Results are telephoned within 30 minutes.\nAfter 18:30 the on-call doctor is called.',
      'Note: results are telephoned.\n\nAfter 18:30 the on-call doctor is called.',
      'One line only',
    ]) {
      const doc = await parser.parse(utf8(text), { key: 'lab/notes.txt' });
      expect(doc.title).toBeUndefined();
    }
    // Markdown and HTML keep their own rules: a first line is not their title.
    const md = await parser.parse(utf8('Intro line\n\nBody text that goes on.'), { key: 'x.md' });
    expect(md.title).toBeUndefined();
  });

  it('decodes UTF-16 text that starts with a byte order mark', async () => {
    const bytes = new Uint8Array([0xff, 0xfe, ...Buffer.from('Hello UTF-16 \u00e9', 'utf16le')]);
    const doc = await parser.parse(bytes, { key: 'a/b.txt' });
    expect(doc.text).toBe('Hello UTF-16 \u00e9');
  });

  it('honours the charset of the content type', async () => {
    const bytes = new Uint8Array(Buffer.from('Caf\u00e9 cr\u00e8me', 'latin1'));
    const doc = await parser.parse(bytes, {
      key: 'menu.txt',
      contentType: 'text/plain; charset=ISO-8859-1',
    });
    expect(doc.text).toBe('Caf\u00e9 cr\u00e8me');
  });

  describe('a legacy encoding with no charset declared', () => {
    const french =
      'Le caf\u00e9 \u00e9tait tr\u00e8s chaud. O\u00f9 est la gare\u00a0? \u00c7a va bien, ' +
      'merci. L\u2019\u00e9l\u00e8ve na\u00efve re\u00e7oit \u201cle pr\u00eat\u201d de 50 \u20ac.';

    it('reads a Latin-1 file as text, not as binary data', async () => {
      const latin1 = 'Le caf\u00e9 \u00e9tait tr\u00e8s chaud. \u00c7a va tr\u00e8s bien, merci.';
      const doc = await parser.parse(new Uint8Array(Buffer.from(latin1, 'latin1')), {
        key: 'notes/menu.txt',
      });
      expect(doc.text).toBe(latin1);
    });

    it('reads Windows-1252 (curly quotes, the euro sign), also when mislabelled UTF-8', async () => {
      const bytes = new Uint8Array(
        [...french].map(
          (c) =>
            ({ '\u2019': 0x92, '\u201c': 0x93, '\u201d': 0x94, '\u20ac': 0x80 })[c] ??
            c.charCodeAt(0),
        ),
      );
      for (const contentType of [undefined, 'text/plain; charset=utf-8']) {
        const doc = await parser.parse(bytes, {
          key: 'letters/loan.txt',
          ...(contentType !== undefined ? { contentType } : {}),
        });
        expect(doc.text).toBe(french);
      }
    });

    it('reads a Latin-1 file with neither extension nor content type as text', async () => {
      const doc = await parser.parse(new Uint8Array(Buffer.from(french.slice(0, 60), 'latin1')), {
        key: 'inbox/README',
        contentType: 'application/octet-stream',
      });
      expect(doc).toMatchObject({ format: 'text', text: french.slice(0, 60) });
    });

    it.each([
      ['shift_jis', '東京の天気は晴れです。明日は雨が降るでしょう。会議は午後三時に始まります。'],
      ['koi8-r', 'Привет, как дела? Сегодня хорошая погода, и мы идём гулять в парк.'],
      ['windows-1251', 'Привет, как дела? Сегодня хорошая погода, и мы идём гулять в парк.'],
    ])('reads a %s file by the encoding chardet detects', async (encoding, text) => {
      const doc = await parser.parse(new Uint8Array(iconv.encode(text, encoding)), {
        key: `legacy/${encoding}.txt`,
      });
      expect(doc.text).toBe(text);
    });

    it('still refuses random bytes named .txt', async () => {
      const error = await rejection(new Uint8Array(randomBytes(8192)), { key: 'x/noise.txt' });
      expect(error.reasonCode).toBe('unsupported_format');
    });
  });

  it('treats .csv, .json and .log as text', async () => {
    for (const key of ['data.csv', 'data.json', 'server.LOG']) {
      await expect(parser.parse(utf8('a,b\n1,2'), { key })).resolves.toMatchObject({
        format: 'text',
        text: 'a,b\n1,2',
      });
    }
  });

  it('rejects binary data named .txt as unsupported', async () => {
    const png = new Uint8Array([
      0x89,
      0x50,
      0x4e,
      0x47,
      0x0d,
      0x0a,
      0x1a,
      0x0a,
      ...new Uint8Array(400),
    ]);
    const error = await rejection(png, { key: 'photos/cat.txt' });
    expect(error.reasonCode).toBe('unsupported_format');
    expect(error.message).toMatch(/"cat\.txt" should be a text file but holds binary data/);
  });

  it('rejects an empty or blank file as an empty document', async () => {
    for (const bytes of [new Uint8Array(0), utf8(' \r\n\t\n')]) {
      const error = await rejection(bytes, { key: 'empty.txt' });
      expect(error.reasonCode).toBe('empty_document');
      expect(error.message).toMatch(/no text to index/);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Markdown

describe('markdown', () => {
  const markdown = [
    '---',
    'title: "Groundwork Guide"',
    'tags: [rag]',
    '---',
    '',
    '# Getting started',
    '',
    'Read the **quick start** and the _full_ [install guide](https://example.com/install "Guide").',
    '![Architecture diagram](images/arch.png)',
    'Use `npm run build` and keep snake_case_names intact; 2 * 3 * 4 stays.',
    '<!-- a hidden note -->',
    '> A quoted ~~old~~ tip.',
    '',
    '```bash',
    'npm install groundwork',
    '```',
    '',
    '| Option | Default |',
    '| ------ | ------: |',
    '| topK   | 8       |',
    '',
    '***',
    'See [the docs][docs] &amp; <https://example.com/faq>.',
    '',
    '[docs]: https://example.com/docs',
    '',
    'Install it',
    '----------',
  ].join('\n');

  it('keeps the words and strips the syntax that hurts search', async () => {
    const doc = await parser.parse(utf8(markdown), { key: 'docs/guide.md' });
    expect(doc.format).toBe('markdown');
    expect(doc.title).toBe('Groundwork Guide');
    expect(doc.text).toBe(
      [
        '# Getting started',
        '',
        'Read the quick start and the full install guide.',
        'Architecture diagram',
        'Use npm run build and keep snake_case_names intact; 2 * 3 * 4 stays.',
        '',
        'A quoted old tip.',
        '',
        'npm install groundwork',
        '',
        '| Option | Default |',
        '| topK   | 8       |',
        '',
        'See the docs & https://example.com/faq.',
        '',
        '## Install it',
      ].join('\n'),
    );
    expect(doc.text).not.toMatch(/example\.com\/(install|docs)|arch\.png|```|\*\*|title:/);
  });

  it('takes the title from the first "# " heading when there is no front matter', async () => {
    const doc = await parser.parse(utf8('Intro line\n\n## Minor\n\n# Main *Title*\n\nBody.'), {
      key: 'x.markdown',
    });
    expect(doc.title).toBe('Main Title');
    expect(doc.text).toBe('Intro line\n\n## Minor\n\n# Main Title\n\nBody.');
  });

  it('keeps a heading a paragraph of its own when its text starts on the next line', async () => {
    const source = 'Intro\n### Upgrade notes\nRun the migration first.\n\nSetext\n======\nBody.';
    const doc = await parser.parse(utf8(source), { key: 'notes.md' });
    expect(doc.text).toBe(
      'Intro\n\n### Upgrade notes\n\nRun the migration first.\n\n# Setext\n\nBody.',
    );
    // So it is not read as the first words of the sentence under it.
    expect(sentences(doc.text).map((s) => s.text)).toContain('Run the migration first.');
  });

  it('reads a heading inside a block quote as a heading, without the quote marker', async () => {
    const source = '> ## Warning\n>\n> Unplug the machine before descaling.\n\nBody.';
    const doc = await parser.parse(utf8(source), { key: 'quote.md' });
    expect(doc.text).toBe('## Warning\n\nUnplug the machine before descaling.\n\nBody.');
  });

  it('takes no title from a quoted heading', async () => {
    const source = '> # Deprecated\n> Use v2 instead.\n\n# Payments API\n\nBody.';
    const doc = await parser.parse(utf8(source), { key: 'api.md' });
    expect(doc.title).toBe('Payments API');
  });

  it('keeps a fenced block inside a block quote as code, without the quote markers', async () => {
    const source = '> Run:\n> ```sh\n> # install the deps\n> npm ci\n> ```\n\nDone.';
    const doc = await parser.parse(utf8(source), { key: 'fence.md' });
    expect(doc.title).toBeUndefined();
    expect(doc.text).toBe('Run:\n# install the deps\nnpm ci\n\nDone.');
  });

  it('keeps the lines of a fence opened outside a quote as written', async () => {
    const source = '```\n> npm ci\n# comment\n```';
    const doc = await parser.parse(utf8(source), { key: 'shell.md' });
    expect(doc.text).toBe('> npm ci\n# comment');
  });

  it("reads a README's HTML header: its <h1> is the title, badges and multi-line tags go", async () => {
    const source = [
      '<div align="center">',
      '  <h1 align="center">Middy Core</h1>',
      '  <a href="https://github.com/middyjs/middy/actions/workflows/sast.yml">',
      '    <img src="https://github.com/middyjs/middy/actions/workflows/sast.yml/badge.svg',
      '?branch=main&event=push" alt="CodeQL" style="max-width:100%;">',
      '  </a>',
      '</div>',
      '',
      '[![NPM Version][npm-version-image]][npm-url] [![Build Status](https://ci.example/b.svg)](https://ci.example)',
      '',
      'Middleware for **AWS',
      'Lambda**, see ![the diagram](flow.png) and 2 ** 10 bytes.',
      '',
      '[npm-url]: https://npmjs.org/package/x',
    ].join('\n');
    const doc = await parser.parse(utf8(source), { key: 'README.md' });
    expect(doc.title).toBe('Middy Core');
    expect(doc.text.replace(/\n\s*\n(\s*\n)+/g, '\n\n').trim()).toBe(
      '# Middy Core\n\n' + 'Middleware for AWS\nLambda, see the diagram and 2 ** 10 bytes.',
    );
  });

  it('takes a heading that opens the document as its title, unless a heading follows it at once', async () => {
    const lead =
      '## iconv-lite: Pure JS encoding\n\n[![NPM][i]][u]\n\n* Fast.\n\n## Usage\n\nCall it.';
    expect((await parser.parse(utf8(lead), { key: 'README.md' })).title).toBe(
      'iconv-lite: Pure JS encoding',
    );
    const changes = '## Branch 3.x ##\n\n### 3.12.0 ###\n\n* Added: options.';
    expect((await parser.parse(utf8(changes), { key: 'CHANGES.md' })).title).toBeUndefined();
    const prose = 'Some text first.\n\n## Usage\n\nCall it.';
    expect((await parser.parse(utf8(prose), { key: 'notes.md' })).title).toBeUndefined();
  });

  it('leaves prose with a "<" that no ">" closes as it is', async () => {
    const source = 'Keep a <b and c\nbelow ten.\n\nNext paragraph.';
    const doc = await parser.parse(utf8(source), { key: 'x.md' });
    expect(doc.text).toBe(source);
  });

  it("cuts a heading's closing hashes only after a blank", async () => {
    const doc = await parser.parse(utf8('## Step 2 ##  \n\n## C#\n\nBody.'), { key: 'h.md' });
    expect(doc.text).toBe('## Step 2\n\n## C#\n\nBody.');
  });
});

// ---------------------------------------------------------------------------------------------
// HTML

describe('html', () => {
  const html = `<!DOCTYPE html>
<html><head><title>Refund Policy &amp; Terms</title>
<style>body { color: red; }</style><script>var secret = "<p>not text</p>";</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<noscript>Enable JavaScript</noscript>
<h1>Refunds</h1>
<p>Refunds are issued within <b>14&nbsp;days</b> &mdash; no questions &lt;asked&gt;.</p>
<ul><li>Keep the receipt</li><li>Use the original card</li></ul>
<table><tr><th>Plan</th><th>Window</th></tr><tr><td>Basic</td><td>14 days</td></tr></table>
<pre>line one
  indented two</pre>
<div>Questions?<br>Write to us.</div>
<script>alert("x")</script>
</body></html>`;

  it('writes list items and table rows as Markdown does, and a term apart from its description', async () => {
    const page =
      '<dl><dt>The Salt Loft</dt><dd>The best-known restaurant.</dd></dl>' +
      '<ol><li>Buy a ticket</li><li>Board the ferry</li></ol>' +
      '<table><tr><th>Line</th><th>Hours</th></tr><tr><td>M1</td><td></td></tr></table>';
    const doc = await parser.parse(utf8(page), { key: 'guide.html' });
    expect(doc.text).toBe(
      'The Salt Loft\n\nThe best-known restaurant.\n\n- Buy a ticket\n- Board the ferry\n\n| Line | Hours |\n| M1 | |',
    );
    // An item that opens with a block has its marker on its text's line; an empty item has none;
    // a table inside a cell stays on its row's line; a row without text is dropped, and a
    // one-cell row (a layout table's) stays plain text.
    const odd = await parser.parse(
      utf8(
        '<ul><li><p>First item.</p></li><li></li><li><div>Second</div></li></ul>' +
          '<table><tr><td></td><td></td></tr><tr><td>a</td><td><table><tr><td>x</td><td>y</td></tr></table></td></tr></table>' +
          '<table><tr><td>Logo</td></tr><tr><td>Hello Ann, your refund was sent.</td></tr></table>',
      ),
      { key: 'odd.html' },
    );
    expect(odd.text).toBe(
      '- First item.\n\n- Second\n\n| a | x | y |\n\nLogo\nHello Ann, your refund was sent.',
    );
    // Each item and row is a sentence of its own, not run together with the next.
    expect(sentences(doc.text).map((s) => s.text)).toEqual([
      'The Salt Loft',
      'The best-known restaurant.',
      '- Buy a ticket',
      '- Board the ferry',
      '| Line | Hours |',
      '| M1 | |',
    ]);
  });

  it('drops scripts, styles and navigation and keeps the block structure', async () => {
    const doc = await parser.parse(utf8(html), { key: 'site/refunds.html' });
    expect(doc).toEqual({
      format: 'html',
      title: 'Refund Policy & Terms',
      text: [
        '# Refunds',
        '',
        'Refunds are issued within 14 days \u2014 no questions <asked>.',
        '',
        '- Keep the receipt',
        '- Use the original card',
        '',
        '| Plan | Window |',
        '| Basic | 14 days |',
        '',
        'line one',
        '  indented two',
        '',
        'Questions?',
        'Write to us.',
      ].join('\n'),
    });
  });

  it('marks headings as Markdown does, except in a table cell or preformatted text', async () => {
    const page =
      '<table><tr><td><h3>Plan</h3></td><td>Price</td></tr></table><h2> </h2><p>After an empty heading.</p>' +
      '<ul><li></li></ul><p>After an empty item.</p><h3>Upload<br>limits</h3><pre><h2>kept as typed</h2></pre>';
    const doc = await parser.parse(utf8(page), { key: 'marks.html' });
    expect(doc.text.trim()).toBe(
      [
        '| Plan | Price |',
        '',
        'After an empty heading.',
        '',
        'After an empty item.',
        '',
        '### Upload',
        'limits',
        '',
        'kept as typed',
      ].join('\n'),
    );
  });

  it('takes the title from the first <h1> when there is no <title> (an SVG <title> does not count)', async () => {
    const doc = await parser.parse(
      utf8('<svg><title>Icon</title></svg><h2>Sub</h2><h1>Main heading</h1><p>Text</p>'),
      {
        key: 'page.htm',
      },
    );
    expect(doc.title).toBe('Main heading');
    expect(doc.text).toBe('## Sub\n\n# Main heading\n\nText');
  });

  // node-html-parser's default repair of unclosed elements took 43 s for the first page below
  // and minutes for the second; read as a browser reads them, each is a fraction of a second.
  it('reads a page of unclosed inline elements as a browser does: each holds what follows it', async () => {
    const section = `<section><h1>Part</h1>${'<span>word '.repeat(1000)}</section>`;
    const doc = await parser.parse(utf8(section.repeat(40)), { key: 'sloppy.html' });
    expect(doc.title).toBe('Part');
    expect(doc.text.split(/\s+/).filter((w) => w === 'word')).toHaveLength(40_000);
    expect(doc.text.split('\n').filter((line) => line === '# Part')).toHaveLength(40);
  });

  it('refuses a page of more elements than the limit as too large, before parsing it', async () => {
    const page = `<p>Refunds take 14 days.</p>${'<br>'.repeat(MAX_HTML_ELEMENTS)}`;
    const error = await rejection(utf8(page), { key: 'site/huge.html' });
    expect(error.reasonCode).toBe('too_large');
    expect(error.message).toBe(
      "The document's markup has more than 300,000 elements. Split it into smaller documents.",
    );
  });

  it('reads a page nested 200,000 elements deep without overflowing the call stack', async () => {
    const doc = await parser.parse(utf8(`<h1>Deep</h1>${'<b>x '.repeat(200_000)}`), {
      key: 'deep.html',
    });
    expect(doc.title).toBe('Deep');
    expect(doc.text.startsWith('# Deep\n\nx x x')).toBe(true);
    expect(doc.text.split(' ')).toHaveLength(200_001);
  });
});

// ---------------------------------------------------------------------------------------------
// DOCX

describe('docx', () => {
  it('extracts paragraphs, headings and tables, with the first heading as title', async () => {
    const doc = await parser.parse(await buildDocx(), { key: 'hr/onboarding.docx' });
    expect(doc).toEqual({
      format: 'docx',
      title: 'Onboarding Guide',
      text: [
        '# Onboarding Guide',
        '',
        'Welcome to the team & the company.',
        '',
        'Laptops are issued on the first day.',
        '',
        '| Badge | Reception |',
      ].join('\n'),
    });
  });

  it("takes a paragraph in Word's Title style for the title, before the first heading", async () => {
    const doc = await parser.parse(await buildDocx({ title: 'Employee Handbook' }), {
      key: 'hr/handbook.docx',
    });
    expect(doc.title).toBe('Employee Handbook');
    expect(doc.text.startsWith('# Employee Handbook\n\n# Onboarding Guide\n\n')).toBe(true);
  });

  it('rejects random bytes named .docx as a corrupt file', async () => {
    const error = await rejection(new Uint8Array(randomBytes(2048)), { key: 'broken.docx' });
    expect(error.reasonCode).toBe('corrupt_file');
    expect(error.message).toMatch(
      /^Could not read the Word document: .+\. Re-export or re-upload the file\.$/,
    );
  });

  it('refuses a document whose markup unpacks past the limit, before inflating it (a zip bomb)', async () => {
    // 72 MB of markup that deflates to about 70 KB.
    const bytes = new Uint8Array(
      await zippedMarkup(`<w:document>${'<w:p/>'.repeat(12_000_000)}</w:document>`),
    );
    expect(bytes.length).toBeLessThan(1024 * 1024);
    const error = await rejection(bytes, { key: 'bomb.docx' });
    expect(error.reasonCode).toBe('too_large');
    expect(error.message).toBe(
      'The Word document unpacks to 69 MB of markup; the limit is 64 MB. Split it into smaller documents.',
    );
  });

  it('refuses markup of more elements than the limit as too large, before mammoth reads it', async () => {
    // 2 MB of markup: under the size limit, but each element costs mammoth about 2.3 KB.
    const bytes = new Uint8Array(
      await zippedMarkup(
        `<w:document><w:body>${'<w:p/>'.repeat(MAX_DOCX_ELEMENTS)}</w:body></w:document>`,
      ),
    );
    const error = await rejection(bytes, { key: 'dense.docx' });
    expect(error.reasonCode).toBe('too_large');
    expect(error.message).toBe(
      "The Word document's markup has more than 300,000 elements. Split it into smaller documents.",
    );
  });

  it('refuses as corrupt a part that inflates past the size its directory declares', async () => {
    const bytes = await zippedMarkup(`<w:document>${' '.repeat(1_000_000)}</w:document>`);
    // The central directory entry's uncompressed size (offset 24) says 1,000 bytes.
    const entry = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bytes.writeUInt32LE(1000, entry + 24);
    const error = await rejection(new Uint8Array(bytes), { key: 'lying.docx' });
    expect(error.reasonCode).toBe('corrupt_file');
    expect(error.message).toMatch(/^Could not read the Word document: .*too many bytes/);
  });

  it('rejects a ZIP that is not a Word document as a corrupt .docx', async () => {
    const zip = new JSZip();
    zip.file('readme.txt', 'not a document');
    const bytes = new Uint8Array(await zip.generateAsync({ type: 'nodebuffer' }));
    const error = await rejection(bytes, { key: 'fake.docx' });
    expect(error.reasonCode).toBe('corrupt_file');
    expect(error.message).toMatch(/^Could not read the Word document: /);
  });
});

// ---------------------------------------------------------------------------------------------
// Format detection

describe('format detection', () => {
  it('rejects an unsupported extension, naming it and listing the supported types', async () => {
    const error = await rejection(utf8('whatever'), { key: 'tenant/file.xyz' });
    expect(error.reasonCode).toBe('unsupported_format');
    expect(error.message).toBe(
      'Unsupported file type ".xyz": supported types are .txt, .md, .html, .pdf and .docx ' +
        '(and .csv, .json and .log as plain text).',
    );
  });

  it('rejects an unsupported content type when the key has no extension', async () => {
    const error = await rejection(utf8('GIF89a...'), { key: 'upload', contentType: 'image/gif' });
    expect(error.message).toMatch(/^Unsupported file type "image\/gif"/);
  });

  it('prefers the content type, unless it is generic or just text/plain', async () => {
    const cases: [string, string | undefined, ParsedDocument['format']][] = [
      ['notes', 'text/markdown', 'markdown'],
      ['notes.txt', 'text/html; charset=utf-8', 'html'],
      ['readme.md', 'text/plain', 'markdown'],
      ['page.html', 'binary/octet-stream', 'html'],
      ['page.html', 'application/octet-stream', 'html'],
      ['README', undefined, 'text'],
    ];
    for (const [key, contentType, format] of cases) {
      const doc = await parser.parse(utf8('<p># Hello</p>'), { key, contentType });
      expect([key, contentType, doc.format]).toEqual([key, contentType, format]);
    }
  });

  it('sniffs HTML in a file with no extension', async () => {
    const doc = await parser.parse(utf8('  <!doctype html><p>Hi</p>'), { key: 'index' });
    expect(doc.format).toBe('html');
  });

  it('reads a DOCX by its magic bytes whatever its name says', async () => {
    const bytes = await buildDocx();
    for (const key of ['misnamed.txt', 'no-extension', 'file.pdf']) {
      const doc = await parser.parse(bytes, { key, contentType: 'application/octet-stream' });
      expect(doc.format).toBe('docx');
    }
  });
});

// ---------------------------------------------------------------------------------------------
// PDF (in a child Node process, see the header)

interface ChildResult {
  readonly doc?: ParsedDocument;
  readonly error?: { name: string; reasonCode?: string; message: string };
  /** Byte length of the input after parsing: PDF.js must not have detached it. */
  readonly bytesAfter: number;
}

const REPO_ROOT = path.resolve(__dirname, '../../..');
const CHILD_SCRIPT = `
const { createDocumentParser } = require(${JSON.stringify(path.join(__dirname, 'index.ts'))});
const heavyLoadedAtStart = Object.keys(require.cache).filter((k) => /node_modules[\\\\/](unpdf|mammoth)[\\\\/]/.test(k));
const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
(async () => {
  const parser = createDocumentParser();
  const results = [];
  for (const c of cases) {
    const bytes = new Uint8Array(Buffer.from(c.base64, 'base64'));
    try {
      results.push({ doc: await parser.parse(bytes, c.hint), bytesAfter: bytes.byteLength });
    } catch (e) {
      results.push({ error: { name: e.name, reasonCode: e.reasonCode, message: e.message }, bytesAfter: bytes.byteLength });
    }
  }
  process.stdout.write(JSON.stringify({ heavyLoadedAtStart, results }));
})();
`;

/** Parses each file in a fresh Node process (with tsx for the TypeScript sources). */
async function parseInNode(
  files: { bytes: Uint8Array; hint: { key: string; contentType?: string } }[],
): Promise<{ heavyLoadedAtStart: string[]; results: ChildResult[] }> {
  const input = JSON.stringify(
    files.map((f) => ({ base64: Buffer.from(f.bytes).toString('base64'), hint: f.hint })),
  );
  const run = promisify(execFile);
  const child = run(process.execPath, ['--require', 'tsx/cjs', '-e', CHILD_SCRIPT], {
    cwd: REPO_ROOT,
    timeout: 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  child.child.stdin?.end(input);
  const { stdout } = await child;
  return JSON.parse(stdout) as { heavyLoadedAtStart: string[]; results: ChildResult[] };
}

describe('pdf', () => {
  const report = buildPdf({
    title: 'Quarterly Report (Q3)',
    lines: ['Revenue grew by 12 percent.', 'Costs fell (slightly) in Q3.'],
  });
  const files = [
    { bytes: report, hint: { key: 'finance/q3.pdf' } },
    { bytes: report, hint: { key: 'finance/q3', contentType: 'binary/octet-stream' } },
    { bytes: buildPdf({ lines: ['No title here.'] }), hint: { key: 'untitled.PDF' } },
    { bytes: buildPdf({ lines: [], title: 'Scan' }), hint: { key: 'scans/receipt.pdf' } },
    {
      bytes: utf8('%PDF-1.4\n1 0 obj\n<< /Type /Catalog broken'),
      hint: { key: 'broken.pdf' },
    },
    { bytes: new Uint8Array(randomBytes(2048)), hint: { key: 'random.pdf' } },
    {
      bytes: buildPdf({ lines: ['One more page.'], pages: MAX_PDF_PAGES + 1 }),
      hint: { key: 'archive/everything.pdf' },
    },
    {
      bytes: buildPdf({
        lines: [],
        layout: [
          { text: 'City card', size: 24, down: 0 },
          { text: 'Prices', size: 18, down: 36 },
          { text: '24 hours: 19 EUR', size: 12, down: 30 },
          { text: '48 hours: 29 EUR', size: 12, down: 14 },
          { text: 'Children pay half price.', size: 12, down: 26 },
          { text: 'Cards cannot be refunded', size: 12, down: 14 },
          { text: 'once activated.', size: 12, down: 14 },
          { text: 'A second column.', size: 12, down: -120 },
        ],
      }),
      hint: { key: 'guide/city-card.pdf' },
    },
    {
      bytes: buildPdf({ lines: ['Travel Policy', 'Flights are booked in economy class.'] }),
      hint: { key: 'hr/TP-2024-final.pdf' },
    },
    {
      bytes: buildPdf({
        lines: [],
        layout: [
          { text: 'Travel Policy', size: 20, down: 0 },
          { text: 'Flights are booked in economy class.', size: 12, down: 28 },
          { text: 'Trains under six hours are booked', size: 12, down: 14 },
          { text: 'in second class.', size: 12, down: 14 },
          { text: 'Hotels and meals', size: 16, down: 26 },
          { text: 'Meals are paid up to 45 EUR a day.', size: 12, down: 22 },
          { text: 'Receipts are required.', size: 12, down: 14 },
          { text: 'Wrapped heading in large text', size: 16, down: 26 },
          { text: 'that runs onto a second line', size: 16, down: 18 },
          { text: 'A Big Sentence Of Its Own.', size: 16, down: 26 },
          { text: 'The end of the policy.', size: 12, down: 22 },
        ],
      }),
      hint: { key: 'hr/travel.pdf' },
    },
    // Titles that stand in for a missing one: the file's own name, a placeholder, Word's export of
    // an unsaved document.
    ...['noise.pdf', 'Untitled', 'Microsoft Word - Document1', 'C:\\Users\\ann\\noise.docx'].map(
      (title) => ({
        bytes: buildPdf({
          title,
          lines: ['Noise Complaints', 'Loud music after eleven can be reported to the council.'],
        }),
        hint: { key: 'council/noise.pdf' },
      }),
    ),
    {
      bytes: buildPdf({
        title: 'noise.pdf',
        lines: ['Loud music after eleven can be reported to the council.', 'Call the noise line.'],
      }),
      hint: { key: 'council/noise.pdf' },
    },
  ];
  let outcome: Awaited<ReturnType<typeof parseInNode>>;

  beforeAll(async () => {
    outcome = await parseInNode(files);
  });

  it('loads unpdf and mammoth only when a document needs them', () => {
    expect(outcome.heavyLoadedAtStart).toEqual([]);
  });

  it('extracts the page text and the /Info title, without detaching the input bytes', () => {
    const [result] = outcome.results;
    expect(result?.doc).toEqual({
      format: 'pdf',
      title: 'Quarterly Report (Q3)',
      text: 'Revenue grew by 12 percent.\nCosts fell (slightly) in Q3.',
    });
    expect(result?.bytesAfter).toBe(report.byteLength);
  });

  it('starts a paragraph at a larger gap, a change of text size or a new column', () => {
    // Without the blank lines the heading, the list and the paragraph would read as one sentence.
    expect(outcome.results[7]?.doc?.text).toBe(
      '## City card\n\n## Prices\n\n24 hours: 19 EUR\n48 hours: 29 EUR\n\n' +
        'Children pay half price.\nCards cannot be refunded\nonce activated.\n\nA second column.',
    );
  });

  it('marks a line in larger text alone in its block as a heading, and titles the PDF by it', () => {
    expect(outcome.results[9]?.doc).toEqual({
      format: 'pdf',
      title: 'Travel Policy',
      text:
        '## Travel Policy\n\nFlights are booked in economy class.\nTrains under six hours are booked\nin second class.\n\n' +
        '## Hotels and meals\n\nMeals are paid up to 45 EUR a day.\nReceipts are required.\n\n' +
        // Two lines of large text, and a sentence in large text, are no headings.
        'Wrapped heading in large text\nthat runs onto a second line\n\nA Big Sentence Of Its Own.\n\nThe end of the policy.',
    });
  });

  it('recognises a PDF by its magic bytes when the key has no extension', () => {
    expect(outcome.results[1]?.doc?.format).toBe('pdf');
  });

  it('reads a PDF without an Info dictionary and leaves the title out', () => {
    expect(outcome.results[2]?.doc).toEqual({ format: 'pdf', text: 'No title here.' });
  });

  it('calls a PDF that records no title by its first line when that line is a title', () => {
    expect(outcome.results[8]?.doc).toMatchObject({ format: 'pdf', title: 'Travel Policy' });
    // The City card's first line is a heading over another one, not a title over text.
    expect(outcome.results[7]?.doc?.title).toBeUndefined();
  });

  it.each([
    ['its own file name', 10],
    ['"Untitled"', 11],
    ['Word\'s "Document1"', 12],
    ['a path to the file it was exported from', 13],
  ])('calls a PDF whose recorded title is %s by its first line instead', (_what, i) => {
    expect(outcome.results[i]?.doc).toMatchObject({ format: 'pdf', title: 'Noise Complaints' });
  });

  it('leaves the title out (the file name stands) when neither the recorded title nor the first line is one', () => {
    expect(outcome.results[14]?.doc).toEqual({
      format: 'pdf',
      text: 'Loud music after eleven can be reported to the council.\nCall the noise line.',
    });
  });

  it('rejects a PDF with no text layer as empty, suggesting OCR', () => {
    expect(outcome.results[3]?.error).toMatchObject({
      name: 'DocumentRejectedError',
      reasonCode: 'empty_document',
      message: expect.stringMatching(/no extractable text.*OCR/) as unknown,
    });
  });

  it('refuses a PDF of more pages than the limit as too large, naming both counts', () => {
    expect(outcome.results[6]?.error).toMatchObject({
      name: 'DocumentRejectedError',
      reasonCode: 'too_large',
      message: 'The PDF has 5,001 pages; the limit is 5,000. Split it into smaller documents.',
    });
  });

  it.each([
    [4, 'a truncated PDF'],
    [5, 'random bytes named .pdf'],
  ])('rejects %s as a corrupt file with a short cause', (i, _what) => {
    expect(outcome.results[i]?.error).toMatchObject({
      name: 'DocumentRejectedError',
      reasonCode: 'corrupt_file',
      message: expect.stringMatching(
        /^Could not read the PDF: [^\n]{1,160}\. Re-export or re-upload the file\.$/,
      ) as unknown,
    });
  });
});

describe('pdf pages', () => {
  /** A document of `count` pages of `perPage` characters each, recording the pages asked for. */
  const pagesOf = (count: number, perPage: number) => {
    const asked: number[] = [];
    const pdf: PdfPages = {
      numPages: count,
      getPage: (n) => {
        asked.push(n);
        return Promise.resolve({
          getTextContent: () =>
            Promise.resolve({
              items: [{ str: 'x'.repeat(perPage - 1), hasEOL: true }, { width: 0 }],
            }),
          cleanup: () => true,
        });
      },
    };
    return { pdf, asked };
  };

  it("reads paragraphs against the page's own line spacing: 1.5 and double spacing join lines", async () => {
    /** One page of 12-point lines, each `downs[i]` points below the one before. */
    const page = (lines: string[], downs: number[]): PdfPages => {
      let y = 700;
      const items = lines.flatMap((str, i) => {
        y -= downs[i] ?? 0;
        return [
          { str, hasEOL: false, transform: [12, 0, 0, 12, 72, y], height: 12 },
          { str: '', hasEOL: true, transform: [1, 0, 0, 1, 72, y], height: 0 },
        ];
      });
      return {
        numPages: 1,
        getPage: () =>
          Promise.resolve({
            getTextContent: () => Promise.resolve({ items }),
            cleanup: () => true,
          }),
      };
    };
    const lines = [
      'Breakfast is served',
      'from seven until ten.',
      'Dinner starts',
      'at six.',
      'Late.',
    ];
    for (const pitch of [14.4, 21.6, 28.8]) {
      // A paragraph break is half a line more than the spacing, whatever the spacing.
      const downs = [0, pitch, pitch * 1.5, pitch, pitch];
      await expect(pageTexts(page(lines, downs))).resolves.toEqual([
        'Breakfast is served\nfrom seven until ten.\n\nDinner starts\nat six.\nLate.\n',
      ]);
    }
  });

  it("reads a table's rows as rows: cells apart by more than two text heights, with or without whitespace between them", async () => {
    const at = (str: string, x: number, y: number, width: number, hasEOL = false) => ({
      str,
      hasEOL,
      transform: [11, 0, 0, 11, x, y],
      width,
      height: str.trim() === '' ? 0 : 11,
    });
    const items = [
      at('Closed on Mondays, and open', 60, 700, 140),
      at(' ', 200, 700, 3),
      at('late on Fridays.', 203, 700, 80, true),
      at('Day', 60, 686, 20),
      at(' ', 80, 686, 140),
      at('Opening hours', 220, 686, 78, true),
      at('Tuesday to Friday', 60, 672, 88),
      at('11am to 7pm', 220, 672, 64, true),
      at('Saturday', 60, 658, 44),
      at(' ', 104, 658, 116),
      at('10am to 5pm', 220, 658, 64),
    ];
    const pdf: PdfPages = {
      numPages: 1,
      getPage: () =>
        Promise.resolve({
          getTextContent: () => Promise.resolve({ items }),
          cleanup: () => true,
        }),
    };
    await expect(pageTexts(pdf)).resolves.toEqual([
      'Closed on Mondays, and open late on Fridays.\n' +
        '| Day | Opening hours |\n| Tuesday to Friday | 11am to 7pm |\n| Saturday | 10am to 5pm |',
    ]);
  });

  it('makes no cells without a text height to measure by, nor an empty cell of trailing space', async () => {
    const one = (items: object[]): PdfPages => ({
      numPages: 1,
      getPage: () =>
        Promise.resolve({
          getTextContent: () => Promise.resolve({ items }),
          cleanup: () => true,
        }),
    });
    const item = (str: string, x: number, width: number, height: number, hasEOL = false) => ({
      str,
      hasEOL,
      transform: [1, 0, 0, 1, x, 100],
      width,
      height,
    });
    await expect(
      pageTexts(one([item('Hello', 0, 30, 0), item('world', 33, 30, 0, true)])),
    ).resolves.toEqual(['Helloworld\n']);
    await expect(
      pageTexts(one([item('Total', 0, 30, 11), item(' ', 30, 100, 0), item('', 130, 0, 0, true)])),
    ).resolves.toEqual(['Total \n']);
  });

  it('reads the pages in order, one at a time, joining items as unpdf does', async () => {
    const { pdf, asked } = pagesOf(3, 4);
    await expect(pageTexts(pdf)).resolves.toEqual(['xxx\n', 'xxx\n', 'xxx\n']);
    expect(asked).toEqual([1, 2, 3]);
  });

  it('stops at the page that passes the text limit, naming it, and reads no further', async () => {
    const { pdf, asked } = pagesOf(100, 1000);
    const error = await pageTexts(pdf, 2500).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DocumentRejectedError);
    expect(error).toMatchObject({
      reasonCode: 'too_large',
      message:
        'The PDF holds more than 2,500 characters of text (passed on page 3). Split it into smaller documents.',
    });
    expect(asked).toEqual([1, 2, 3]);
  });
});

describe('pdf running headers and footers', () => {
  const page = (n: number, body: string) => `Shared MIME-info Database\n${body}\n${n}`;

  it('drops the name and page number printed on every page, and keeps the text', () => {
    const pages = [
      page(1, 'The default weight value is 50,'),
      page(2, 'and the maximum is 100.\nGlobs are matched case-insensitively.'),
      page(3, 'Magic rules come next.'),
      page(4, 'Subclassing is described last.'),
    ];
    expect(withoutRunningLines(pages)).toEqual([
      'The default weight value is 50,',
      'and the maximum is 100.\nGlobs are matched case-insensitively.',
      'Magic rules come next.',
      'Subclassing is described last.',
    ]);
  });

  it('counts the edge lines with text only: paragraph breaks do not hide a running line', () => {
    // A two-line header, and a two-line footer whose lines a paragraph break sets apart.
    const bodies = [
      'Alpha starts.\n\nAlpha ends.',
      'Beta starts.\n\nBeta ends.',
      'Gamma.\n\nDelta.',
    ];
    const pages = bodies.map(
      (body, i) => `Acme manual\nVersion 2\n\n${body}\n\nAcme, confidential\n\n${i + 1}\n`,
    );
    expect(withoutRunningLines(pages)).toEqual(bodies.map((body) => `\n${body}\n\n\n`));
  });

  it('reads roman and arabic page numbers and "Page n of m" footers as running', () => {
    const pages = ['Preface text.\ni', 'More preface.\nii', 'Body begins.\n1', 'Body ends.\n2'].map(
      (p, i) => `${p}\nPage ${i + 1} of 4`,
    );
    expect(withoutRunningLines(pages)).toEqual([
      'Preface text.',
      'More preface.',
      'Body begins.',
      'Body ends.',
    ]);
  });

  it('keeps a line that only a few pages share, and short documents whole', () => {
    const pages = [
      'Chapter 1\nIntro text.',
      'Intro continues.\nMore.',
      'Chapter 2\nSetup text.',
      'Setup continues.\nMore still.',
      'Chapter 3\nUsage text.',
      'Usage continues.\nThe end.',
      'Appendix\nNotes.',
    ];
    expect(withoutRunningLines(pages)).toEqual(pages);
    const short = ['Title\nOne.\n1', 'Title\nTwo.\n2'];
    expect(withoutRunningLines(short)).toEqual(short);
  });
});
