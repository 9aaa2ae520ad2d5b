/**
 * The edge's CloudWatch alarms, as an account's: each running stack's (its template's, adopted
 * while its runtime runs) and any put through the API. Each keeps its configuration (what
 * `PutMetricAlarm` set since included), its state and history, and whether its actions are on
 * (`DisableAlarmActions` turns them off, as an operator silencing a noisy alarm does).
 *
 * CloudWatch evaluates an alarm every minute. The edge evaluates it each time it is read, which
 * gives the state CloudWatch would show at that moment; a state set by `SetAlarmState` holds
 * until the next evaluation, a minute later at most, as on AWS.
 */
import { isDeepStrictEqual } from 'node:util';
import { type AlarmState, evaluateAlarm, type MetricAlarm, metricOf } from './alarms.ts';
import type { MetricId, StatisticSet } from './metrics.ts';

/** An alarm a stack's template declares. */
export interface StackAlarm {
  readonly logicalId: string;
  readonly alarm: MetricAlarm;
}

export class AlarmNotFoundError extends Error {
  override readonly name = 'AlarmNotFoundError';
}

export interface AlarmRecord {
  readonly alarm: MetricAlarm;
  /** The template's logical id, for an alarm the stack declares. */
  readonly logicalId: string | undefined;
  readonly arn: string;
  state: AlarmState;
  reason: string;
  reasonData: string | undefined;
  stateUpdatedMs: number;
  /** When the state last changed (an evaluation that keeps it updates only `stateUpdatedMs`). */
  transitionedMs: number;
  configurationUpdatedMs: number;
  /** A state set by `SetAlarmState` holds until then. */
  heldUntilMs: number | undefined;
}

/** A change of an alarm's state whose actions are to run. */
export interface AlarmChange {
  /** The alarm as it is after the change. */
  readonly record: AlarmRecord;
  readonly from: AlarmState;
  readonly actions: readonly string[];
}

/** Runs a change's actions (at its own pace), telling `note` each action's outcome. */
export type ActionRunner = (change: AlarmChange, note: (summary: string) => void) => void;

export interface HistoryItem {
  readonly alarmName: string;
  readonly timestampMs: number;
  readonly type: 'ConfigurationUpdate' | 'StateUpdate' | 'Action';
  readonly summary: string;
  /**
   * CloudWatch's `HistoryData` of a state change: the old and new states with their reasons,
   * `{"version":"1.0","oldState":{"stateValue","stateReason","stateReasonData"},"newState":…}`.
   */
  readonly data?: string;
}

/** A state in a change's `HistoryData`: its reason data as an object, not the text it is kept as. */
const historyState = (state: AlarmState, reason: string, reasonData: string | undefined) => {
  // Reason data is JSON wherever it comes from: an evaluation, or `SetAlarmState`, which checks.
  const stateReasonData: unknown = reasonData === undefined ? undefined : JSON.parse(reasonData);
  return {
    stateValue: state,
    stateReason: reason,
    ...(stateReasonData === undefined ? {} : { stateReasonData }),
  };
};

/** How long a state set by hand holds: until CloudWatch's next evaluation. */
const EVALUATION_INTERVAL_MS = 60_000;
/** CloudWatch keeps an alarm's history two weeks; the edge keeps its last entries. */
const HISTORY_KEPT = 1000;

export class AlarmBook {
  readonly #records = new Map<string, AlarmRecord>();
  readonly #history: HistoryItem[] = [];
  readonly #arnPrefix: string;

  readonly #act: ActionRunner | undefined;
  readonly #listeners = new Set<(change: Omit<AlarmChange, 'actions'>) => void>();

  constructor(
    where: { readonly region: string; readonly account: string },
    /** Runs an alarm's actions on a change of state; without it, none is run. */
    act?: ActionRunner,
  ) {
    this.#arnPrefix = `arn:aws:cloudwatch:${where.region}:${where.account}:alarm:`;
    this.#act = act;
  }

  /**
   * Creates a stack's alarms, as CloudFormation does; returns what deletes them when the stack
   * goes (those still there: one deleted by hand meanwhile stays deleted).
   */
  adopt(alarms: readonly StackAlarm[], nowMs: number): () => void {
    return this.redeploy([], alarms, nowMs);
  }

  /**
   * A stack update's alarms, as CloudFormation applies one: an alarm the template adds is
   * created, one whose definition changed has it replaced (its state kept), one it no longer
   * declares is deleted. An alarm the update leaves alone keeps what was changed by hand (its
   * actions turned off, or its deletion). Returns what deletes `after`'s when the stack goes.
   */
  redeploy(before: readonly StackAlarm[], after: readonly StackAlarm[], nowMs: number): () => void {
    const previous = new Map(before.map((a) => [a.alarm.AlarmName, a.alarm]));
    const declared = new Set(after.map((a) => a.alarm.AlarmName));
    for (const name of previous.keys()) if (!declared.has(name)) this.#records.delete(name);
    for (const { logicalId, alarm } of after) {
      const was = previous.get(alarm.AlarmName);
      const record = this.#records.get(alarm.AlarmName);
      if (was === undefined && record === undefined) this.#create(alarm, logicalId, nowMs);
      else if (was !== undefined && !isDeepStrictEqual(was, alarm)) {
        if (record === undefined) this.#create(alarm, logicalId, nowMs);
        else this.put(alarm, nowMs);
      }
    }
    return () => {
      for (const name of declared) this.#records.delete(name);
    };
  }

  #create(alarm: MetricAlarm, logicalId: string | undefined, nowMs: number): void {
    this.#records.set(alarm.AlarmName, {
      alarm,
      logicalId,
      arn: `${this.#arnPrefix}${alarm.AlarmName}`,
      state: 'INSUFFICIENT_DATA',
      reason: 'Unchecked: Initial alarm creation',
      reasonData: undefined,
      stateUpdatedMs: nowMs,
      transitionedMs: nowMs,
      configurationUpdatedMs: nowMs,
      heldUntilMs: undefined,
    });
    this.#note(alarm.AlarmName, nowMs, 'ConfigurationUpdate', `Alarm "${alarm.AlarmName}" created`);
  }

  #note(
    alarmName: string,
    timestampMs: number,
    type: HistoryItem['type'],
    summary: string,
    data?: string,
  ) {
    this.#history.push({ alarmName, timestampMs, type, summary, ...(data ? { data } : {}) });
    if (this.#history.length > HISTORY_KEPT) this.#history.shift();
  }

  /** Calls `listener` on every change of an alarm's state; returns what stops it. */
  onChange(listener: (change: Omit<AlarmChange, 'actions'>) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The alarms, by name. */
  list(): AlarmRecord[] {
    return [...this.#records.values()].sort((a, b) =>
      a.alarm.AlarmName < b.alarm.AlarmName ? -1 : 1,
    );
  }

  get(name: string): AlarmRecord | undefined {
    return this.#records.get(name);
  }

  /** The metrics the alarms watch. */
  metrics(): MetricId[] {
    return this.list().map((r) => metricOf(r.alarm));
  }

  /** Evaluates every alarm whose state is not held, as CloudWatch's evaluation at `nowMs` would. */
  evaluate(
    windowOf: (metric: MetricId, fromMs: number, toMs: number) => StatisticSet | undefined,
    nowMs: number,
  ): void {
    for (const record of this.#records.values()) {
      if (record.heldUntilMs !== undefined && nowMs < record.heldUntilMs) continue;
      record.heldUntilMs = undefined;
      const metric = metricOf(record.alarm);
      const result = evaluateAlarm(record.alarm, (from, to) => windowOf(metric, from, to), nowMs);
      if (result.state === undefined) continue;
      this.#enter(record, result.state, result.reason, result.reasonData, nowMs);
    }
  }

  #enter(
    record: AlarmRecord,
    state: AlarmState,
    reason: string,
    reasonData: string | undefined,
    nowMs: number,
  ): void {
    const from = record.state;
    const { reason: wasReason, reasonData: wasReasonData } = record;
    record.reason = reason;
    record.reasonData = reasonData;
    record.stateUpdatedMs = nowMs;
    if (from === state) return;
    record.state = state;
    record.transitionedMs = nowMs;
    const name = record.alarm.AlarmName;
    this.#note(
      name,
      nowMs,
      'StateUpdate',
      `Alarm updated from ${from} to ${state}`,
      JSON.stringify({
        version: '1.0',
        oldState: historyState(from, wasReason, wasReasonData),
        newState: historyState(state, reason, reasonData),
      }),
    );
    for (const listener of this.#listeners) listener({ record: { ...record }, from });
    const actions = {
      OK: record.alarm.OKActions,
      ALARM: record.alarm.AlarmActions,
      INSUFFICIENT_DATA: record.alarm.InsufficientDataActions,
    }[state];
    if (!record.alarm.ActionsEnabled || actions.length === 0) return;
    const change = { record: { ...record }, from, actions };
    if (this.#act) this.#act(change, (summary) => this.#note(name, Date.now(), 'Action', summary));
    else
      for (const action of actions)
        this.#note(name, nowMs, 'Action', `Action not run locally: ${action} (not emulated)`);
  }

  /** `PutMetricAlarm`: creates the alarm, or replaces its configuration and keeps its state. */
  put(alarm: MetricAlarm, nowMs: number): void {
    const existing = this.#records.get(alarm.AlarmName);
    if (!existing) {
      this.#create(alarm, undefined, nowMs);
      return;
    }
    this.#records.set(alarm.AlarmName, { ...existing, alarm, configurationUpdatedMs: nowMs });
    this.#note(alarm.AlarmName, nowMs, 'ConfigurationUpdate', `Alarm "${alarm.AlarmName}" updated`);
  }

  /** `DeleteAlarms`: all of them, or none when one does not exist (CloudWatch's rule). */
  delete(names: readonly string[]): void {
    const missing = names.find((n) => !this.#records.has(n));
    if (missing !== undefined) throw new AlarmNotFoundError(`Alarm ${missing} not found`);
    for (const name of names) this.#records.delete(name);
  }

  /** `EnableAlarmActions` / `DisableAlarmActions`: names of other stacks' alarms are ignored. */
  setActionsEnabled(names: readonly string[], enabled: boolean, nowMs: number): void {
    for (const name of names) {
      const record = this.#records.get(name);
      if (!record || record.alarm.ActionsEnabled === enabled) continue;
      this.#records.set(name, {
        ...record,
        alarm: { ...record.alarm, ActionsEnabled: enabled },
        configurationUpdatedMs: nowMs,
      });
      this.#note(
        name,
        nowMs,
        'ConfigurationUpdate',
        `Alarm actions ${enabled ? 'enabled' : 'disabled'}`,
      );
    }
  }

  /** `SetAlarmState`: the state holds until the next evaluation, as on AWS. */
  setState(
    name: string,
    state: AlarmState,
    reason: string,
    reasonData: string | undefined,
    nowMs: number,
  ): void {
    const record = this.#records.get(name);
    if (!record) throw new AlarmNotFoundError(`Alarm ${name} not found`);
    this.#enter(record, state, reason, reasonData, nowMs);
    record.heldUntilMs = nowMs + EVALUATION_INTERVAL_MS;
  }

  /** The history, newest first. */
  history(): HistoryItem[] {
    return [...this.#history].reverse();
  }
}
