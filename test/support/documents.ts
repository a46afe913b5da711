/**
 * Documents built in code for the parsers' tests: a minimal PDF 1.4 (Helvetica, one text line per
 * entry, an optional /Info /Title) and a minimal DOCX.
 */
import JSZip from 'jszip';

/**
 * A PDF whose pages (one unless `pages` says more) all show `lines`, 20 points apart in 14-point
 * text, or `layout`: each line in its own size, `down` points below the one before.
 */
export function buildPdf(options: {
  lines: string[];
  title?: string;
  pages?: number;
  layout?: { text: string; size: number; down: number }[];
}): Uint8Array {
  const escape = (s: string): string => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const content = options.layout
    ? `BT\n72 720 Td\n${options.layout
        .map((l) => `/F1 ${l.size} Tf\n0 ${-l.down} Td\n(${escape(l.text)}) Tj\n`)
        .join('')}ET\n`
    : options.lines.length > 0
      ? `BT\n/F1 14 Tf\n72 720 Td\n${options.lines
          .map((line, i) => `${i > 0 ? '0 -20 Td\n' : ''}(${escape(line)}) Tj\n`)
          .join('')}ET\n`
      : '0 0 1 rg\n72 72 200 200 re\nf\n'; // a filled square: a page with no text, like a scan
  const page =
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] ' +
    '/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>';
  const pages = options.pages ?? 1;
  // The first page is object 3, the others follow the fixed objects (and the /Info dictionary).
  const firstExtra = options.title !== undefined ? 7 : 6;
  const kids = ['3 0 R', ...Array.from({ length: pages - 1 }, (_, i) => `${firstExtra + i} 0 R`)];
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages} >>`,
    page,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}endstream`,
  ];
  if (options.title !== undefined) {
    objects.push(`<< /Title (${escape(options.title)}) /Producer (groundwork tests) >>`);
  }
  for (let i = 1; i < pages; i++) objects.push(page);
  let pdf = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(pdf, 'latin1'));
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xrefOffset = Buffer.byteLength(pdf, 'latin1');
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  pdf += offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  const info = options.title !== undefined ? ' /Info 6 0 R' : '';
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${info} >>\n`;
  pdf += `startxref\n${xrefOffset}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(pdf, 'latin1'));
}

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** A zip archive holding `documentXml` as word/document.xml, deflated. */
export async function zippedMarkup(documentXml: string): Promise<Buffer> {
  const zip = new JSZip();
  zip.file('word/document.xml', documentXml);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/** A DOCX with a "heading 1" style, a heading, body paragraphs and a one-row table. */
export async function buildDocx(options: { title?: string } = {}): Promise<Uint8Array> {
  const paragraph = (text: string, style?: string): string =>
    `<w:p>${style !== undefined ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}` +
    `<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
  const cell = (text: string): string => `<w:tc>${paragraph(text)}</w:tc>`;
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
      '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>' +
      '</Types>',
  );
  zip.file(
    '_rels/.rels',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      `<Relationship Id="rId1" Type="${REL}/officeDocument" Target="word/document.xml"/>` +
      '</Relationships>',
  );
  zip.file(
    'word/_rels/document.xml.rels',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      `<Relationship Id="rId1" Type="${REL}/styles" Target="styles.xml"/>` +
      '</Relationships>',
  );
  zip.file(
    'word/styles.xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles xmlns:w="${W}">` +
      '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>' +
      '<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>' +
      '</w:styles>',
  );
  zip.file(
    'word/document.xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${W}"><w:body>` +
      (options.title !== undefined ? paragraph(options.title, 'Title') : '') +
      paragraph('Onboarding Guide', 'Heading1') +
      paragraph('Welcome to the team &amp; the company.') +
      paragraph('Laptops are issued on the first day.') +
      `<w:tbl><w:tr>${cell('Badge')}${cell('Reception')}</w:tr></w:tbl>` +
      '</w:body></w:document>',
  );
  return new Uint8Array(await zip.generateAsync({ type: 'nodebuffer' }));
}
