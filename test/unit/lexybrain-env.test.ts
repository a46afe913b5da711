import { loadLocalEnv } from '../../local/config';

describe('LEXYBRAIN_RAG_ENABLED', () => {
  it.each<[string | undefined, boolean]>([
    [undefined, true],
    ['true', true],
    ['1', true],
    ['false', false],
    ['FALSE', false],
    ['0', false],
    ['off', false],
    [' no ', false],
  ])('%p reads as %p in the embedded default', (value, enabled) => {
    const env = loadLocalEnv(value === undefined ? {} : { LEXYBRAIN_RAG_ENABLED: value });
    expect(env.LEXYBRAIN_RAG_ENABLED).toBe(enabled);
  });
});
