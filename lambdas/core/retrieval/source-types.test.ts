import { ForbiddenError, ValidationError } from '../errors';
import {
  applySourceTypePolicy,
  checkSourceTypePolicy,
  DEFAULT_SOURCE_TYPE_POLICY,
  permissivePolicy,
  strictPolicy,
} from './source-types';

describe('source-type policies', () => {
  it('by default allows every type and refuses nothing', () => {
    expect(applySourceTypePolicy(DEFAULT_SOURCE_TYPE_POLICY, ['anything'])).toEqual({
      mode: 'permissive',
      allowed: null,
      effective: null,
      dropped: [],
    });
  });

  it('permissive: limits retrieval to the allowlist and drops the other requested types', () => {
    const policy = permissivePolicy(['faq', 'doc']);
    expect(applySourceTypePolicy(policy, ['faq', 'email', 'email'])).toEqual({
      mode: 'permissive',
      allowed: ['doc', 'faq'],
      effective: ['doc', 'faq'],
      dropped: ['email'],
    });
  });

  it('strict: refuses a requested type outside the allowlist, naming it', () => {
    const policy = strictPolicy(['faq']);
    expect(applySourceTypePolicy(policy, ['faq']).effective).toEqual(['faq']);
    expect(applySourceTypePolicy(policy, undefined).effective).toEqual(['faq']);
    expect(() => applySourceTypePolicy(policy, ['faq', 'email'])).toThrow(ForbiddenError);
    expect(() => applySourceTypePolicy(policy, ['email'])).toThrow(/"email"; allowed: faq/);
  });

  it("narrows to a profile's types within the allowlist, never refusing them", () => {
    expect(applySourceTypePolicy(strictPolicy(['faq', 'doc']), undefined, ['faq', 'web'])).toEqual({
      mode: 'strict',
      allowed: ['doc', 'faq'],
      effective: ['faq'],
      dropped: [],
    });
    expect(applySourceTypePolicy(DEFAULT_SOURCE_TYPE_POLICY, undefined, ['web']).effective).toEqual(
      ['web'],
    );
  });

  it('a strict policy needs a list; lists are deduplicated and bounded', () => {
    expect(() => checkSourceTypePolicy({ mode: 'strict', allowedSourceTypes: null })).toThrow(
      ValidationError,
    );
    expect(() => strictPolicy([])).toThrow(ValidationError);
    expect(permissivePolicy(['faq', 'doc', 'faq']).allowedSourceTypes).toEqual(['doc', 'faq']);
    expect(() => permissivePolicy(Array.from({ length: 51 }, (_, i) => `t${i}`))).toThrow(
      /at most 50/,
    );
  });
});
