import { parseMultipart } from './multipart';

const BOUNDARY = 'b0undary';
const TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

function form(parts: { name: string; filename?: string; type?: string; body: Buffer | string }[]) {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}`;
    chunks.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n` +
          (p.type ? `Content-Type: ${p.type}\r\n` : '') +
          '\r\n',
      ),
      Buffer.isBuffer(p.body) ? p.body : Buffer.from(p.body),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

describe('parseMultipart', () => {
  it('returns a binary file byte for byte, with its name and type, and the text fields', async () => {
    const bytes = Buffer.from([0, 1, 2, 13, 10, 45, 45, 255]);
    const parsed = await parseMultipart(
      form([
        { name: 'file', filename: 'r\u00e9sum\u00e9.pdf', type: 'application/pdf', body: bytes },
        { name: 'title', body: 'CV' },
      ]),
      TYPE,
    );
    expect(parsed.files).toEqual([
      { field: 'file', filename: 'r\u00e9sum\u00e9.pdf', contentType: 'application/pdf', bytes },
    ]);
    expect(parsed.fields).toEqual({ title: 'CV' });
  });

  it.each([
    [
      'a second file',
      form([
        { name: 'file', filename: 'a.txt', type: 'text/plain', body: 'a' },
        { name: 'file', filename: 'b.txt', type: 'text/plain', body: 'b' },
      ]),
      TYPE,
      /one file/,
    ],
    [
      'a repeated field',
      form([
        { name: 'title', body: 'a' },
        { name: 'title', body: 'b' },
      ]),
      TYPE,
      /title: given more than once/,
    ],
    ['a field over its limit', form([{ name: 'title', body: 'x'.repeat(2000) }]), TYPE, /title/],
    ['no boundary', Buffer.from('x'), 'multipart/form-data; charset=utf-8', /boundary/],
    ['not multipart', Buffer.from('{}'), 'application/json', /multipart\/form-data/],
    [
      'a truncated body',
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc`,
      ),
      TYPE,
      /multipart/,
    ],
  ])('refuses %s', async (_name, body, type, message) => {
    await expect(parseMultipart(body, type)).rejects.toMatchObject({
      code: 'validation_error',
      message: expect.stringMatching(message),
    });
  });
});
