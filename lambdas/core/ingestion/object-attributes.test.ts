import { MAX_SIDECAR_BYTES, parseKey, parseSidecar, resolveAttributes } from './object-attributes';
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

describe("a sidecar's tenant", () => {
  const resolve = (sidecar: Record<string, unknown>) =>
    resolveAttributes({
      bucket: 'docs',
      key: 'tenants/acme/handbook.md',
      sidecar,
      lastModified: null,
    });

  it('is kept when it is the tenant the key names (as Bedrock Knowledge Bases sidecars carry it)', () => {
    expect(resolve({ tenant_id: 'acme', team: 'hr' }).metadata).toEqual({
      tenant_id: 'acme',
      team: 'hr',
    });
  });

  it.each(['tenant_id', 'org_id', 'Tenant'])(
    'fails the document when its %s names another tenant',
    (name) => {
      expect(() => resolve({ [name]: 'globex' })).toThrow(DocumentRejectedError);
      expect(() => resolve({ [name]: 'globex' })).toThrow(
        /is not the tenant its key names \(acme\)/,
      );
    },
  );
});
