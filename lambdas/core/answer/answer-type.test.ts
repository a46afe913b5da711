import { expectedAnswerType, holdsAnswerType } from './answer-type';

describe('expected answer type', () => {
  it.each([
    ['How long do refunds take?', 'duration'],
    ['How much does express delivery cost?', 'amount'],
    ['How many tents are in stock?', 'number'],
    ['When is the weekly meeting?', 'date'],
    ['In what year did Tesla die?', 'date'],
    ['Who is the product owner?', 'person'],
    ['Where is the warehouse?', 'place'],
    ['Can I return worn shoes?', 'rule'],
    ['Why was the launch postponed?', 'reason'],
    ['What caused the payment failures on 14 March?', 'reason'],
    ['What was the cause of the outage?', 'reason'],
    ['How big can the photos be?', 'measure'],
    ['How much does the machine weigh?', 'measure'],
    ['Which Node.js version does busboy require?', 'version'],
    ['Which version of LevelDB does it use?', 'version'],
    ['What does the warranty cover?', null],
  ])('"%s" asks for %s', (question, type) => {
    expect(expectedAnswerType(question)).toBe(type);
  });

  it('does not take a duration for an amount: a figure counting time is none', () => {
    expect(holdsAnswerType('Delivery takes 2 to 3 business days.', 'amount')).toBe(false);
    expect(holdsAnswerType('We ship within 5 days.', 'amount')).toBe(false);
    for (const text of ['The fee is 40 per month.', 'The tour costs 25.', 'It sold 1.5 million.'])
      expect(holdsAnswerType(text, 'amount')).toBe(true);
  });

  it("reads a release's number, not any decimal, as a version", () => {
    for (const text of ['### 3.11.0 ###', 'node.js -- v10.16.0 or newer', 'requires node.js 4'])
      expect(holdsAnswerType(text, 'version')).toBe(true);
    for (const text of ['In standby it uses less than 0.5 W.', 'Fixed a bug in the parser.'])
      expect(holdsAnswerType(text, 'version')).toBe(false);
  });

  it('reads a run of whitespace, line breaks included, as one space', () => {
    expect(holdsAnswerType('Refunds take 14\n\n      days.', 'duration')).toBe(true);
    expect(holdsAnswerType(`1${' '.repeat(30_000)}x`, 'duration')).toBe(false);
  });

  it('recognises the kinds in text', () => {
    expect(holdsAnswerType('Refunds are issued within 14 days.', 'duration')).toBe(true);
    expect(
      holdsAnswerType('Standard delivery takes three to five business days.', 'duration'),
    ).toBe(true);
    expect(holdsAnswerType('Refunds go to the original payment method.', 'duration')).toBe(false);
    // How often is not how long.
    expect(holdsAnswerType('Trains leave every two hours.', 'duration')).toBe(false);
    expect(
      holdsAnswerType('Trains leave every two hours; the trip takes 3 hours.', 'duration'),
    ).toBe(true);
    expect(holdsAnswerType('Express delivery costs 14.95 EUR.', 'amount')).toBe(true);
    expect(holdsAnswerType('The cathedral was finished in 1880.', 'date')).toBe(true);
    expect(holdsAnswerType('The decision was made by Sofia Martens.', 'person')).toBe(true);
    expect(holdsAnswerType('the decision was made by the team.', 'person')).toBe(false);
    expect(holdsAnswerType('Worn footwear cannot be returned.', 'rule')).toBe(true);
    expect(holdsAnswerType('The launch moves because the audit is late.', 'reason')).toBe(true);
    expect(holdsAnswerType('The launch moves to 17 June.', 'reason')).toBe(false);
    expect(holdsAnswerType('Photos of up to 10 MB each.', 'measure')).toBe(true);
    expect(holdsAnswerType('Lena interviews five customers.', 'measure')).toBe(false);
    expect(holdsAnswerType('A snapshot holds at most 20GiB.', 'measure')).toBe(true);
  });

  it("reads a file's path or a web address as where something is", () => {
    expect(holdsAnswerType('The file lives at ~/.config/tarn/tarn.toml.', 'place')).toBe(true);
    expect(holdsAnswerType('Files are restored to ./restore by default.', 'place')).toBe(true);
    expect(holdsAnswerType('Logs are written to /var/log/tarn.', 'place')).toBe(true);
    expect(holdsAnswerType('Download it from https://example.com/tarn.', 'place')).toBe(true);
    expect(holdsAnswerType('Settings are kept in C:\\ProgramData\\Tarn.', 'place')).toBe(true);
    // A unit per time, a pair of words, a bare figure: no path.
    expect(holdsAnswerType('It costs 40 EUR/month, 24/7, and/or by card.', 'place')).toBe(false);
    expect(holdsAnswerType('Files are restored to a new folder.', 'place')).toBe(false);
  });
});
