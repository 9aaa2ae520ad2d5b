/**
 * EventBridge's schedule expressions, read and run as EventBridge runs them: `rate(value unit)`
 * and `cron(minutes hours day-of-month month day-of-week year)`, in UTC for a rule (it has no time
 * zone), in a schedule's own time zone for EventBridge Scheduler (`nextCronIn`). Pure: parsing
 * and "when is the next run", no timers.
 */

/** A schedule expression EventBridge would refuse (`PutRule` answers `ValidationException`). */
export class InvalidScheduleExpressionError extends Error {
  override readonly name = 'InvalidScheduleExpressionError';
}

export type ScheduleExpression =
  | { readonly kind: 'rate'; readonly text: string; readonly everySeconds: number }
  | { readonly kind: 'cron'; readonly text: string; readonly cron: Cron };

/** A day of a month, as the day-of-month and day-of-week fields test it. */
interface Day {
  readonly year: number;
  readonly month: number; // 1–12
  readonly day: number; // 1–31
  readonly weekday: number; // EventBridge's 1 (Sunday) – 7 (Saturday)
  readonly lastDay: number; // the month's last day
}

export interface Cron {
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly years: ReadonlySet<number>;
  /** The day-of-month or the day-of-week field (the other one is `?`). */
  readonly day: (d: Day) => boolean;
}

const RATE_UNITS: Record<string, number> = { minute: 60, hour: 3600, day: 86_400 };
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const FIRST_YEAR = 1970;
const LAST_YEAR = 2199;

const invalid = (text: string, why: string) =>
  new InvalidScheduleExpressionError(`Parameter ScheduleExpression is not valid: ${text} (${why})`);

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

/** One value of a field: a number in range or (month, weekday) its three-letter name. */
const fieldValue = (raw: string, spec: FieldSpec, fail: (why: string) => Error): number => {
  const named = spec.names?.indexOf(raw.toUpperCase()) ?? -1;
  const value = named >= 0 ? named + spec.min : /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= spec.min && value <= spec.max))
    throw fail(
      `${spec.name} takes ${spec.min}–${spec.max}${spec.names ? ' or a name' : ''}, not ${raw}`,
    );
  return value;
};

/**
 * A field of `,`-separated items, each `*`, a value, a range `a-b` (wrapping past the maximum
 * when `a > b`, as `FRI-MON`), any of them with an increment `/n`.
 */
const valueSet = (field: string, spec: FieldSpec, fail: (why: string) => Error): Set<number> => {
  const values = new Set<number>();
  const span = spec.max - spec.min + 1;
  for (const item of field.split(',')) {
    const [range = '', stepText, extra] = item.split('/');
    if (extra !== undefined) throw fail(`${spec.name}: ${item} has two increments`);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1 || (stepText !== undefined && !/^\d+$/.test(stepText)))
      throw fail(`${spec.name}: the increment of ${item} is not a positive whole number`);
    let from: number;
    let to: number;
    if (range === '*') [from, to] = [spec.min, spec.max];
    else {
      const [a = '', b, more] = range.split('-');
      if (more !== undefined || a === '')
        throw fail(`${spec.name}: ${item} is not a value or range`);
      from = fieldValue(a, spec, fail);
      // `5/15` runs from 5 to the field's end, every 15.
      to = b === undefined ? (stepText === undefined ? from : spec.max) : fieldValue(b, spec, fail);
    }
    const length = (((to - from) % span) + span) % span;
    for (let i = 0; i <= length; i += step) values.add(spec.min + ((from - spec.min + i) % span));
  }
  return values;
};

const weekdayOf = (year: number, month: number, day: number) =>
  new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 1;

/** The weekday (Monday–Friday) nearest to `day`, in its own month (`15W`, `LW`). */
const nearestWeekday = (d: Day, day: number) => {
  const weekday = weekdayOf(d.year, d.month, day);
  if (weekday === 7) return day === 1 ? 3 : day - 1; // Saturday: Friday, or Monday the 3rd
  if (weekday === 1) return day === d.lastDay ? day - 2 : day + 1; // Sunday: Monday, or Friday
  return day;
};

/** The day-of-month field: values, ranges, increments, `L` (the last day), `nW`, `LW`. */
const dayOfMonth = (field: string, fail: (why: string) => Error): ((d: Day) => boolean) => {
  const spec = { name: 'day-of-month', min: 1, max: 31 };
  const tests = field.split(',').map((item): ((d: Day) => boolean) => {
    if (item === 'L') return (d) => d.day === d.lastDay;
    if (item === 'LW') return (d) => d.day === nearestWeekday(d, d.lastDay);
    const w = /^(\d+)W$/.exec(item);
    if (w) {
      const target = fieldValue(w[1] ?? '', spec, fail);
      return (d) => target <= d.lastDay && d.day === nearestWeekday(d, target);
    }
    const days = valueSet(item, spec, fail);
    return (d) => days.has(d.day);
  });
  return (d) => tests.some((t) => t(d));
};

/** The day-of-week field (1 = Sunday): values, ranges, `L` (Saturday), `nL` (the last), `n#k`. */
const dayOfWeek = (field: string, fail: (why: string) => Error): ((d: Day) => boolean) => {
  const spec = { name: 'day-of-week', min: 1, max: 7, names: WEEKDAYS };
  if (field.includes('/')) throw fail('day-of-week takes no increment');
  const items = field.split(',');
  if (field.includes('#') && items.length > 1)
    throw fail('day-of-week with # takes one expression only');
  const tests = items.map((item): ((d: Day) => boolean) => {
    if (item === 'L') return (d) => d.weekday === 7;
    const last = /^(\w+)L$/.exec(item);
    if (last) {
      const weekday = fieldValue(last[1] ?? '', spec, fail);
      return (d) => d.weekday === weekday && d.day + 7 > d.lastDay;
    }
    const nth = /^(\w+)#(\d+)$/.exec(item);
    if (nth) {
      const weekday = fieldValue(nth[1] ?? '', spec, fail);
      const k = Number(nth[2]);
      if (k < 1 || k > 5) throw fail(`day-of-week: ${item} names week ${k} of a month`);
      return (d) => d.weekday === weekday && Math.ceil(d.day / 7) === k;
    }
    const weekdays = valueSet(item, spec, fail);
    return (d) => weekdays.has(d.weekday);
  });
  return (d) => tests.some((t) => t(d));
};

const parseCron = (text: string, body: string): Cron => {
  const fail = (why: string) => invalid(text, why);
  const fields = body.trim().split(/\s+/);
  if (fields.length !== 6)
    throw fail(
      `cron takes 6 fields (minutes hours day-of-month month day-of-week year), not ${fields.length}`,
    );
  const [minutes = '', hours = '', dom = '', month = '', dow = '', year = ''] = fields;
  if ((dom === '?') === (dow === '?'))
    throw fail('one of day-of-month and day-of-week must be ?, and only one');
  return {
    minutes: valueSet(minutes, { name: 'minutes', min: 0, max: 59 }, fail),
    hours: valueSet(hours, { name: 'hours', min: 0, max: 23 }, fail),
    months: valueSet(month, { name: 'month', min: 1, max: 12, names: MONTHS }, fail),
    years: valueSet(year, { name: 'year', min: FIRST_YEAR, max: LAST_YEAR }, fail),
    day: dom === '?' ? dayOfWeek(dow, fail) : dayOfMonth(dom, fail),
  };
};

/** Reads a rule's `ScheduleExpression`; throws InvalidScheduleExpressionError as PutRule would. */
export const parseScheduleExpression = (text: string): ScheduleExpression => {
  const rate = /^rate\((\d+) (minute|hour|day)(s?)\)$/.exec(text);
  if (rate) {
    const value = Number(rate[1]);
    // EventBridge's own rule: `rate(1 minute)`, `rate(5 minutes)`; never `rate(1 minutes)`.
    if (value < 1 || (value === 1) !== (rate[3] === ''))
      throw invalid(text, 'the unit is singular for 1 and plural above');
    return { kind: 'rate', text, everySeconds: value * (RATE_UNITS[rate[2] ?? ''] ?? 0) };
  }
  const cron = /^cron\((.*)\)$/.exec(text);
  if (cron) return { kind: 'cron', text, cron: parseCron(text, cron[1] ?? '') };
  throw invalid(text, 'not rate(value unit) or cron(fields)');
};

const MINUTE_MS = 60_000;

/**
 * The first minute of a cron schedule strictly after `afterMs`, read as UTC (or as a wall clock
 * with no gaps or repeats); undefined if none is left.
 */
export const nextCron = (cron: Cron, afterMs: number): number | undefined => {
  const start = new Date((Math.floor(afterMs / MINUTE_MS) + 1) * MINUTE_MS);
  let year = start.getUTCFullYear();
  let month = start.getUTCMonth() + 1;
  let day = start.getUTCDate();
  // The first candidate day may start mid-day; every later one starts at midnight.
  let fromMinute = start.getUTCHours() * 60 + start.getUTCMinutes();
  while (year <= LAST_YEAR) {
    if (!cron.years.has(year)) {
      [year, month, day, fromMinute] = [year + 1, 1, 1, 0];
      continue;
    }
    if (!cron.months.has(month)) {
      [month, day, fromMinute] = [month + 1, 1, 0];
      if (month > 12) [year, month] = [year + 1, 1];
      continue;
    }
    const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
    const candidate = { year, month, day, weekday: weekdayOf(year, month, day), lastDay };
    if (cron.day(candidate))
      for (let minuteOfDay = fromMinute; minuteOfDay < 1440; minuteOfDay++) {
        const hour = Math.floor(minuteOfDay / 60);
        if (!cron.hours.has(hour)) {
          minuteOfDay = hour * 60 + 59;
          continue;
        }
        if (cron.minutes.has(minuteOfDay % 60))
          return Date.UTC(year, month - 1, day, hour, minuteOfDay % 60);
      }
    [day, fromMinute] = [day + 1, 0];
    if (day > lastDay) [month, day] = [month + 1, 1];
    if (month > 12) [year, month] = [year + 1, 1];
  }
  return undefined;
};

/**
 * When the schedule next runs strictly after `afterMs`: a rate rule every period from the time
 * it was created (the first run one period after it), a cron rule on the minutes it names.
 * Undefined when a cron rule has no run left (its years are past).
 */
export const nextRun = (
  schedule: ScheduleExpression,
  afterMs: number,
  createdAtMs: number,
): number | undefined => {
  if (schedule.kind === 'cron') return nextCron(schedule.cron, afterMs);
  const periodMs = schedule.everySeconds * 1000;
  const periods = Math.max(1, Math.floor((afterMs - createdAtMs) / periodMs) + 1);
  return createdAtMs + periods * periodMs;
};

/** Whether a cron schedule runs in the minute that starts at `minuteMs` (for tests). */
export const runsAt = (schedule: ScheduleExpression, minuteMs: number): boolean => {
  if (schedule.kind !== 'cron') return false;
  const t = new Date(minuteMs);
  const [year, month, day] = [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate()];
  const { cron } = schedule;
  return (
    cron.years.has(year) &&
    cron.months.has(month) &&
    cron.hours.has(t.getUTCHours()) &&
    cron.minutes.has(t.getUTCMinutes()) &&
    cron.day({
      year,
      month,
      day,
      weekday: weekdayOf(year, month, day),
      lastDay: new Date(Date.UTC(year, month, 0)).getUTCDate(),
    })
  );
};

/** The wall clock of `zone` at an instant, as the UTC milliseconds of its fields (minutes). */
const wallOf = (instantMs: number, zone: Intl.DateTimeFormat): number => {
  const f = Object.fromEntries(zone.formatToParts(instantMs).map((p) => [p.type, Number(p.value)]));
  // `hour12: false` writes midnight as 24 in some engines.
  return Date.UTC(f.year ?? 0, (f.month ?? 1) - 1, f.day ?? 1, (f.hour ?? 0) % 24, f.minute ?? 0);
};

/** A zone's offset from UTC at an instant, in milliseconds (whole minutes). */
export const offsetAt = (instantMs: number, zone: Intl.DateTimeFormat): number =>
  wallOf(instantMs, zone) - (instantMs - (instantMs % MINUTE_MS));

/** Each zone's clock, made once: a `DateTimeFormat` costs far more to build than to use. */
const clocks = new Map<string, Intl.DateTimeFormat | undefined>();

/** A time zone's clock, or undefined when `Intl` knows no zone of that name. */
export const zoneClock = (timeZone: string): Intl.DateTimeFormat | undefined => {
  if (!clocks.has(timeZone)) {
    let clock: Intl.DateTimeFormat | undefined;
    try {
      clock = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
      });
    } catch {
      clock = undefined;
    }
    clocks.set(timeZone, clock);
  }
  return clocks.get(timeZone);
};

/**
 * The instants at which a zone's wall clock reads `wallMs` (UTC milliseconds of its fields),
 * earliest first: none in a gap (clocks sprang forward past it), two in an overlap (they fell
 * back over it). Offsets are those a day before and after: real zones change at most once a day.
 */
export const instantsOfWall = (wallMs: number, zone: Intl.DateTimeFormat): number[] => {
  const offsets = new Set([wallMs - 86_400_000, wallMs + 86_400_000].map((t) => offsetAt(t, zone)));
  return [...offsets]
    .map((offset) => wallMs - offset)
    .filter((t) => wallOf(t, zone) === wallMs)
    .sort((a, b) => a - b);
};

/**
 * The next run strictly after `afterMs` of a cron schedule read in a time zone, as EventBridge
 * Scheduler runs it across daylight saving time: a wall time the clocks skip is not run that day,
 * and one they repeat is run once, the first time.
 */
export const nextCronIn = (
  cron: Cron,
  afterMs: number,
  zone: Intl.DateTimeFormat,
): number | undefined => {
  let wall = wallOf(afterMs, zone);
  for (;;) {
    const next = nextCron(cron, wall);
    if (next === undefined) return undefined;
    const [first] = instantsOfWall(next, zone);
    // A repeated wall time already run (its first instant is past) is not run again.
    if (first !== undefined && first > afterMs) return first;
    wall = next;
  }
};
