import path from 'node:path';
import {
  emptyTally,
  holdsFact,
  loadNaturalSets,
  naturalCorpus,
  tally,
  type NaturalQuestion,
} from './natural';

const question = (facts: string[] | null): NaturalQuestion => ({
  set: 's',
  question: 'How long is the probation period?',
  facts,
  split: 'heldout',
});

describe('natural question sets', () => {
  it('counts a fact only when the gated answer holds it, and the answer gate aside apart', () => {
    const t = emptyTally();
    const q = question(['six months']);
    tally(t, q, {
      answered: true,
      text: 'Probation lasts Six Months. [1]',
      ungated: 'Six months.',
    });
    // Refused by the gate, though the answerer had it.
    tally(t, q, { answered: false, text: 'I do not know.', ungated: 'It lasts six months.' });
    // Answered, but not with the fact ("sixty months" is not "six months").
    tally(t, q, { answered: true, text: 'Sixty months.', ungated: 'Sixty months.' });
    expect(t).toEqual({
      answerable: 3,
      answeredWithFact: 1,
      factInAnswer: 2,
      unanswerable: 0,
      refused: 0,
    });
    tally(t, question(null), { answered: false, text: '', ungated: 'Anything.' });
    tally(t, question(null), { answered: true, text: 'Something.', ungated: 'Something.' });
    expect(t).toMatchObject({ unanswerable: 2, refused: 1 });
  });

  it('splits each set by position: even answerable and unanswerable questions fit, odd held out', async () => {
    const sets = await loadNaturalSets(path.join(__dirname, '../../eval/natural'));
    expect(sets.map((s) => s.name)).toEqual([
      'clinical-lab',
      'council-services',
      'espresso-manual',
      'hr-handbook',
      'package-readmes',
      'project-meetings',
      'saas-help-centre',
      'sample-handbook',
      'tool-docs',
    ]);
    for (const set of sets) {
      const answerable = set.questions.filter((q) => q.facts !== null);
      const unanswerable = set.questions.filter((q) => q.facts === null);
      for (const group of [answerable, unanswerable])
        group.forEach((q, i) => expect(q.split).toBe(i % 2 === 0 ? 'fit' : 'heldout'));
    }
    const all = sets.flatMap((s) => s.questions);
    expect(all.filter((q) => q.facts !== null).length).toBeGreaterThanOrEqual(90);
    expect(all.filter((q) => q.facts === null).length).toBeGreaterThanOrEqual(30);
  });

  it('reads the documents a corpus.json names: a folder, or files under names of their own', async () => {
    const sets = await loadNaturalSets(path.join(__dirname, '../../eval/natural'));
    const readmes = sets.find((s) => s.name === 'package-readmes')!;
    const { corpus } = await naturalCorpus(readmes);
    expect(corpus.map((d) => d.id)).toContain('middy-core-README');
    expect(corpus.find((d) => d.id === 'busboy-README')!.text).toContain('busboy');
    const handbook = sets.find((s) => s.name === 'sample-handbook')!;
    expect((await naturalCorpus(handbook)).corpus.length).toBe(5);
  });

  it("states every answerable question's fact in one of its set's documents", async () => {
    const sets = await loadNaturalSets(path.join(__dirname, '../../eval/natural'));
    for (const set of sets) {
      const { corpus } = await naturalCorpus(set);
      // One document at a time: a fact must not be made of the end of one and the start of another.
      const missing = set.questions.filter(
        (q) => q.facts !== null && !corpus.some((d) => holdsFact(d.text, q.facts!)),
      );
      expect({ set: set.name, missing: missing.map((q) => q.question) }).toEqual({
        set: set.name,
        missing: [],
      });
    }
  });
});
