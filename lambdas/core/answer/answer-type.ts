/**
 * What kind of answer a question asks for, and whether a sentence holds one: a duration for "how
 * long", an amount for "how much", a number for "how many", a date or time for "when", a person
 * or organisation for "who", a place, a path or a web address for "where", a rule for "can I", a
 * reason for "why", a size or weight for "how big" and "how heavy", a version number for "which
 * version". The offline answerer prefers
 * sentences that hold the expected kind (./extractive.ts). Recognised by patterns over
 * English text; a question of another kind ("what does the warranty cover") expects nothing in
 * particular.
 */

export type AnswerType =
  | 'duration'
  | 'amount'
  | 'number'
  | 'measure'
  | 'date'
  | 'version'
  | 'person'
  | 'place'
  | 'rule'
  | 'reason';

const NUMBER_WORD =
  '(?:\\d[\\d,.]*|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|hundred|few|several|many)';
const COUNT =
  '(?:\\d[\\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|hundred|dozens?|thousands?|millions?|billions?)';
const UNIT = '(?:second|minute|hour|day|night|week|fortnight|month|quarter|year|decade|centur)';
const MONTH =
  '(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)';
/** Units of size, weight, speed, power and data. */
const MEASURE_UNIT =
  '(?:mm|cm|m|km|metres?|meters?|miles?|acres?|hectares?|inch(?:es)?|ft|feet|mg|g|kg|grams?|kilos?|kilograms?|tonnes?|tons?|lbs?|pounds?|ml|cl|l|litres?|liters?|bar|psi|w|kw|watts?|v|volts?|amps?|hz|kb|mb|gb|tb|kib|mib|gib|tib|bytes?|kbps|mbps|gbps|km/h|mph|°c|°f|degrees?|%|percent|px|pixels?|dpi)';
const WEEKDAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';

/**
 * A figure on its own, unless it counts time: "2 to 3 business days" is a duration, not an amount
 * ("40 per month" still is one).
 */
const BARE_FIGURE = `\\b\\d[\\d,.]*\\b(?![\\s-]+(?:(?:to|or|and)[\\s-]+\\d[\\d,.]*[\\s-]+)?(?:(?!per\\b|an?\\b|each\\b)\\w+[\\s-]+)?${UNIT}s?\\b)`;

const DETECT: Readonly<Record<AnswerType, RegExp>> = {
  duration: new RegExp(
    `\\b(?<!\\bevery[\\s-]+)${NUMBER_WORD}(?:[\\s-]+(?:to|or|and)[\\s-]+${NUMBER_WORD})?[\\s-]+(?:\\w+[\\s-]+)?${UNIT}s?\\b|\\b(?:instantly|immediately|same day|overnight|weekly|monthly|annually|daily)\\b`,
    'i',
  ),
  amount: new RegExp(
    `[$€£¥]\\s?\\d|\\b\\d[\\d,.]*\\s?(?:%|percent|per cent|eur|euros?|usd|dollars?|gbp|pounds?|cents?|kg|g|ml|l|litres?|liters?|bar|w|watts?|v|mm|cm|m|km|°c)\\b|\\b(?:free|no charge|at cost)\\b|${BARE_FIGURE}`,
    'i',
  ),
  number: new RegExp(`\\b${COUNT}\\b`, 'i'),
  measure: new RegExp(`\\b\\d[\\d,.]*\\s?${MEASURE_UNIT}\\b`, 'i'),
  date: new RegExp(
    `\\b(?:1[0-9]{3}|20[0-9]{2})s?\\b|\\b${MONTH}\\b|\\b${WEEKDAY}s?\\b|\\b\\d{1,2}[:.]\\d{2}\\b|\\b(?:century|decade|morning|afternoon|evening|noon|midnight|spring|summer|autumn|winter|yesterday|today|tomorrow|week|month|year|before|after|until|during)\\b`,
    'i',
  ),
  // A release's number ("3.11.0", "v10.16.0", "2.x"), or a figure after the name of what it
  // numbers ("node.js 4", "version 2"); a decimal alone ("0.5 W") is not one.
  version:
    /\bv\d+(?:\.\d+)*\b|\b\d+\.\d+\.\d+\b|\b\d+\.x\b|\b(?:version|release|node(?:\.js)?)\s+v?\d+(?:\.\d+)*\b/i,
  // A capitalised word that does not open the sentence.
  person: /(?<=[\p{Ll},;:]\s+(?:\p{Lu}\.\s*)?)\p{Lu}[\p{L}.'-]+/u,
  // A named place, or a file's path or a web address: where software keeps or puts things. The
  // scheme's length is bounded, so that a long run of letters and hyphens is read in linear time.
  place:
    /\b(?:in|at|from|to|near|into|across|outside|inside)\s+(?:the\s+)?\p{Lu}[\p{L}-]+|(?<![\p{L}\p{N}])(?:(?:~|\.{1,2})\/[\w.-]+|\/[\w.-]+\/[\w.-]+)(?:\/[\w.-]*)*|\b[a-z][a-z0-9+.-]{0,15}:\/\/\S+|\b[A-Z]:\\\S+/u,
  reason:
    /\b(?:because|since|due to|owing to|thanks to|as a result|so that|in order to|caused by|the reason|reasons?|why|therefore|so as to)\b/i,
  rule: /\b(?:can|cannot|can't|may|must|mustn't|not|only|allowed|permitted|required|need|needs|should|prohibited|forbidden|eligible|entitled|unless|if|up to|at most|at least|maximum|minimum)\b/i,
};

/** The kind of answer the question asks for, or null when it does not say. */
export function expectedAnswerType(question: string): AnswerType | null {
  const q = question.trim().toLowerCase();
  if (
    /\bhow (?:long|soon)\b|\bhow many (?:days|weeks|months|years|hours|minutes)\b|\bwhat(?:'s| is)? the (?:deadline|duration|period)\b/.test(
      q,
    )
  )
    return 'duration';
  if (
    /\bhow (?:big|large|small|heavy|light|tall|high|wide|deep|fast|strong|powerful)\b|\bhow much does (?:it|the \w+|\w+) weigh\b|\bwhat(?:'s| is)? (?:the |its )?(?:size|weight|height|width|depth|length|capacity|voltage|power|resolution|speed)\b/.test(
      q,
    )
  )
    return 'measure';
  if (
    /\bhow much\b|\bwhat(?:'s| is| does)? (?:it |the )?(?:cost|price|fee|charge|amount|rate|budget)\b|\bwhat percentage\b/.test(
      q,
    )
  )
    return 'amount';
  if (/\bhow many\b|\bhow (?:often|far|old)\b|\bwhat number\b/.test(q)) return 'number';
  if (/\b(?:which|what) (?:[\w.-]+ )?version\b|\bsince (?:which|what) release\b/.test(q))
    return 'version';
  if (
    /^when\b|\bwhen (?:is|was|were|did|does|do|will|can|should|are)\b|\bwhat (?:year|date|day|time|month|century|decade)\b|\bwhich (?:year|date|day|month|century)\b|\bby when\b/.test(
      q,
    )
  )
    return 'date';
  if (
    /^(?:who|whom)\b|\bwho (?:is|was|were|did|does|do|will|can|should|are|has|had)\b|\bwhose\b|\bwhich (?:person|company|team|organi[sz]ation|group|manager)\b/.test(
      q,
    )
  )
    return 'person';
  if (
    /^where\b|\bwhere (?:is|was|were|did|does|do|can|should|are)\b|\bwhich (?:country|city|place|region)\b/.test(
      q,
    )
  )
    return 'place';
  if (
    /^why\b|\bwhy (?:is|was|were|did|does|do|has|have|had|should|must|can|will)\b|\bwhat (?:is|was|were) the (?:reasons?|causes?)\b|\bwhat (?:caused|causes|led to)\b|\bhow come\b/.test(
      q,
    )
  )
    return 'reason';
  if (/^(?:can|may|am|is it|are we|do i|does|must|should|is there|are there)\b/.test(q))
    return 'rule';
  return null;
}

/**
 * True when the text holds an answer of the kind. Runs of whitespace are read as one space first:
 * the patterns allow any whitespace between words, and a long run would make them rescan it from
 * every figure (the duration pattern took 0.8 s on 30,000 spaces after a figure).
 */
export function holdsAnswerType(text: string, type: AnswerType): boolean {
  return DETECT[type].test(text.replace(/\s+/g, ' '));
}
