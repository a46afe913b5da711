import { rawRequestBody } from './http-handler';

describe('rawRequestBody', () => {
  it('decodes a base64 body (as API Gateway sends a multipart one) byte for byte', () => {
    const bytes = Buffer.from([0, 255, 13, 10, 1]);
    expect(rawRequestBody({ body: bytes.toString('base64'), isBase64Encoded: true }, 5)).toEqual(
      bytes,
    );
    expect(rawRequestBody({ body: 'héllo', isBase64Encoded: false }, 6)).toEqual(
      Buffer.from('héllo'),
    );
    expect(rawRequestBody({}, 1)).toEqual(Buffer.alloc(0));
  });

  it('is a 413 naming the limit one byte over it, decoded or not', () => {
    const over = Buffer.alloc(6);
    for (const event of [
      { body: over.toString('base64'), isBase64Encoded: true },
      { body: 'x'.repeat(6), isBase64Encoded: false },
      // A base64 body far over the limit is refused before it is decoded.
      { body: 'A'.repeat(4_000_000), isBase64Encoded: true },
    ]) {
      expect(() => rawRequestBody(event, 5)).toThrow(
        expect.objectContaining({ status: 413, message: expect.stringContaining('5 bytes') }),
      );
    }
  });
});
