/**
 * The UTC periods the limits count in: the minute of the rate limit, the day of the cost cap and
 * the month of the quotas, as the sortable strings used in storage keys, with their reset times.
 */

export interface Periods {
  /** `yyyy-mm-ddThh:mm`: sorts lexically in time order. */
  readonly minute: string;
  /** `yyyy-mm-dd`. */
  readonly day: string;
  /** `yyyy-mm`. */
  readonly month: string;
  readonly minuteResetsAt: Date;
  readonly dayResetsAt: Date;
  readonly monthResetsAt: Date;
}

/** The periods `now` falls in (UTC). */
export function periodsAt(now: Date): Periods {
  const iso = now.toISOString();
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  return {
    minute: iso.slice(0, 16),
    day: iso.slice(0, 10),
    month: iso.slice(0, 7),
    minuteResetsAt: new Date(Date.UTC(y, m, d, now.getUTCHours(), now.getUTCMinutes() + 1)),
    dayResetsAt: new Date(Date.UTC(y, m, d + 1)),
    monthResetsAt: new Date(Date.UTC(y, m + 1, 1)),
  };
}

/** Whole seconds since the epoch, as HTTP rate-limit headers and DynamoDB TTL want them. */
export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** Seconds until `resetAt`, at least 1 (a `Retry-After: 0` invites a busy loop). */
export function secondsUntil(now: Date, resetAt: Date): number {
  return Math.max(1, Math.ceil((resetAt.getTime() - now.getTime()) / 1000));
}
