import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chooseProfile } from '../../lambdas/core/answer/answer';
import type { PromptConfig, ProfileConstraints } from '../../lambdas/core/answer/conversations';

function profile(name: string, constraints: ProfileConstraints): PromptConfig {
  return {
    id: name,
    name,
    profile: name,
    version: 1,
    instructions: name,
    constraints,
    active: true,
  };
}

// The built-in profiles as migrations 0003 and 0017 seed them (constraints read from the SQL).
function seeded(): PromptConfig[] {
  const dir = path.join(__dirname, '..', '..', 'migrations');
  const sql = ['0003_conversations.sql', '0017_lexybrain_capabilities.sql']
    .map((f) => readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
  const rows = [...sql.matchAll(/\('[^']*', '([_a-z]+)', 1,[\s\S]*?'(\{[^']*\})'::jsonb, true\)/g)];
  return rows.map((m) => profile(m[1]!, JSON.parse(m[2]!) as ProfileConstraints));
}

describe('choosing a profile within a family', () => {
  const configs = seeded();

  it('reads the ten built-in profiles', () => {
    expect(configs.map((c) => c.profile).sort()).toEqual([
      '_system',
      'alert_explanation',
      'compare',
      'competitor_intel',
      'explain',
      'general',
      'general_chat',
      'keyword_explanation',
      'market_brief',
      'summarize',
    ]);
  });

  it.each([
    ['Which competitor listing sells best in my niche?', 'competitor_intel'],
    ['Why did this alert fire on my shop?', 'alert_explanation'],
    ['What is the risk of this trademark?', 'alert_explanation'],
    ['Why is this keyword trending?', 'keyword_explanation'],
    ['Tell me about this keyword', 'general_chat'],
    ['Give me a brief on the wedding market', 'market_brief'],
    ['How do I write a good product description?', 'general_chat'],
  ])('detects "%s" as %s, in the seed\'s order', (question, expected) => {
    expect(chooseProfile(question, configs, undefined, 'lexybrain').profile).toBe(expected);
  });

  it('keeps the unnamed family to its own profiles', () => {
    expect(chooseProfile('Summarize the market alerts', configs).profile).toBe('summarize');
    expect(chooseProfile('What about the market alerts?', configs).profile).toBe('general');
    expect(() => chooseProfile('x', configs, 'market_brief')).toThrow(/unknown profile/);
    expect(() => chooseProfile('x', configs, 'summarize', 'lexybrain')).toThrow(/unknown profile/);
  });

  it('takes an explicit profile of the family as asked', () => {
    expect(
      chooseProfile('Why is this keyword up?', configs, 'market_brief', 'lexybrain'),
    ).toMatchObject({
      profile: 'market_brief',
      constraints: { candidates: 40, top_k: 12, allowed_source_types: ['keyword', 'trend'] },
    });
  });

  it('is a 409 no_profile when a tenant left a family without profiles', () => {
    const moved = configs.map((c) => ({ ...c, constraints: { ...c.constraints, family: 'gone' } }));
    expect(() => chooseProfile('How long do refunds take?', moved, undefined, 'lexybrain')).toThrow(
      expect.objectContaining({ status: 409, code: 'no_profile' }),
    );
  });

  it('needs every part of an `a & b` phrase', () => {
    const family = [
      profile('both', { family: 'f', keywords: ['keyword & why'] }),
      profile('rest', { family: 'f', fallback: true }),
    ];
    expect(chooseProfile('why this keyword', family, undefined, 'f').profile).toBe('both');
    expect(chooseProfile('this keyword', family, undefined, 'f').profile).toBe('rest');
    expect(chooseProfile('why', family, undefined, 'f').profile).toBe('rest');
  });
});
