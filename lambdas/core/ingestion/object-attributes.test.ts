import { MAX_SIDECAR_BYTES, parseKey, parseSidecar } from './object-attributes';
import { DocumentRejectedError } from './types';

describe('the tenant and owner a key names', () => {
  it('reads tenants/<tenant>/... and tenants/<tenant>/users/<user>/...', () => {
    expect(parseKey('tenants/acme/handbook/leave.md')).toEqual({ tenantId: 'acme', userId: null });
    expect(parseKey('tenants/acme/users/ana/notes.md')).toEqual({
      tenantId: 'acme',
      userId: 'ana',
    });
  });

  it.each([
    'tenants/acme/../globex/secret.md',
    'tenants/acme/users/../../globex/x.md',
    'tenants/./acme/x.md',
    'uploads/no-tenant.txt',
    'tenants/not a tenant/x.md',
  ])('refuses %s: which tenant it belongs to is not certain', (key) => {
    expect(() => parseKey(key)).toThrow(DocumentRejectedError);
    expect(() => parseKey(key)).toThrow(/tenants\/<tenantId>\//);
  });
});

describe('a metadata sidecar', () => {
  const sidecar = (attributes: Record<string, unknown>) =>
    new TextEncoder().encode(JSON.stringify({ metadataAttributes: attributes }));

  it('is read up to 1 MiB, and refused with its size beyond', () => {
    expect(parseSidecar(sidecar({ team: 'finance' }))).toEqual({ team: 'finance' });
    const big = sidecar({ notes: 'x'.repeat(MAX_SIDECAR_BYTES) });
    expect(() => parseSidecar(big)).toThrow(DocumentRejectedError);
    expect(() => parseSidecar(big)).toThrow(/1\.0 MB; the limit is 1 MB/);
  });
});
