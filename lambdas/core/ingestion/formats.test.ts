import { containerFormat } from './formats';

const bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(
    parts.flatMap((p) => (typeof p === 'string' ? [...p].map((c) => c.charCodeAt(0)) : p)),
  );
const ZIP = [0x50, 0x4b, 0x03, 0x04];

describe('containerFormat', () => {
  it('reads a PDF by its header at the very start only', () => {
    expect(containerFormat(bytes('%PDF-1.7\n...'))).toBe('pdf');
    expect(containerFormat(bytes(' %PDF-1.7'))).toBeUndefined();
    expect(containerFormat(bytes('A text that mentions %PDF-1.7'))).toBeUndefined();
    expect(containerFormat(bytes('%PDF'))).toBeUndefined();
  });

  it('reads a DOCX as a ZIP that holds word/document.xml, wherever the entry name lies', () => {
    expect(containerFormat(bytes(ZIP, 'xxword/docword/document.xml..'))).toBe('docx');
    expect(containerFormat(bytes(ZIP, 'xl/workbook.xml'))).toBeUndefined();
    expect(containerFormat(bytes('word/document.xml'))).toBeUndefined();
    expect(containerFormat(bytes(ZIP, 'word/document.xm'))).toBeUndefined();
  });

  it('says nothing of text or of no bytes', () => {
    expect(containerFormat(new Uint8Array())).toBeUndefined();
    expect(containerFormat(bytes('Refunds take 14 days.'))).toBeUndefined();
  });
});
