import { unwrapLines } from '../text/lines';
import { questionCoverage } from './confidence';
import { affirmedWords, contentWords, isNegated, isPolar, questionTerms, sentences } from './text';

describe('sentences', () => {
  it('keeps a sentence that a hard line break wraps whole, with offsets into the original', () => {
    const text =
      'Clothing carries a two-year warranty. The warranty does not cover normal\nwear and tear.\n\nNext paragraph.';
    const found = sentences(text);
    expect(found.map((s) => s.text)).toEqual([
      'Clothing carries a two-year warranty.',
      'The warranty does not cover normal\nwear and tear.',
      'Next paragraph.',
    ]);
    for (const s of found) expect(text.slice(s.start, s.end)).toBe(s.text);
  });

  it('does not end a sentence at an initial', () => {
    const text =
      'The plague theory was challenged by the bacteriologist J. F. D. Shrewsbury. He mapped the St. Johns River. It was Runyon v. McCrary.';
    expect(sentences(text).map((s) => s.text)).toEqual([
      'The plague theory was challenged by the bacteriologist J. F. D. Shrewsbury.',
      'He mapped the St. Johns River.',
      'It was Runyon v. McCrary.',
    ]);
  });

  it('still breaks before list items, headings, quotes and table rows', () => {
    const text = 'Options:\n- first\n- second\n1. third\n# Heading\n> quote\n| a | b |';
    expect(unwrapLines(text)).toBe(text);
  });

  it('keeps label lines one under the other apart, and wraps a long value', () => {
    const text =
      'We rent road bikes, hybrids and e-bikes.\nHybrid: $35 for a half day, $50 for\na full day\nRoad bike: $55 per day\nE-bike: $75 per day';
    expect(sentences(text).map((s) => s.text)).toEqual([
      'We rent road bikes, hybrids and e-bikes.',
      'Hybrid: $35 for a half day, $50 for\na full day',
      'Road bike: $55 per day',
      'E-bike: $75 per day',
    ]);
    // Prose that opens with a colon wraps as prose, onto a line that starts with a name too.
    for (const prose of [
      'Present: Sofia Martens (product owner),\nOmar Haddad (marketing).',
      'Please note: orders placed after 2pm are shipped by Royal Mail\nFirst Class from our warehouse.',
      'The answer is simple: we refund every order paid with PayPal\nWithin 14 days.',
    ])
      expect(unwrapLines(prose)).toBe(prose.replace('\n', ' '));
  });

  it('breaks after a table row, and keeps a row one sentence whatever full stops its cells hold', () => {
    const text = '| Plan | Refund |\n| Basic | In 3 days. Fees apply. |  \nAfter the table.';
    expect(unwrapLines(text)).toBe(text);
    expect(sentences(text).map((s) => s.text)).toEqual([
      '| Plan | Refund |',
      '| Basic | In 3 days. Fees apply. |',
      'After the table.',
    ]);
  });

  it('keeps a plain-text title on a line of its own, and joins wrapped prose that starts a block', () => {
    const text =
      'Returns and refunds\nUnused items can be returned within 30 days. Refunds take\n14 days.\n\nWARRANTY\nAll products carry a two-year warranty.';
    expect(unwrapLines(text)).toBe(
      'Returns and refunds\nUnused items can be returned within 30 days. Refunds take 14 days.\n\nWARRANTY\nAll products carry a two-year warranty.',
    );
    // Not a title: it ends as a clause does, the next line goes on in lower case, or the first
    // line is as long as the wrapped paragraph's.
    for (const prose of [
      'Opening hours:\nMonday to Friday, 9 to 5.',
      'Refunds are issued\nwithin 14 days.',
      'The refund policy applies to every order placed\nOnline or in a shop.',
    ]) {
      expect(unwrapLines(prose)).toBe(prose.replace('\n', ' '));
    }
    // Wrapped prose whose first line is short and whose second opens with a capital or a figure.
    for (const prose of [
      'The warranty on all refurbished laptops now lasts\n24 months from the date of delivery.',
      'The new office moves to\nManchester Piccadilly in March, next to the station.',
      'See [Monitoring Using CloudWatch\nMetrics] in the developer guide for the details.',
    ]) {
      expect(unwrapLines(prose)).toBe(prose.replace('\n', ' '));
    }
    // A title in capitals or in title case may stand above a shorter line, and one may follow an
    // underline.
    expect(unwrapLines('OPENING HOURS AND CONTACT\nMonday to Friday.')).toBe(
      'OPENING HOURS AND CONTACT\nMonday to Friday.',
    );
    expect(unwrapLines('Policy\n======\nReturns and refunds\nUnused items can be returned.')).toBe(
      'Policy\n======\nReturns and refunds\nUnused items can be returned.',
    );
    // Only the first line of a block is a title: inside a paragraph, a short line is wrapped text.
    expect(unwrapLines('Orders ship daily from our warehouse in\nLeeds\nBy courier.')).toBe(
      'Orders ship daily from our warehouse in Leeds By courier.',
    );
    expect(sentences(text).map((s) => s.text)).toEqual([
      'Returns and refunds',
      'Unused items can be returned within 30 days.',
      'Refunds take\n14 days.',
      'WARRANTY',
      'All products carry a two-year warranty.',
    ]);
  });

  it('breaks around an underline', () => {
    const text = 'Shipping\n========\nOrders ship daily.\n---\nNext part.';
    expect(unwrapLines(text)).toBe(text);
  });

  it('does not change the length of the text', () => {
    const text = 'a\nb\n\nc\r\nd';
    expect(unwrapLines(text)).toHaveLength(text.length);
  });
});

describe('questions', () => {
  it('reads a negation written as a contraction', () => {
    expect(isNegated("The primary doesn't acknowledge the page")).toBe(true);
    expect(isNegated('You can’t swap a week')).toBe(true);
    expect(affirmedWords("The pager doesn't escalate alerts")).toEqual(['pager']);
    expect(affirmedWords("It won't restart")).toEqual([]);
  });

  it('tells yes/no questions from open ones', () => {
    expect(isPolar('Is descaling damage covered by the warranty?')).toBe(true);
    expect(isPolar('Can I fly business class?')).toBe(true);
    expect(isPolar('What does the warranty cover?')).toBe(false);
    expect(isPolar('Island hopping: how long?')).toBe(false);
  });
});

describe('questionTerms', () => {
  it("does not take a contraction's tail for a term", () => {
    expect(
      questionTerms("Who should I escalate to if I'm stuck? We've tried, you're next, we'll see"),
    ).toEqual(['escal', 'stuck', 'tried', 'next', 'see']);
  });

  it('reads a negative contraction as its words, straight or curly: no "doesn" or "don" term', () => {
    expect(questionTerms("What happens if the primary doesn't respond to a page?")).toEqual([
      'primary',
      'respond',
      'page',
    ]);
    expect(questionTerms('Why won’t the app start, and why can’t I log in?')).toEqual([
      'app',
      'start',
      'log',
    ]);
  });

  it('reads "use" as part of the frame: what is used is the subject', () => {
    expect(questionTerms('What port does s3rver use by default?')).toEqual([
      'port',
      's3rver',
      'default',
    ]);
  });

  it('leaves out indefinite pronouns, which stand for what is asked and name no subject', () => {
    expect(questionTerms('How long do I have to return something?')).toEqual(['return']);
    expect(questionTerms('Can anyone use the staff car park?')).toEqual(['staff', 'car', 'park']);
  });
});

describe('contentWords', () => {
  it('reads figures joined by dots as one number or version, as PostgreSQL does', () => {
    expect(contentWords('Pondskip 3.0, not 2.3.0: it weighs 7.2 kg.')).toEqual([
      'pondskip',
      '3.0',
      '2.3.0',
      'weigh',
      '7.2',
      'kg',
    ]);
    // "3.0" is not in "2.3.0": a question about a version the sources never name covers less.
    expect(
      questionCoverage('When will Pondskip 3.0 be released?', [
        'Pondskip 2.3.0 was released in February.',
      ])[0],
    ).toBeLessThan(1);
  });

  it('meets a noun of action and its verb on one stem', () => {
    expect(contentWords('investigation investigations investigated investigating')).toEqual([
      'investig',
      'investig',
      'investig',
      'investig',
    ]);
    expect(contentWords('locations located')).toEqual(['locat', 'locat']);
    expect(contentWords('vacation vacationing vacationed')).toEqual(['vacat', 'vacat', 'vacat']);
  });

  it('meets a noun of action and a verb without "-ate" on one stem', () => {
    expect(contentWords('invitations invite invited inviting')).toEqual([
      'invit',
      'invit',
      'invit',
      'invit',
    ]);
    expect(contentWords('installation installs configuration configured')).toEqual([
      'install',
      'install',
      'configur',
      'configur',
    ]);
    expect(contentWords('investigate investigation')).toEqual(['investig', 'investig']);
    // A short stem keeps its "at": "update" is not "upd".
    expect(contentWords('updated update format')).toEqual(['updat', 'updat', 'format']);
  });

  it('does not cut a noun whose stem is another word', () => {
    expect(contentWords('formation formations format formats')).toEqual([
      'formation',
      'formation',
      'format',
      'format',
    ]);
    expect(contentWords('habitation habitats')).toEqual(['habitation', 'habitat']);
  });

  it('reads a verb ending in a silent e and its other forms on one stem', () => {
    expect(contentWords('delete deletes deleted deleting')).toEqual(Array(4).fill('delet'));
    expect(contentWords('include includes included including')).toEqual(Array(4).fill('includ'));
    expect(contentWords('continue continued')).toEqual(['continu', 'continu']);
    expect(contentWords('matches match')).toEqual(['match', 'match']);
    // Short words, and words ending in a vowel sound, keep their e.
    expect(contentWords('file plane phone agree employee')).toEqual([
      'file',
      'plane',
      'phone',
      'agree',
      'employee',
    ]);
  });

  it('takes no forms of "be", "have" and "do", nor "really", for terms', () => {
    expect(questionTerms('Are uploads really being slowed down?')).toEqual([
      'upload',
      'slow',
      'down',
    ]);
    expect(contentWords('having doing')).toEqual([]);
  });

  it('leaves short words ending in -ation whole', () => {
    expect(contentWords('station stations nation nations')).toEqual([
      'station',
      'station',
      'nation',
      'nation',
    ]);
  });
});
