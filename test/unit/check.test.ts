/**
 * `onceflow check`'s judgement of a queue and its function, from the facts AWS reports: what
 * fails (messages lost or stranded), what warns (work or receives wasted), what is fine.
 */
import { describe, expect, it } from 'vitest';
import type { AlarmDefinition } from '../../cli/commands/alarms.ts';
import { type AlarmProperties, definitionChanges } from '../../cli/commands/check-alarms.ts';
import {
  type FunctionFacts,
  judgeCoalescing,
  judgeFunction,
  judgeQueue,
  judgeWiring,
  type QueueFacts,
} from '../../cli/commands/check-rules.ts';

const DLQ = 'arn:aws:sqs:us-east-1:000000000000:orders-dlq';
const queue: QueueFacts = {
  visibilityTimeoutS: 180,
  retentionS: 345_600,
  fifo: false,
  delaySeconds: 0,
  redrive: { deadLetterTargetArn: DLQ, maxReceiveCount: 5 },
  dlqArn: DLQ,
  dlqRetentionS: 1_209_600,
};
const fn: FunctionFacts = {
  timeoutS: 30,
  environment: {},
  mappings: [
    {
      UUID: 'm-1',
      State: 'Enabled',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 10 },
    },
  ],
};
const verdicts = (findings: { name: string; verdict: string }[]) =>
  findings.map((f) => `${f.name}: ${f.verdict}`);

describe('onceflow check', () => {
  it('finds nothing wrong with the settings the stack deploys', () => {
    expect(verdicts(judgeQueue('orders queue', queue, fn))).toEqual([
      'visibility timeout: ok',
      'dead-letter queue: ok',
      'maxReceiveCount: ok',
      'DLQ retention: ok',
    ]);
    expect(verdicts(judgeFunction('ingest', fn))).toEqual([
      'partial batch responses: ok',
      'trigger: ok',
      'reserved concurrency: ok',
    ]);
    expect(judgeQueue('orders queue', queue, fn)[3]?.detail).toBe(
      "14 days, longer than the queue's 4 days",
    );
  });

  it('fails a trigger without partial batch responses, a queue without a DLQ, a function without a trigger, and a reservation of 0', () => {
    const [partial] = judgeFunction('ingest', {
      ...fn,
      mappings: [{ UUID: 'm-1', State: 'Enabled', FunctionResponseTypes: [] }],
    });
    expect(partial).toMatchObject({ name: 'partial batch responses', verdict: 'fail' });
    expect(partial?.detail).toContain('that message is deleted unapplied');
    const { redrive: _, ...noRedrive } = queue;
    expect(judgeQueue('orders queue', noRedrive, fn).at(-1)).toMatchObject({
      name: 'dead-letter queue',
      verdict: 'fail',
    });
    expect(judgeFunction('ingest', { ...fn, mappings: [] })).toMatchObject([
      { name: 'trigger', verdict: 'fail' },
    ]);
    const zero = judgeFunction('ingest', { ...fn, reservedConcurrency: 0 }).at(-1);
    expect(zero).toMatchObject({ name: 'reserved concurrency', verdict: 'fail' });
    expect(zero?.detail).toContain('`onceflow pause` its trigger instead');
  });

  it('warns of settings that cost work or receives: a short visibility timeout, few receives, another DLQ, a short DLQ retention, a paused trigger, a reservation under the maximum concurrency', () => {
    const findings = judgeQueue(
      'orders queue',
      {
        ...queue,
        visibilityTimeoutS: 20,
        redrive: {
          deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:other',
          maxReceiveCount: 2,
        },
        dlqRetentionS: 345_600,
      },
      { ...fn, mappings: [{ ...fn.mappings[0], MaximumBatchingWindowInSeconds: 5 }] },
    );
    expect(verdicts(findings)).toEqual([
      'visibility timeout: warn',
      'dead-letter queue: warn',
      'maxReceiveCount: warn',
      'DLQ retention: warn',
    ]);
    expect(findings[0]?.detail).toContain(
      "under the 185 s AWS advises (6 × the function's 30 s timeout + its 5 s window): a batch still running reappears",
    );
    const longer = judgeQueue('orders queue', { ...queue, visibilityTimeoutS: 60 }, fn)[0];
    expect(longer?.detail).toContain('a throttled batch may reappear');
    // A FIFO queue's message starts its retention again when it moves to the DLQ.
    expect(
      judgeQueue('aggregate queue', { ...queue, fifo: true, dlqRetentionS: 345_600 }, fn)[3],
    ).toMatchObject({ verdict: 'ok' });

    const paused = judgeFunction('ingest', {
      ...fn,
      reservedConcurrency: 4,
      mappings: [
        {
          ...fn.mappings[0],
          State: 'Disabled',
          LastModified: new Date('2026-12-05T23:41:07.000Z'),
        },
      ],
    });
    expect(verdicts(paused)).toEqual([
      'partial batch responses: ok',
      'trigger: warn',
      'reserved concurrency: warn',
    ]);
    expect(paused[1]?.detail).toBe(
      'm-1: Disabled since 2026-12-05T23:41:07.000Z: its messages wait in the queue (`onceflow resume ingest`)',
    );
    expect(paused[2]?.detail).toContain("4, under the trigger's maximum concurrency of 10");
    // On its way to Disabled: stopping. A change under way: not settled, so not said to be fine.
    const inState = (State: string) =>
      judgeFunction('ingest', { ...fn, mappings: [{ ...fn.mappings[0], State }] })[1];
    expect(inState('Disabling')).toMatchObject({
      name: 'trigger',
      verdict: 'warn',
      detail:
        'm-1: Disabling: the batches it runs finish, then its messages wait in the queue (`onceflow resume ingest`)',
    });
    for (const State of ['Creating', 'Enabling', 'Updating'])
      expect(inState(State)).toMatchObject({
        name: 'trigger',
        verdict: 'warn',
        detail: `m-1: ${State}: a change under way; until it is Enabled its messages may wait in the queue (run \`onceflow check\` again)`,
      });
    // A reservation of the maximum concurrency itself, as AWS advises, is enough.
    expect(judgeFunction('ingest', { ...fn, reservedConcurrency: 10 })[2]).toMatchObject({
      name: 'reserved concurrency',
      verdict: 'ok',
      detail: '10',
    });
  });

  it('fails a coalescing window the aggregate queue does not delay its notifications by, or a standard queue under one', () => {
    const ingest = { ...fn, environment: { HOUR_COALESCE_SECONDS: '2' } };
    const fifo = { ...queue, fifo: true, delaySeconds: 2 };
    expect(judgeCoalescing(fifo, ingest)).toMatchObject([{ name: 'coalescing', verdict: 'ok' }]);
    const [short] = judgeCoalescing({ ...fifo, delaySeconds: 1 }, ingest);
    expect(short).toMatchObject({ verdict: 'fail' });
    expect(short?.detail).toContain("delivery delay 1 s, under ingest's 2 s window");
    // A standard queue fails however long its delay: it refuses the deduplication ids.
    const [standard] = judgeCoalescing({ ...queue, delaySeconds: 2 }, ingest);
    expect(standard).toMatchObject({ verdict: 'fail' });
    expect(standard?.detail).toContain('which takes a FIFO queue');
    // No window: a standard queue delivers every notification, with no delay needed.
    expect(judgeCoalescing(queue, fn)).toMatchObject([{ verdict: 'ok' }]);
  });

  it('fails a queue or its DLQ deleted by hand, and judges nothing it cannot read', () => {
    expect(judgeQueue('orders queue', { ...queue, queueMissing: true }, fn)).toEqual([
      {
        subject: 'orders queue',
        name: 'queue',
        verdict: 'fail',
        detail: expect.stringMatching(
          /^does not exist \(deleted by hand\?\): producers' sends fail/,
        ),
      },
    ]);
    // Both gone: the DLQ is named too, since the queue's redrive policy needs it back first.
    expect(
      verdicts(judgeQueue('orders queue', { ...queue, queueMissing: true, dlqMissing: true }, fn)),
    ).toEqual(['queue: fail', 'dead-letter queue: fail']);
    const noDlq = judgeQueue('orders queue', { ...queue, dlqMissing: true }, fn);
    // No retention read from a queue that is not there.
    expect(verdicts(noDlq)).toEqual([
      'visibility timeout: ok',
      'dead-letter queue: fail',
      'maxReceiveCount: ok',
    ]);
    expect(noDlq[1]?.detail).toBe(
      `${DLQ} does not exist (deleted by hand?): a message that fails 5 times has no DLQ to go to, and \`status\` and \`replay dlq\` have none to read`,
    );
    // A missing aggregate queue is not also judged for its delay.
    const ingest = { ...fn, environment: { HOUR_COALESCE_SECONDS: '2' } };
    expect(judgeCoalescing({ ...queue, queueMissing: true }, ingest)).toEqual([]);
  });

  it('fails a function whose table, bucket or aggregate queue is not the stack’s', () => {
    const expected = { TABLE_NAME: 'stack-table', BUCKET_NAME: 'stack-bucket' };
    expect(judgeWiring('aggregate', { ...expected, LEVEL: 'DEBUG' }, expected)).toMatchObject({
      verdict: 'ok',
      detail: "TABLE_NAME, BUCKET_NAME as the stack's outputs",
    });
    const off = judgeWiring('aggregate', { TABLE_NAME: 'restored' }, expected);
    expect(off).toMatchObject({ name: 'wiring', verdict: 'fail' });
    expect(off.detail).toContain(
      'TABLE_NAME is restored, not stack-table; BUCKET_NAME is unset, not stack-bucket: the functions must share',
    );
  });
});

describe('onceflow check on an alarm’s definition', () => {
  const deployed: AlarmProperties = {
    MetricName: 'Errors',
    Namespace: 'AWS/Lambda',
    Statistic: 'Sum',
    Period: 60,
    EvaluationPeriods: 1,
    Threshold: 1,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    TreatMissingData: 'notBreaching',
    AlarmActions: ['arn:aws:sns:us-east-1:000000000000:a', 'arn:aws:sns:us-east-1:000000000000:b'],
  };
  // As CloudWatch describes the alarm deployed, untouched.
  const { Statistic, Period, EvaluationPeriods, Threshold, ComparisonOperator } = deployed;
  const live: AlarmDefinition = {
    Statistic,
    Period,
    EvaluationPeriods,
    DatapointsToAlarm: undefined,
    Threshold,
    ComparisonOperator,
    TreatMissingData: deployed.TreatMissingData,
    AlarmActions: deployed.AlarmActions ?? [],
  };

  it('finds no change in the same actions listed in another order, nor in DatapointsToAlarm written out', () => {
    expect(definitionChanges(live, deployed)).toEqual([]);
    expect(
      definitionChanges({ ...live, AlarmActions: [...live.AlarmActions].reverse() }, deployed),
    ).toEqual([]);
    expect(definitionChanges({ ...live, DatapointsToAlarm: 1 }, deployed)).toEqual([]);
  });

  it('names each setting changed by hand, with what it was deployed as', () => {
    expect(
      definitionChanges(
        { ...live, Threshold: 5, AlarmActions: [], TreatMissingData: undefined },
        deployed,
      ),
    ).toEqual([
      'Threshold 5 → 1',
      'TreatMissingData missing → notBreaching',
      'AlarmActions none → arn:aws:sns:us-east-1:000000000000:a, arn:aws:sns:us-east-1:000000000000:b',
    ]);
  });
});
