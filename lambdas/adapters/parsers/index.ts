/**
 * The DocumentParser adapter: detects the format, extracts text with the matching parser,
 * normalises whitespace, and turns every failure into a DocumentRejectedError whose message
 * says what to do. PDF and DOCX libraries load on first use, so cold starts stay fast.
 */
import {
  DocumentRejectedError,
  type DocumentParser,
  type ParsedDocument,
  type SourceFormat,
} from '../../core/ingestion/types';
import { leadingTitle } from '../../core/text/lines';
import { detectFormat } from './detect';
import { extractDocx } from './docx';
import { htmlToText } from './html';
import { markdownToText } from './markdown';
import { extractPdf } from './pdf';
import {
  cleanTitle,
  corruptFile,
  normalizeWhitespace,
  ParserUnavailableError,
  type Extracted,
} from './shared';
import { charsetOf, extractText, looksBinary } from './text';

const LABELS: Readonly<Record<SourceFormat, string>> = {
  text: 'text file',
  markdown: 'Markdown file',
  html: 'HTML file',
  pdf: 'PDF',
  docx: 'Word document',
};

const A_LABELS: Readonly<Record<SourceFormat, string>> = {
  text: 'a text file',
  markdown: 'a Markdown file',
  html: 'an HTML file',
  pdf: 'a PDF',
  docx: 'a Word document',
};

const EMPTY_MESSAGES: Readonly<Record<SourceFormat, string>> = {
  text: 'The text file is empty: there is no text to index.',
  markdown: 'The Markdown file has no text to index.',
  html: 'The HTML page has no text to index (scripts, styles and navigation are ignored).',
  pdf:
    'The PDF has no extractable text: it is probably a scanned image. Run it through OCR ' +
    '(or export it with a text layer), then re-upload it.',
  docx: 'The Word document has no text to index (it may contain only images).',
};

/**
 * Creates the parser for .txt, .md, .html, .pdf and .docx objects (and .csv, .json, .log as
 * text). `parse` resolves to normalised text (chunk offsets refer to it) and a title when the
 * format has one. It rejects with DocumentRejectedError: `unsupported_format`, `corrupt_file`
 * or `empty_document`. Only a library that fails to load (a deployment fault) rejects with a
 * ParserUnavailableError instead.
 */
export function createDocumentParser(): DocumentParser {
  return {
    async parse(bytes, hint): Promise<ParsedDocument> {
      const { format, charset } = detectFormat(bytes, hint);
      let extracted: Extracted;
      try {
        extracted = await extract(format, bytes, hint.key, charset);
      } catch (err) {
        if (err instanceof DocumentRejectedError || err instanceof ParserUnavailableError) {
          throw err;
        }
        throw corruptFile(LABELS[format], err);
      }
      const text = normalizeWhitespace(extracted.text);
      if (text === '') throw new DocumentRejectedError('empty_document', EMPTY_MESSAGES[format]);
      // A plain text file, or a PDF that records no title, is called by its first line when
      // that line is a title over the next.
      const title = cleanTitle(
        extracted.title ?? (format === 'text' || format === 'pdf' ? leadingTitle(text) : undefined),
      );
      return { format, text, ...(title !== undefined ? { title } : {}) };
    },
  };
}

async function extract(
  format: SourceFormat,
  bytes: Uint8Array,
  key: string,
  charset: string | undefined,
): Promise<Extracted> {
  switch (format) {
    case 'pdf':
      return extractPdf(bytes);
    case 'docx':
      return extractDocx(bytes);
    case 'text':
    case 'markdown':
    case 'html': {
      // Decided once: the binary check and the decoding read the text in the same charset.
      const encoding = charsetOf(bytes, charset);
      if (looksBinary(bytes, encoding)) {
        const name = key.slice(key.lastIndexOf('/') + 1);
        throw new DocumentRejectedError(
          'unsupported_format',
          `Unsupported file content: "${name}" should be ${A_LABELS[format]} but holds ` +
            'binary data. Upload it in a supported format (.txt, .md, .html, .pdf or .docx).',
        );
      }
      const { text } = extractText(bytes, encoding);
      if (format === 'markdown') return markdownToText(text);
      if (format === 'html') {
        const html = await htmlToText(text);
        const title = html.titleTag ?? html.firstH1;
        return { text: html.text, ...(title !== undefined ? { title } : {}) };
      }
      return { text };
    }
  }
}
