import {
  assessConfidence,
  gateEvidence,
  gateQuestion,
  normalisedCosine,
  questionCoverage,
  relevanceOf,
  type ConfidenceCalibration,
  unmatchedNames,
} from './confidence';
import { namedTerms } from './text';

// Cosine-only hits, so that relevance is the score itself.
const hits = (scores: number[]) => scores.map((score) => ({ score, keywordCoverage: 0 }));

describe('confidence gate without an evidence floor (the plain mean of the top 5)', () => {
  const calib: ConfidenceCalibration = { cosineWeight: 1, high: 0.75, medium: 0.6 };
  it('uses the mean of the top 5 and the boundaries are inclusive', () => {
    expect(assessConfidence(hits([0.75, 0.75, 0.75, 0.75, 0.75, 0]), calib)).toEqual({
      avgRelevance: 0.75,
      level: 'high',
      evidenceChunks: 5,
    });
    expect(assessConfidence(hits([0.6, 0.6, 0.6, 0.6, 0.6]), calib).level).toBe('medium');
    expect(assessConfidence(hits([0.6, 0.6, 0.6, 0.6, 0.59]), calib).level).toBe('low');
    expect(assessConfidence([], calib)).toEqual({
      avgRelevance: 0,
      level: 'low',
      evidenceChunks: 0,
    });
  });
  it('a floor of 0 is the plain mean', () => {
    const scores = hits([0.9, 0.5, 0.25, 0, 0]);
    expect(assessConfidence(scores, { ...calib, evidenceFloor: 0 })).toEqual(
      assessConfidence(scores, calib),
    );
    expect(assessConfidence(scores, calib)).toMatchObject({ evidenceChunks: 5, level: 'low' });
  });
  it('mixes cosine with keyword coverage by the calibrated weight', () => {
    expect(
      relevanceOf({ score: 0.2, keywordCoverage: 1 }, { cosineWeight: 0.25, high: 1, medium: 0.5 }),
    ).toBeCloseTo(0.8, 10);
  });
});

describe('confidence gate with an evidence floor', () => {
  const calib: ConfidenceCalibration = {
    cosineWeight: 1,
    evidenceFloor: 0.5,
    medium: 0.625,
    high: 0.75,
  };

  it('leaves chunks below the floor out of the mean: one strong chunk among unrelated ones', () => {
    // A small corpus: the one relevant document and four unrelated ones.
    const result = assessConfidence(hits([0.75, 0.25, 0.125, 0.125, 0]), calib);
    expect(result).toEqual({ avgRelevance: 0.75, level: 'high', evidenceChunks: 1 });
    // The plain mean of the same hits would have been 0.25: low.
    expect(
      assessConfidence(hits([0.75, 0.25, 0.125, 0.125, 0]), { ...calib, evidenceFloor: 0 }),
    ).toMatchObject({ level: 'low' });
  });

  it('counts a chunk exactly at the floor as evidence, and one just below it not', () => {
    expect(assessConfidence(hits([0.75, 0.5]), calib)).toEqual({
      avgRelevance: 0.625,
      level: 'medium',
      evidenceChunks: 2,
    });
    expect(assessConfidence(hits([0.75, 0.4999]), calib)).toEqual({
      avgRelevance: 0.75,
      level: 'high',
      evidenceChunks: 1,
    });
  });

  it('keeps the thresholds inclusive on the mean of the evidence', () => {
    expect(assessConfidence(hits([0.625, 0.1]), calib).level).toBe('medium');
    expect(assessConfidence(hits([0.6249, 0.1]), calib).level).toBe('low');
    expect(assessConfidence(hits([0.75, 0.75, 0.1]), calib).level).toBe('high');
  });

  it('evidence that is weak on average still gates low', () => {
    // Every chunk passes the floor, but their mean is below medium.
    expect(assessConfidence(hits([0.625, 0.5, 0.5, 0.5, 0.5]), calib)).toEqual({
      avgRelevance: 0.525,
      level: 'low',
      evidenceChunks: 5,
    });
  });

  it('is low with avg_relevance 0 when no chunk reaches the floor, whatever the thresholds', () => {
    expect(assessConfidence(hits([0.4999, 0.4, 0.3]), calib)).toEqual({
      avgRelevance: 0,
      level: 'low',
      evidenceChunks: 0,
    });
    expect(assessConfidence(hits([0.4999, 0.4, 0.3]), { ...calib, medium: 0, high: 0 }).level).toBe(
      'low',
    );
  });

  it('only looks at the top 5 in retrieval order', () => {
    // A strong sixth chunk does not count; a weak first one does not hide a strong second.
    expect(assessConfidence(hits([0.1, 0.1, 0.1, 0.1, 0.1, 0.9]), calib).level).toBe('low');
    expect(assessConfidence(hits([0.1, 0.75, 0.1, 0.1, 0.1, 0.1]), calib)).toMatchObject({
      avgRelevance: 0.75,
      evidenceChunks: 1,
    });
  });

  it('applies the floor to the weighted relevance, not to the cosine alone', () => {
    // Cosine 0.25 but full keyword coverage: relevance 0.5 * 0.25 + 0.5 * 1 = 0.625.
    const mixed = { ...calib, cosineWeight: 0.5 };
    expect(assessConfidence([{ score: 0.25, keywordCoverage: 1 }], mixed)).toEqual({
      avgRelevance: 0.625,
      level: 'medium',
      evidenceChunks: 1,
    });
  });
});

describe('gate evidence: background-normalised cosine and question coverage', () => {
  it('measures a cosine in standard deviations above the question background, / 10', () => {
    expect(normalisedCosine(0.5, { mean: 0.1, sd: 0.1 })).toBeCloseTo(0.4, 10);
    // The same standing above its own background on another model's scale means the same.
    expect(normalisedCosine(0.86, { mean: 0.7, sd: 0.04 })).toBeCloseTo(0.4, 10);
    expect(normalisedCosine(0.05, { mean: 0.1, sd: 0.1 })).toBe(0);
    expect(normalisedCosine(0.99, { mean: 0, sd: 0.01 })).toBe(1);
  });

  it('does not count the interrogative frame as missing evidence, and stems both sides', () => {
    const [answer, other] = questionCoverage('How long do refunds take?', [
      'Refunds are issued within 14 days.',
      'Shipping is free above 75 EUR.',
    ]);
    expect(answer).toBe(1);
    expect(other).toBe(0);
    // "probation period" against "Probation lasts six months": one of its two terms, as rare.
    const [p] = questionCoverage('How long is the probation period?', [
      'Probation lasts six months.',
      'The notice period is one month.',
    ]);
    expect(p).toBeCloseTo(0.5, 10);
  });

  it('gates the top 5 on the normalised cosine and coverage, raw cosine without a background', () => {
    const top = [
      // The search's coverage counts "long" and "take" too: half of the question's words.
      { score: 0.5, keywordCoverage: 0.5, text: 'Refunds are issued within 14 days.' },
      { score: 0.2, keywordCoverage: 0, text: 'Tents carry a warranty.' },
    ];
    expect(gateEvidence('How long do refunds take?', top, { mean: 0.1, sd: 0.1 })).toEqual([
      { score: expect.closeTo(0.4, 10), keywordCoverage: 0.75 },
      { score: expect.closeTo(0.1, 10), keywordCoverage: 0 },
    ]);
    expect(gateEvidence('How long do refunds take?', top, null)[0]!.score).toBe(0.5);
  });
});

describe('a question that names something its sources never mention', () => {
  const payments = [
    {
      score: 0.9,
      keywordCoverage: 0.6,
      text: 'We accept Visa, Mastercard and bank transfer. You pay when you order.',
      title: 'Payment',
    },
    { score: 0.3, keywordCoverage: 0.1, text: 'Returns are free within 30 days.' },
  ];
  const cal = { cosineWeight: 0.5, evidenceFloor: 0.3, medium: 0.4, high: 0.6 };

  it('names what it asks about: letters with figures, and capitalised words after the first', () => {
    expect(namedTerms('Can I pay with PayPal?')).toEqual(['paypal']);
    expect(namedTerms('What does error E7 mean?')).toEqual(['e7']);
    expect(namedTerms("Can I bring my dog to the Gull's Rest?")).toEqual(['gull', 'rest']);
    expect(namedTerms('What did Beyoncé sing?')).toEqual(['beyonc']);
    // Acronyms are often spelt out, ordinals and demonyms name nothing, nor does title case.
    expect(namedTerms('Which CMS did we pick?')).toEqual([]);
    expect(namedTerms('Who pays for shipping from outside the EU?')).toEqual([]);
    expect(namedTerms('Which European leader came 4th?')).toEqual([]);
    expect(namedTerms('Do French, Dutch or Southern customers pay VAT in Japanese?')).toEqual([]);
    // A place that ends like an adjective of a people is still a name.
    expect(namedTerms('Do you ship to Japan, Oman or Pakistan?')).toEqual([
      'japan',
      'oman',
      'pakistan',
    ]);
    expect(namedTerms('Is there an office in Zurich or Bern?')).toEqual(['zurich', 'bern']);
    expect(namedTerms('How Long Do Refunds Take?')).toEqual([]);
    // A capital that opens a sentence of the question, "I'd", and two-letter titles name nothing.
    expect(
      namedTerms('I ordered a jacket. Unfortunately it does not fit. Can I return it?'),
    ).toEqual([]);
    expect(
      namedTerms("Hi! Quick question: what documents do I need if I'd like to return?"),
    ).toEqual([]);
    expect(namedTerms("Is there parking at St Mary's?")).toEqual(['mary']);
    // Hyphens and apostrophes inside a name are dropped: "Wi-Fi" is "wifi", "O'Brien's" "obrien".
    expect(namedTerms("Is the Wi-Fi at O'Brien's pub free?")).toEqual(['wifi', 'obrien']);
  });

  it('refuses it, however close the sources are, and says which names are missing', () => {
    const verdict = gateQuestion('Can I pay with PayPal?', payments, null, cal);
    expect(verdict).toMatchObject({ level: 'low', evidenceChunks: 0, avgRelevance: 0 });
    expect(verdict.unmatchedNames).toEqual(['paypal']);
    expect(gateQuestion('Can I pay from Japan?', payments, null, cal)).toMatchObject({
      level: 'low',
      unmatchedNames: ['japan'],
    });
    // The same sources answer a question whose names they hold (the title counts).
    expect(gateQuestion('Can I pay with Visa?', payments, null, cal)).toMatchObject({
      level: 'high',
      unmatchedNames: [],
    });
    expect(unmatchedNames('What is the Payment page about?', payments)).toEqual([]);
  });

  it('takes a misspelt name or two words written as one for the name', () => {
    const hits = [{ text: 'Genghis Khan and the Warsaw City Council met at the Super Bowl.' }];
    expect(unmatchedNames('Who were Ghengis Khan and the Warsaw City Counil?', hits)).toEqual([]);
    expect(unmatchedNames('Who sang at the Superbowl?', hits)).toEqual([]);
    // The other way round too, and a name that starts or ends a longer word.
    const joined = [
      { text: 'The Superbowl is sold out. Acme Corporation has WiFi and a helpdesk.' },
    ];
    expect(unmatchedNames('Who plays at the Super Bowl?', joined)).toEqual([]);
    expect(unmatchedNames('Does Acme Corp have Wi-Fi at the Help Desk?', joined)).toEqual([]);
    // Short names must match exactly: E7 is not E2.
    expect(
      unmatchedNames('What does E7 mean?', [{ text: 'Error E2 means the sensor failed.' }]),
    ).toEqual(['e7']);
  });
});
