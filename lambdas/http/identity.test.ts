import { identityFromEvent, listClaim } from './identity';

const httpApiEvent = (claims: Record<string, unknown>) => ({
  requestContext: { authorizer: { jwt: { claims } } },
});
const restEvent = (claims: Record<string, unknown>) => ({
  requestContext: { authorizer: { claims } },
});
const base = { sub: 'u1', 'custom:tenant_id': 'acme' };

describe('group claims, parsed in the format each authorizer sends', () => {
  it.each([
    ['a real array (local server)', ['admin', 'readers'], ['admin', 'readers']],
    ['the HTTP API bracketed form', '[admin readers]', ['admin', 'readers']],
    ['the HTTP API form with one group', '[readers]', ['readers']],
    ['a group name holding a comma stays one group', '[readers,admin]', ['readers,admin']],
  ])('HTTP API: %s', (_name, value, expected) => {
    expect(listClaim(value, 'http-api-jwt')).toEqual(expected);
  });

  it('REST API Cognito authorizer: comma-joined', () => {
    expect(listClaim('admin,readers', 'rest-cognito')).toEqual(['admin', 'readers']);
  });

  it('a group named "readers,admin" does not grant admin through the HTTP API', () => {
    const identity = identityFromEvent(
      httpApiEvent({ ...base, 'cognito:groups': '[readers,admin]' }),
    );
    expect(identity.isAdmin).toBe(false);
    expect(identity.groups).toEqual(['readers,admin']);
  });

  it('space-separated names in the bracketed form are separate groups', () => {
    const identity = identityFromEvent(httpApiEvent({ ...base, 'cognito:groups': '[x admin]' }));
    expect(identity.isAdmin).toBe(true);
  });

  it('the admin group is recognised in every format', () => {
    expect(identityFromEvent(httpApiEvent({ ...base, 'cognito:groups': ['admin'] })).isAdmin).toBe(
      true,
    );
    expect(identityFromEvent(httpApiEvent({ ...base, 'cognito:groups': '[admin]' })).isAdmin).toBe(
      true,
    );
    expect(
      identityFromEvent(restEvent({ ...base, 'cognito:groups': 'readers,admin' })).isAdmin,
    ).toBe(true);
  });

  it('a group name merely containing "admin" is not the admin group', () => {
    expect(
      identityFromEvent(httpApiEvent({ ...base, 'cognito:groups': '[admins notadmin]' })).isAdmin,
    ).toBe(false);
  });
});
