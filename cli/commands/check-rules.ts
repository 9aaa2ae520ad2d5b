/**
 * What `onceflow check` makes of the settings it reads: for each, whether it is fine, costs work
 * or receives (a warning), or loses or strands messages, or leaves a guarantee unmet (a failure),
 * and why. Pure: the facts come from `check.ts`, which reads them from AWS.
 */
import type { EventSourceMappingConfiguration } from '@aws-sdk/client-lambda';
import * as v from 'valibot';
import type { QueueFunction } from './logs.ts';

/** SQS gives the RedrivePolicy as JSON text: read through a schema, numbers or strings. */
export const RedriveSchema = v.object({
  deadLetterTargetArn: v.string(),
  maxReceiveCount: v.pipe(v.union([v.number(), v.string()]), v.transform(Number)),
});

/** Each queue-fed function's queue and DLQ, by the stack outputs naming them. */
export const QUEUE_OUTPUTS = {
  ingest: {
    name: 'orders queue',
    queue: 'OrdersQueueUrl',
    dlq: 'OrdersDlqUrl',
    dlqArn: 'OrdersDlqArn',
  },
  aggregate: {
    name: 'aggregate queue',
    queue: 'AggregateQueueUrl',
    dlq: 'AggregateDlqUrl',
    dlqArn: 'AggregateDlqArn',
  },
} as const;

export type Verdict = 'ok' | 'warn' | 'fail';

export interface Finding {
  /** What was checked: `ingest`, `orders queue`, `table`… */
  readonly subject: string;
  readonly name: string;
  readonly verdict: Verdict;
  readonly detail: string;
}

/** What the checks read of a queue and its DLQ. */
export interface QueueFacts {
  readonly visibilityTimeoutS: number;
  readonly retentionS: number;
  readonly fifo: boolean;
  readonly delaySeconds: number;
  /** Its RedrivePolicy, if it has one. */
  readonly redrive?: { readonly deadLetterTargetArn: string; readonly maxReceiveCount: number };
  readonly dlqArn: string;
  readonly dlqRetentionS: number;
  /** The queue, or the stack's DLQ, does not exist (deleted by hand): the rest is not known. */
  readonly queueMissing?: boolean;
  readonly dlqMissing?: boolean;
}

/** What a queue deleted by hand leaves; `cdk deploy` does not create it again. */
export const DELETED = 'does not exist (deleted by hand?)';

/** What the checks read of a function and, for a queue-fed one, its trigger. */
export interface FunctionFacts {
  /** Its ARN: what a rule's target names. */
  readonly arn?: string;
  readonly timeoutS: number;
  /** Undefined: no reservation. */
  readonly reservedConcurrency?: number;
  readonly environment: Readonly<Record<string, string>>;
  readonly mappings: readonly EventSourceMappingConfiguration[];
}

/** `14 days`, `4 days`, `90 s`: a retention or timeout as an operator reads it. */
const span = (seconds: number): string =>
  seconds >= 86_400 && seconds % 3_600 === 0
    ? `${+(seconds / 86_400).toFixed(2)} days`
    : seconds >= 3_600 && seconds % 60 === 0
      ? `${+(seconds / 3_600).toFixed(2)} h`
      : `${seconds} s`;

/** AWS's advice for a queue that triggers Lambda: at least 6 × the function's timeout. */
const VISIBILITY_FACTOR = 6;
/** AWS's advice for a Lambda trigger's source queue: throttled receives count too. */
const MIN_RECEIVES = 5;

/** The queue a function is fed by: its redrive, visibility timeout and its DLQ's retention. */
export const judgeQueue = (subject: string, q: QueueFacts, fn: FunctionFacts): Finding[] => {
  if (q.queueMissing)
    return [
      {
        subject,
        name: 'queue',
        verdict: 'fail',
        detail: `${DELETED}: producers' sends fail and its trigger reads nothing; CloudFormation still lists it, so \`cdk deploy\` does not create it again`,
      },
      // Its DLQ too, when it is gone: the queue's redrive policy needs it back first.
      ...(q.dlqMissing
        ? [
            {
              subject,
              name: 'dead-letter queue',
              verdict: 'fail' as const,
              detail: `${q.dlqArn} ${DELETED}: a message that keeps failing has no DLQ to go to`,
            },
          ]
        : []),
    ];
  const window = Math.max(0, ...fn.mappings.map((m) => m.MaximumBatchingWindowInSeconds ?? 0));
  const advised = VISIBILITY_FACTOR * fn.timeoutS + window;
  const findings: Finding[] = [
    {
      subject,
      name: 'visibility timeout',
      ...(q.visibilityTimeoutS >= advised
        ? { verdict: 'ok', detail: `${q.visibilityTimeoutS} s (at least ${advised} s advised)` }
        : {
            verdict: 'warn',
            detail: `${q.visibilityTimeoutS} s, under the ${advised} s AWS advises (${VISIBILITY_FACTOR} × the function's ${fn.timeoutS} s timeout${window > 0 ? ` + its ${window} s window` : ''}): ${q.visibilityTimeoutS < fn.timeoutS ? 'a batch still running reappears and runs twice at once (applied once, but the work is done twice and each receive counts towards the DLQ)' : 'a throttled batch may reappear before Lambda has retried it'}`,
          }),
    },
  ];
  if (!q.redrive)
    return [
      ...findings,
      {
        subject,
        name: 'dead-letter queue',
        verdict: 'fail',
        detail:
          'no RedrivePolicy: a message that keeps failing is received again and again until the queue’s retention ends, then deleted unapplied',
      },
    ];
  const { deadLetterTargetArn, maxReceiveCount } = q.redrive;
  const retention: Finding[] = q.dlqMissing
    ? []
    : [
        q.fifo
          ? {
              subject,
              name: 'DLQ retention',
              verdict: 'ok',
              detail: `${span(q.dlqRetentionS)} from the move (a FIFO queue's message starts its retention again in its DLQ)`,
            }
          : q.dlqRetentionS > q.retentionS
            ? {
                subject,
                name: 'DLQ retention',
                verdict: 'ok',
                detail: `${span(q.dlqRetentionS)}, longer than the queue's ${span(q.retentionS)}`,
              }
            : {
                subject,
                name: 'DLQ retention',
                verdict: 'warn',
                detail: `${span(q.dlqRetentionS)}, not longer than the queue's ${span(q.retentionS)}: a standard queue's message keeps its first enqueue time in the DLQ, so it may expire there before anyone redrives it`,
              },
      ];
  return [
    ...findings,
    deadLetterTargetArn === q.dlqArn && q.dlqMissing
      ? {
          subject,
          name: 'dead-letter queue',
          verdict: 'fail',
          detail: `${deadLetterTargetArn} ${DELETED}: a message that fails ${maxReceiveCount} times has no DLQ to go to, and \`status\` and \`replay dlq\` have none to read`,
        }
      : deadLetterTargetArn === q.dlqArn
        ? { subject, name: 'dead-letter queue', verdict: 'ok', detail: deadLetterTargetArn }
        : {
            subject,
            name: 'dead-letter queue',
            verdict: 'warn',
            detail: `${deadLetterTargetArn}, not the stack's ${q.dlqArn}: its alarm, \`status\` and \`replay dlq\` watch the stack's`,
          },
    maxReceiveCount >= MIN_RECEIVES
      ? { subject, name: 'maxReceiveCount', verdict: 'ok', detail: String(maxReceiveCount) }
      : {
          subject,
          name: 'maxReceiveCount',
          verdict: 'warn',
          detail: `${maxReceiveCount}, under the ${MIN_RECEIVES} AWS advises: a batch throttled or failing transiently reaches the DLQ sooner (redrive it with \`replay dlq\`)`,
        },
    ...retention,
  ];
};

/**
 * Coalescing (see `shared/coalesce.ts`): SQS keeps the first hour notification of a window and
 * drops the others, which is safe only because the one kept is delayed a whole window, until
 * after every dropped one's batch has committed. With less delay the aggregator can read an
 * hour before a dropped notification's batch committed, and that batch's counts stay out of the
 * hour object until the hour's next notification or a `reconcile`.
 */
export const judgeCoalescing = (aggregateQueue: QueueFacts, ingest: FunctionFacts): Finding[] => {
  // A deleted queue is judged as such (`judgeQueue`), not for a delay nobody can read.
  if (aggregateQueue.queueMissing) return [];
  // Ingest's setting, as the stack passes it (shared/config.ts).
  const windowS = Number(ingest.environment.HOUR_COALESCE_SECONDS ?? 0);
  const subject = 'aggregate queue';
  if (!(windowS > 0))
    return [
      {
        subject,
        name: 'coalescing',
        verdict: 'ok',
        detail: 'none: every notification is delivered',
      },
    ];
  if (!aggregateQueue.fifo)
    return [
      {
        subject,
        name: 'coalescing',
        verdict: 'fail',
        detail: `ingest coalesces over ${windowS} s, which takes a FIFO queue: a standard queue refuses its notifications' deduplication ids, and each batch fails after its commit`,
      },
    ];
  return [
    aggregateQueue.delaySeconds >= windowS
      ? {
          subject,
          name: 'coalescing',
          verdict: 'ok',
          detail: `delivery delay ${aggregateQueue.delaySeconds} s, at least ingest's ${windowS} s window`,
        }
      : {
          subject,
          name: 'coalescing',
          verdict: 'fail',
          detail: `delivery delay ${aggregateQueue.delaySeconds} s, under ingest's ${windowS} s window: a notification SQS drops as a copy may belong to a batch that commits after the hour is read, and its counts stay out of the hour object until the hour's next notification or \`onceflow reconcile\``,
        },
  ];
};

/**
 * A function's environment against the stack's outputs: every function must read and write the
 * one table and bucket (and ingest notify the one aggregate queue), or what one writes the others
 * never see. `expected` maps each variable to the value the stack's outputs give it.
 */
export const judgeWiring = (
  subject: string,
  environment: Readonly<Record<string, string>>,
  expected: Readonly<Record<string, string>>,
): Finding => {
  const off = Object.entries(expected).filter(([name, value]) => environment[name] !== value);
  return off.length === 0
    ? {
        subject,
        name: 'wiring',
        verdict: 'ok',
        detail: `${Object.keys(expected).join(', ')} as the stack's outputs`,
      }
    : {
        subject,
        name: 'wiring',
        verdict: 'fail',
        detail: `${off.map(([name, value]) => `${name} is ${environment[name] ?? 'unset'}, not ${value}`).join('; ')}: the functions must share one table, bucket and aggregate queue, or what one writes the others never read`,
      };
};

/**
 * A scheduled function's schedule (its trigger's state, `none` when no rule invokes it) and its
 * reserved concurrency. Either one stopped only warns: `held` says what waits meanwhile.
 */
export const judgeScheduled = (
  fn: string,
  schedule: string,
  f: FunctionFacts,
  held: string,
): Finding[] => [
  schedule === 'Enabled'
    ? { subject: fn, name: 'schedule', verdict: 'ok', detail: 'Enabled' }
    : {
        subject: fn,
        name: 'schedule',
        verdict: 'warn',
        detail:
          schedule === 'none'
            ? `no rule invokes it: ${held} (a rule deleted by hand, which \`cdk deploy\` does not create again: \`onceflow check --fix\` does)`
            : `${schedule}: ${held} until \`onceflow resume ${fn}\``,
      },
  f.reservedConcurrency === 0
    ? {
        subject: fn,
        name: 'reserved concurrency',
        verdict: 'warn',
        detail: `0: ${held} (\`onceflow pause ${fn}\` says so in \`status\`)`,
      }
    : {
        subject: fn,
        name: 'reserved concurrency',
        verdict: 'ok',
        detail:
          f.reservedConcurrency === undefined ? 'none reserved' : String(f.reservedConcurrency),
      },
];

/**
 * A trigger's state: Enabled polls; Disabled and Disabling (its running batches finish first)
 * leave the messages in the queue until someone resumes it; Creating, Enabling and Updating are a
 * change under way, which a check taken a minute later reads settled.
 */
const judgeTrigger = (fn: QueueFunction, m: EventSourceMappingConfiguration): Finding => {
  if (m.State === 'Enabled')
    return { subject: fn, name: 'trigger', verdict: 'ok', detail: `${m.UUID}: Enabled` };
  const since = `${m.UUID}: ${m.State}${m.LastModified ? ` since ${m.LastModified.toISOString()}` : ''}`;
  const stopped = m.State === 'Disabled' || m.State === 'Disabling';
  return {
    subject: fn,
    name: 'trigger',
    verdict: 'warn',
    detail: stopped
      ? `${since}: ${m.State === 'Disabling' ? 'the batches it runs finish, then ' : ''}its messages wait in the queue (\`onceflow resume ${fn}\`)`
      : `${since}: a change under way; until it is Enabled its messages may wait in the queue (run \`onceflow check\` again)`,
  };
};

/** A queue-fed function's trigger and its reserved concurrency. */
export const judgeFunction = (fn: QueueFunction, f: FunctionFacts): Finding[] => {
  if (f.mappings.length === 0)
    return [
      {
        subject: fn,
        name: 'trigger',
        verdict: 'fail',
        detail: 'no event source mapping from its queue: its messages wait until they expire',
      },
    ];
  const findings: Finding[] = f.mappings.map((m) =>
    (m.FunctionResponseTypes ?? []).includes('ReportBatchItemFailures')
      ? {
          subject: fn,
          name: 'partial batch responses',
          verdict: 'ok',
          detail: `${m.UUID}: ReportBatchItemFailures`,
        }
      : {
          subject: fn,
          name: 'partial batch responses',
          verdict: 'fail',
          detail: `${m.UUID} lacks ReportBatchItemFailures: Lambda ignores the failures the function reports, so a batch with a failed message counts as a success and that message is deleted unapplied`,
        },
  );
  for (const m of f.mappings) findings.push(judgeTrigger(fn, m));
  const reserved = f.reservedConcurrency;
  const cap = Math.max(...f.mappings.map((m) => m.ScalingConfig?.MaximumConcurrency ?? 0));
  if (reserved === 0)
    findings.push({
      subject: fn,
      name: 'reserved concurrency',
      verdict: 'fail',
      detail:
        '0: every batch is throttled, and after maxReceiveCount receives its messages are in the DLQ unprocessed; to stop the function, `onceflow pause` its trigger instead',
    });
  else if (reserved !== undefined && cap > reserved)
    findings.push({
      subject: fn,
      name: 'reserved concurrency',
      verdict: 'warn',
      detail: `${reserved}, under the trigger's maximum concurrency of ${cap}: Lambda throttles the batches over it, and their receives count towards the DLQ (AWS advises a reservation at least the maximum concurrency)`,
    });
  else
    findings.push({
      subject: fn,
      name: 'reserved concurrency',
      verdict: 'ok',
      detail: reserved === undefined ? 'none reserved' : String(reserved),
    });
  return findings;
};
