/**
 * `onceflow check --fix`'s plan: each flagged setting put back as the deployed template sets it,
 * its references resolved through the stack's outputs, and every other flagged setting left with
 * a reason. The template here has the deployed stack's shape, small.
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { deployedAlarms, foldAlarms, judgeAlarms } from '../../cli/commands/check-alarms.ts';
import {
  type LiveStack,
  planRepairs,
  type Repair,
  resolverFor,
} from '../../cli/commands/check-fixes.ts';
import {
  DELETED,
  type Finding,
  type FunctionFacts,
  type QueueFacts,
} from '../../cli/commands/check-rules.ts';
import { parseJson } from '../support/json.ts';

const arn = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const queue = (dlq: string, properties: Record<string, unknown> = {}) => ({
  Type: 'AWS::SQS::Queue',
  Properties: {
    VisibilityTimeout: 180,
    RedrivePolicy: { deadLetterTargetArn: arn(dlq), maxReceiveCount: 5 },
    ...properties,
  },
});
const dlq = { Type: 'AWS::SQS::Queue', Properties: { MessageRetentionPeriod: 1_209_600 } };
const fn = (variables: Record<string, unknown>, properties: Record<string, unknown> = {}) => ({
  Type: 'AWS::Lambda::Function',
  Properties: { Timeout: 30, Environment: { Variables: variables }, ...properties },
});
const mapping = (fnId: string, queueId: string) => ({
  Type: 'AWS::Lambda::EventSourceMapping',
  Properties: {
    FunctionName: { Ref: fnId },
    EventSourceArn: arn(queueId),
    BatchSize: 10,
    FunctionResponseTypes: ['ReportBatchItemFailures'],
  },
});
const TEMPLATE = {
  Resources: {
    Q: queue('D'),
    D: dlq,
    DP: {
      Type: 'AWS::SQS::QueuePolicy',
      Properties: {
        PolicyDocument: { Statement: [{ Effect: 'Deny', Resource: arn('D') }] },
        Queues: [{ Ref: 'D' }],
      },
    },
    AQ: queue('AD', { FifoQueue: true, DelaySeconds: 2 }),
    AD: dlq,
    T: { Type: 'AWS::DynamoDB::Table' },
    I: fn({ TABLE_NAME: { Ref: 'T' }, AGGREGATE_QUEUE_URL: { Ref: 'AQ' }, LATE: 'amend' }),
    A: fn({ TABLE_NAME: { Ref: 'T' } }, { ReservedConcurrentExecutions: 10 }),
    F: fn({ TABLE_NAME: { Ref: 'T' } }, { Timeout: 120 }),
    W: fn({ TABLE_NAME: { Ref: 'T' } }),
    IM: mapping('I', 'Q'),
    AM: mapping('A', 'AQ'),
    FR: {
      Type: 'AWS::Events::Rule',
      Properties: {
        Description: 'F: every 5 minutes',
        ScheduleExpression: 'rate(5 minutes)',
        State: 'ENABLED',
        Targets: [{ Arn: arn('F'), Id: 'Target0', RetryPolicy: { MaximumRetryAttempts: 0 } }],
      },
    },
    WR: {
      Type: 'AWS::Events::Rule',
      Properties: { ScheduleExpression: 'rate(5 minutes)', Targets: [{ Arn: arn('W'), Id: 'W' }] },
    },
    Topic: { Type: 'AWS::SNS::Topic' },
    DA: {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: {
        AlarmDescription: 'orders: messages in the DLQ.',
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': ['D', 'QueueName'] } }],
        EvaluationPeriods: 1,
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Namespace: 'AWS/SQS',
        Period: 60,
        Statistic: 'Maximum',
        Threshold: 1,
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: 'Topic' }],
      },
    },
    IE: {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: {
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: 'I' } }],
        EvaluationPeriods: '1',
        MetricName: 'Errors',
        Namespace: 'AWS/Lambda',
        Period: 60,
        Statistic: 'Sum',
        Threshold: 1,
      },
    },
  },
  Outputs: {
    OrdersQueueUrl: { Value: { Ref: 'Q' } },
    OrdersQueueArn: { Value: arn('Q') },
    OrdersDlqUrl: { Value: { Ref: 'D' } },
    OrdersDlqArn: { Value: arn('D') },
    AggregateQueueUrl: { Value: { Ref: 'AQ' } },
    AggregateQueueArn: { Value: arn('AQ') },
    AggregateDlqUrl: { Value: { Ref: 'AD' } },
    AggregateDlqArn: { Value: arn('AD') },
    TableName: { Value: { Ref: 'T' } },
    IngestFunctionName: { Value: { Ref: 'I' } },
    AggregateFunctionName: { Value: { Ref: 'A' } },
    FinalizeFunctionName: { Value: { Ref: 'F' } },
    WatchFunctionName: { Value: { Ref: 'W' } },
    GlueDatabase: { Value: 'onceflow_dev' },
  },
};
const sqs = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;
const OUTPUTS = {
  OrdersQueueUrl: 'http://sqs/orders',
  OrdersQueueArn: sqs('orders'),
  OrdersDlqUrl: 'http://sqs/orders-dlq',
  OrdersDlqArn: sqs('orders-dlq'),
  AggregateQueueUrl: 'http://sqs/aggregate.fifo',
  AggregateQueueArn: sqs('aggregate.fifo'),
  AggregateDlqUrl: 'http://sqs/aggregate-dlq.fifo',
  AggregateDlqArn: sqs('aggregate-dlq.fifo'),
  TableName: 'orders-table',
  IngestFunctionName: 'ingest-fn',
  AggregateFunctionName: 'aggregate-fn',
  FinalizeFunctionName: 'finalize-fn',
  WatchFunctionName: 'watch-fn',
};
const lambdaArn = (name: string) => `arn:aws:lambda:us-east-1:000000000000:function:${name}`;
const FINALIZE_ARN = lambdaArn('finalize-fn');
/** The rule's physical name, as CloudFormation lists it. */
const RULE_NAME = 'app-FR-1A2B3C';
const TOPIC_ARN = 'arn:aws:sns:us-east-1:000000000000:app-Topic-3C4D';
const queueFacts = (dlqArn: string, delaySeconds = 0): QueueFacts => ({
  visibilityTimeoutS: 180,
  retentionS: 345_600,
  fifo: delaySeconds > 0,
  delaySeconds,
  redrive: { deadLetterTargetArn: dlqArn, maxReceiveCount: 5 },
  dlqArn,
  dlqRetentionS: 1_209_600,
});
const fnFacts = (
  environment: Record<string, string>,
  source?: string,
  more: Partial<FunctionFacts> = {},
): FunctionFacts => ({
  timeoutS: 30,
  environment,
  mappings: source
    ? [
        {
          UUID: `${source}-mapping`,
          EventSourceArn: sqs(source),
          State: 'Enabled',
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        },
      ]
    : [],
  ...more,
});
/** The running stack exactly as the template deployed it. */
const HEALTHY: LiveStack = {
  outputs: OUTPUTS,
  queues: {
    ingest: queueFacts(OUTPUTS.OrdersDlqArn),
    aggregate: queueFacts(OUTPUTS.AggregateDlqArn, 2),
  },
  functions: {
    ingest: fnFacts(
      {
        TABLE_NAME: OUTPUTS.TableName,
        AGGREGATE_QUEUE_URL: OUTPUTS.AggregateQueueUrl,
        LATE: 'amend',
      },
      'orders',
    ),
    aggregate: fnFacts({ TABLE_NAME: OUTPUTS.TableName }, 'aggregate.fifo', {
      reservedConcurrency: 10,
    }),
    finalize: fnFacts({ TABLE_NAME: OUTPUTS.TableName }, undefined, {
      timeoutS: 120,
      arn: FINALIZE_ARN,
    }),
    watch: fnFacts({ TABLE_NAME: OUTPUTS.TableName }, undefined, { arn: lambdaArn('watch-fn') }),
  },
  triggers: { ingest: 'Enabled', aggregate: 'Enabled', finalize: 'Enabled', watch: 'Enabled' },
  resources: {
    FR: RULE_NAME,
    WR: 'app-WR-4D5E6F',
    D: OUTPUTS.OrdersDlqUrl,
    I: OUTPUTS.IngestFunctionName,
    Topic: TOPIC_ARN,
    DA: 'app-DA-7A8B9C',
    IE: 'app-IE-0D1E2F',
  },
  alarms: [
    {
      id: 'DA',
      logicalId: 'DA',
      alarmName: 'app-DA-7A8B9C',
      state: 'OK',
      reason: '',
      actionsEnabled: true,
      actions: 1,
      definition: {
        Statistic: 'Maximum',
        Period: 60,
        EvaluationPeriods: 1,
        DatapointsToAlarm: undefined,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [TOPIC_ARN],
      },
    },
    {
      id: 'IE',
      logicalId: 'IE',
      alarmName: 'app-IE-0D1E2F',
      state: 'OK',
      reason: '',
      actionsEnabled: true,
      actions: 0,
      definition: {
        Statistic: 'Sum',
        Period: 60,
        EvaluationPeriods: 1,
        DatapointsToAlarm: undefined,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: undefined,
        AlarmActions: [],
      },
    },
  ],
};
const flagged = (subject: string, name: string, detail = ''): Finding => ({
  subject,
  name,
  verdict: 'fail',
  detail,
});
const plan = (live: LiveStack, findings: Finding[]) => planRepairs(TEMPLATE, live, findings);

describe('onceflow check --fix', () => {
  it('plans nothing when nothing is flagged, even where a setting differs from the template', () => {
    const raised: LiveStack = {
      ...HEALTHY,
      queues: {
        ...HEALTHY.queues,
        ingest: { ...queueFacts(sqs('orders-dlq')), visibilityTimeoutS: 900 },
      },
    };
    expect(plan(HEALTHY, [])).toEqual({ repairs: [], left: [] });
    expect(plan(raised, [])).toEqual({ repairs: [], left: [] });
  });

  it('puts back partial batch responses, a reservation and a coalescing delay as the template sets them', () => {
    const live: LiveStack = {
      ...HEALTHY,
      queues: { ...HEALTHY.queues, aggregate: queueFacts(OUTPUTS.AggregateDlqArn, 0) },
      functions: {
        ...HEALTHY.functions,
        ingest: {
          ...HEALTHY.functions.ingest,
          mappings: [{ UUID: 'orders-mapping', EventSourceArn: sqs('orders'), State: 'Enabled' }],
        },
        aggregate: { ...HEALTHY.functions.aggregate, reservedConcurrency: 0 },
        finalize: { ...HEALTHY.functions.finalize, reservedConcurrency: 0 },
      },
    };
    const { repairs, left } = plan(live, [
      flagged('ingest', 'partial batch responses'),
      flagged('aggregate', 'reserved concurrency'),
      flagged('finalize', 'reserved concurrency'),
      flagged('aggregate queue', 'coalescing'),
    ]);
    expect(left).toEqual([]);
    expect(repairs.map((r) => [r.subject, r.name, r.change, r.request])).toEqual([
      [
        'aggregate queue',
        'coalescing',
        'DelaySeconds 0 → 2',
        {
          kind: 'queue-attributes',
          queueUrl: OUTPUTS.AggregateQueueUrl,
          attributes: { DelaySeconds: '2' },
        },
      ],
      [
        'ingest',
        'partial batch responses',
        'orders-mapping: FunctionResponseTypes [] → [ReportBatchItemFailures]',
        {
          kind: 'response-types',
          uuid: 'orders-mapping',
          functionResponseTypes: ['ReportBatchItemFailures'],
        },
      ],
      [
        'aggregate',
        'reserved concurrency',
        'reserved concurrency 0 → 10',
        { kind: 'reserved-concurrency', functionName: 'aggregate-fn', value: 10 },
      ],
      [
        'finalize',
        'reserved concurrency',
        'reserved concurrency 0 → none',
        { kind: 'reserved-concurrency', functionName: 'finalize-fn' },
      ],
    ]);
  });

  it('puts back a redrive policy removed by hand, its DLQ resolved through the stack outputs', () => {
    const { redrive: _, ...noRedrive } = HEALTHY.queues.ingest;
    const live: LiveStack = { ...HEALTHY, queues: { ...HEALTHY.queues, ingest: noRedrive } };
    const { repairs } = plan(live, [flagged('orders queue', 'dead-letter queue')]);
    expect(repairs.map((r) => [r.change, r.request])).toEqual([
      [
        `RedrivePolicy none → ${OUTPUTS.OrdersDlqArn} after 5 receives`,
        {
          kind: 'queue-attributes',
          queueUrl: OUTPUTS.OrdersQueueUrl,
          attributes: {
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: OUTPUTS.OrdersDlqArn,
              maxReceiveCount: 5,
            }),
          },
        },
      ],
    ]);
  });

  it('puts back both halves of a short visibility timeout: the queue’s and the function’s timeout', () => {
    const live: LiveStack = {
      ...HEALTHY,
      queues: { ...HEALTHY.queues, ingest: { ...HEALTHY.queues.ingest, visibilityTimeoutS: 20 } },
      functions: { ...HEALTHY.functions, ingest: { ...HEALTHY.functions.ingest, timeoutS: 60 } },
    };
    const { repairs } = plan(live, [flagged('orders queue', 'visibility timeout')]);
    expect(repairs.map((r) => r.change)).toEqual(['VisibilityTimeout 20 → 180', 'Timeout 60 → 30']);
  });

  it('puts back the variables the template sets, resolved, and keeps the ones an operator added', () => {
    const live: LiveStack = {
      ...HEALTHY,
      functions: {
        ...HEALTHY.functions,
        ingest: {
          ...HEALTHY.functions.ingest,
          environment: {
            TABLE_NAME: 'restored-table',
            AGGREGATE_QUEUE_URL: OUTPUTS.AggregateQueueUrl,
            POWERTOOLS_LOG_LEVEL: 'DEBUG',
          },
        },
      },
    };
    const { repairs } = plan(live, [flagged('ingest', 'wiring')]);
    expect(repairs.map((r) => [r.change, r.request])).toEqual([
      [
        `TABLE_NAME restored-table → ${OUTPUTS.TableName}; LATE unset → amend`,
        {
          kind: 'environment',
          functionName: 'ingest-fn',
          variables: {
            TABLE_NAME: OUTPUTS.TableName,
            AGGREGATE_QUEUE_URL: OUTPUTS.AggregateQueueUrl,
            POWERTOOLS_LOG_LEVEL: 'DEBUG',
            LATE: 'amend',
          },
        },
      ],
    ]);
  });

  it('creates a trigger deleted by hand as the template sets it, which no deploy would create again', () => {
    const live: LiveStack = {
      ...HEALTHY,
      functions: {
        ...HEALTHY.functions,
        aggregate: { ...HEALTHY.functions.aggregate, mappings: [] },
      },
    };
    const { repairs, left } = plan(live, [
      flagged('aggregate', 'trigger', 'no event source mapping from its queue'),
    ]);
    expect(left).toEqual([]);
    expect(repairs.map((r) => [r.subject, r.name, r.change, r.request])).toEqual([
      [
        'aggregate',
        'trigger',
        `create it from ${OUTPUTS.AggregateQueueArn}: batch size 10, ReportBatchItemFailures`,
        {
          kind: 'create-mapping',
          functionName: 'aggregate-fn',
          eventSourceArn: OUTPUTS.AggregateQueueArn,
          properties: { BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] },
        },
      ],
    ]);
    // CloudFormation takes numbers as strings too.
    const stringly = {
      ...TEMPLATE,
      Resources: {
        ...TEMPLATE.Resources,
        AM: {
          ...TEMPLATE.Resources.AM,
          Properties: { ...TEMPLATE.Resources.AM.Properties, BatchSize: '5', Enabled: 'true' },
        },
      },
    };
    const [created] = planRepairs(stringly, live, [
      flagged('aggregate', 'trigger', 'no event source mapping from its queue'),
    ]).repairs;
    expect(created?.request).toMatchObject({
      properties: { BatchSize: 5, Enabled: true },
    });
    // A paused trigger is not a missing one: nothing is created beside it.
    expect(
      plan(HEALTHY, [flagged('aggregate', 'trigger', 'aggregate-mapping: Disabled')]).repairs,
    ).toEqual([]);
  });

  it('creates a schedule’s rule deleted by hand as the template sets it, by the name CloudFormation lists', () => {
    const deleted: LiveStack = { ...HEALTHY, triggers: { ...HEALTHY.triggers, finalize: 'none' } };
    const finding = flagged('finalize', 'schedule', 'no rule invokes it: no hour becomes final');
    const { repairs, left } = plan(deleted, [finding]);
    expect(left).toEqual([]);
    expect(repairs.map((r) => [r.subject, r.name, r.change, r.request])).toEqual([
      [
        'finalize',
        'schedule',
        `create rule ${RULE_NAME}: rate(5 minutes), ENABLED, target Target0`,
        {
          kind: 'create-rule',
          rule: {
            Name: RULE_NAME,
            Description: 'F: every 5 minutes',
            ScheduleExpression: 'rate(5 minutes)',
            State: 'ENABLED',
            // The target's function, by the ARN Lambda gives it.
            Targets: [
              { Id: 'Target0', Arn: FINALIZE_ARN, RetryPolicy: { MaximumRetryAttempts: 0 } },
            ],
          },
        },
      ],
    ]);
    // Without CloudFormation's list of resources, the name is not guessed.
    const { resources: _, ...unlisted } = deleted;
    expect(plan(unlisted, [finding]).left.map((l) => l.reason)).toEqual([
      "not put back: rule FR's name is not known: CloudFormation lists no such resource",
    ]);
    // A target setting it would not re-create leaves the whole rule to the operator.
    const transformed = {
      ...TEMPLATE,
      Resources: {
        ...TEMPLATE.Resources,
        FR: {
          ...TEMPLATE.Resources.FR,
          Properties: {
            ...TEMPLATE.Resources.FR.Properties,
            Targets: [{ Arn: arn('F'), Id: 'T', InputTransformer: { InputTemplate: '{}' } }],
          },
        },
      },
    };
    const kept = planRepairs(transformed, deleted, [finding]);
    expect(kept.repairs).toEqual([]);
    expect(kept.left[0]?.reason).toMatch(
      /^not put back: rule FR has a setting not re-created here \(Targets\.0\.InputTransformer: /,
    );
    // A paused rule is not a missing one: nothing is created beside it.
    expect(
      plan({ ...HEALTHY, triggers: { ...HEALTHY.triggers, finalize: 'Disabled' } }, [
        flagged('finalize', 'schedule', 'Disabled'),
      ]).repairs,
    ).toEqual([]);
  });

  it('leaves a pause, the table, and a setting as deployed, each with its reason', () => {
    const { repairs, left } = plan(HEALTHY, [
      flagged('ingest', 'trigger', 'orders-mapping: Disabled'),
      flagged('finalize', 'schedule', 'Disabled'),
      flagged('finalize', 'schedule', 'no rule invokes it: no hour becomes final'),
      flagged('table', 'TTL'),
      flagged('orders queue', 'visibility timeout'),
      flagged('somewhere', 'unknown'),
    ]);
    expect(repairs).toEqual([]);
    expect(left.map((l) => `${l.subject}, ${l.name}: ${l.reason}`)).toEqual([
      'ingest, trigger: paused, perhaps on purpose: `onceflow resume ingest` when it should run',
      'finalize, schedule: paused, perhaps on purpose: `onceflow resume finalize` when it should run',
      'finalize, schedule: the deployed template has no scheduled rule for it',
      expect.stringContaining('table, TTL: the table’s own setting: `onceflow table check --fix`'),
      'orders queue, visibility timeout: as deployed: the template sets it so; change the stack’s props and deploy',
      'somewhere, unknown: not a setting the template sets',
    ]);
  });

  it('creates a queue or DLQ deleted by hand again by its name, with the template’s attributes and policy', () => {
    const live: LiveStack = {
      ...HEALTHY,
      queues: {
        ingest: { ...HEALTHY.queues.ingest, dlqMissing: true, dlqRetentionS: 345_600 },
        aggregate: { ...HEALTHY.queues.aggregate, queueMissing: true, delaySeconds: 0 },
      },
    };
    const findings = [
      flagged(
        'orders queue',
        'dead-letter queue',
        `${OUTPUTS.OrdersDlqArn} does not exist (deleted by hand?): …`,
      ),
      flagged('aggregate queue', 'queue', 'does not exist (deleted by hand?): …'),
      // Judged on the deleted queues' defaults: nothing to put back but the queues themselves.
      flagged('orders queue', 'DLQ retention'),
      flagged('aggregate queue', 'coalescing'),
    ];
    const { repairs, left } = plan(live, findings);
    expect(left.map((l) => [l.subject, l.name])).toEqual([
      ['orders queue', 'DLQ retention'],
      ['aggregate queue', 'coalescing'],
    ]);
    expect(repairs.map((r) => [r.subject, r.name, r.change, r.request])).toEqual([
      [
        'orders queue',
        'dead-letter queue',
        "create orders-dlq again with the template's 1 attributes and its policy",
        {
          kind: 'create-queue',
          queueName: 'orders-dlq',
          attributes: {
            MessageRetentionPeriod: '1209600',
            // The policy's reference to the queue's ARN, resolved through the outputs.
            Policy: JSON.stringify({
              Statement: [{ Effect: 'Deny', Resource: OUTPUTS.OrdersDlqArn }],
            }),
          },
        },
      ],
      [
        'aggregate queue',
        'queue',
        "create aggregate.fifo again with the template's 4 attributes",
        {
          kind: 'create-queue',
          queueName: 'aggregate.fifo',
          attributes: {
            VisibilityTimeout: '180',
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: OUTPUTS.AggregateDlqArn,
              maxReceiveCount: 5,
            }),
            FifoQueue: 'true',
            DelaySeconds: '2',
          },
        },
      ],
    ]);
    // Both of one pair gone: the DLQ is created first, as the queue's redrive policy names it.
    const both: LiveStack = {
      ...HEALTHY,
      queues: {
        ...HEALTHY.queues,
        ingest: { ...HEALTHY.queues.ingest, queueMissing: true, dlqMissing: true },
      },
    };
    expect(
      plan(both, [
        flagged('orders queue', 'queue', 'does not exist (deleted by hand?): …'),
        flagged('orders queue', 'dead-letter queue', 'does not exist (deleted by hand?): …'),
      ]).repairs.map((r) => r.request.kind === 'create-queue' && r.request.queueName),
    ).toEqual(['orders-dlq', 'orders']);
    // A setting SQS has no attribute for is named, and the queue left to the operator.
    const tagged = {
      ...TEMPLATE,
      Resources: {
        ...TEMPLATE.Resources,
        D: { ...dlq, Properties: { ...dlq.Properties, Bogus: 1 } },
      },
    };
    expect(planRepairs(tagged, live, findings).left[0]?.reason).toBe(
      'not put back: queue D has settings not re-created here (Bogus)',
    );
  });

  it('leaves a variable whose reference no output resolves, rather than guess it', () => {
    const template = {
      ...TEMPLATE,
      Resources: { ...TEMPLATE.Resources, I: fn({ TABLE_NAME: { Ref: 'NoOutput' } }) },
    };
    const { repairs, left } = planRepairs(template, HEALTHY, [flagged('ingest', 'wiring')]);
    expect(repairs).toEqual([]);
    expect(left).toEqual([
      { subject: 'ingest', name: 'wiring', reason: 'not put back: a variable names no output' },
    ]);
  });

  it('plans nothing more once its repairs are made', () => {
    const drifted: LiveStack = {
      ...HEALTHY,
      queues: { ...HEALTHY.queues, ingest: { ...HEALTHY.queues.ingest, visibilityTimeoutS: 20 } },
      functions: {
        ...HEALTHY.functions,
        aggregate: { ...HEALTHY.functions.aggregate, reservedConcurrency: 0 },
      },
    };
    const findings = [
      flagged('orders queue', 'visibility timeout'),
      flagged('aggregate', 'reserved concurrency'),
    ];
    expect(plan(drifted, findings).repairs).toHaveLength(2);
    expect(plan(HEALTHY, findings).repairs).toEqual([]);
  });

  it('refuses a template that is not CloudFormation’s shape', () => {
    expect(() => planRepairs({ Resources: 'none' }, HEALTHY, [])).toThrow(
      /not CloudFormation's shape: .*at Resources/s,
    );
  });
});

/** Every finding `check` may make on the template's settings, all flagged. */
const EVERYTHING = [
  ...['orders queue', 'aggregate queue'].flatMap((q) =>
    ['visibility timeout', 'dead-letter queue', 'maxReceiveCount', 'DLQ retention'].map((n) =>
      flagged(q, n),
    ),
  ),
  flagged('aggregate queue', 'coalescing'),
  ...['ingest', 'aggregate', 'finalize', 'watch'].flatMap((fn) =>
    ['partial batch responses', 'reserved concurrency', 'wiring'].map((n) => flagged(fn, n)),
  ),
  flagged('ingest', 'trigger', 'no event source mapping from its queue'),
  flagged('aggregate', 'trigger', 'no event source mapping from its queue'),
  flagged('finalize', 'schedule', 'no rule invokes it'),
  flagged('watch', 'schedule', 'no rule invokes it'),
  flagged('orders queue', 'dead-letter queue', 'does not exist (deleted by hand?)'),
  flagged('alarm', 'DA'),
  flagged('alarm', 'IE'),
];

type Fn = keyof LiveStack['functions'];
const FNS: readonly Fn[] = ['ingest', 'aggregate', 'finalize', 'watch'];
const NAMES: Record<Fn, string> = {
  ingest: OUTPUTS.IngestFunctionName,
  aggregate: OUTPUTS.AggregateFunctionName,
  finalize: OUTPUTS.FinalizeFunctionName,
  watch: OUTPUTS.WatchFunctionName,
};

/** What each repair's call does to the running stack, as AWS would apply it. */
const applied = (live: LiveStack, r: Repair): LiveStack => {
  const q = r.request;
  const edit = (fn: Fn | undefined, change: (f: FunctionFacts) => FunctionFacts): LiveStack => {
    if (!fn) throw new Error(`no function for ${r.change}`);
    return { ...live, functions: { ...live.functions, [fn]: change(live.functions[fn]) } };
  };
  const named = (name: string) => FNS.find((fn) => NAMES[fn] === name);
  switch (q.kind) {
    case 'queue-attributes': {
      const key = q.queueUrl.includes('aggregate') ? 'aggregate' : 'ingest';
      const dlq = [OUTPUTS.OrdersDlqUrl, OUTPUTS.AggregateDlqUrl].includes(q.queueUrl);
      const facts = { ...live.queues[key] };
      for (const [name, value] of Object.entries(q.attributes)) {
        if (name === 'VisibilityTimeout') facts.visibilityTimeoutS = Number(value);
        if (name === 'DelaySeconds') facts.delaySeconds = Number(value);
        if (name === 'MessageRetentionPeriod' && dlq) facts.dlqRetentionS = Number(value);
        if (name === 'MessageRetentionPeriod' && !dlq) facts.retentionS = Number(value);
        if (name === 'RedrivePolicy' && value === '') delete facts.redrive;
        if (name === 'RedrivePolicy' && value !== '')
          facts.redrive = parseJson(
            v.object({ deadLetterTargetArn: v.string(), maxReceiveCount: v.number() }),
            value,
          );
      }
      return { ...live, queues: { ...live.queues, [key]: facts } };
    }
    case 'response-types':
      return edit(
        FNS.find((fn) => live.functions[fn].mappings.some((m) => m.UUID === q.uuid)),
        (f) => ({
          ...f,
          mappings: f.mappings.map((m) =>
            m.UUID === q.uuid ? { ...m, FunctionResponseTypes: [...q.functionResponseTypes] } : m,
          ),
        }),
      );
    case 'reserved-concurrency':
      return edit(named(q.functionName), ({ reservedConcurrency: _, ...f }) =>
        q.value === undefined ? f : { ...f, reservedConcurrency: q.value },
      );
    case 'timeout':
      return edit(named(q.functionName), (f) => ({ ...f, timeoutS: q.seconds }));
    case 'environment':
      return edit(named(q.functionName), (f) => ({ ...f, environment: { ...q.variables } }));
    case 'create-queue': {
      const key = q.queueName.includes('aggregate') ? 'aggregate' : 'ingest';
      const dlqQueue = q.queueName.includes('dlq');
      const { queueMissing: _, dlqMissing: __, ...facts } = live.queues[key];
      const retention = Number(q.attributes.MessageRetentionPeriod ?? 345_600);
      return {
        ...live,
        queues: {
          ...live.queues,
          [key]: dlqQueue
            ? {
                ...facts,
                ...(live.queues[key].queueMissing ? { queueMissing: true } : {}),
                dlqRetentionS: retention,
              }
            : {
                ...facts,
                ...(live.queues[key].dlqMissing ? { dlqMissing: true } : {}),
                visibilityTimeoutS: Number(q.attributes.VisibilityTimeout ?? 30),
                retentionS: retention,
                delaySeconds: Number(q.attributes.DelaySeconds ?? 0),
              },
        },
      };
    }
    case 'create-rule': {
      const fn = FNS.find((f) => live.functions[f].arn === q.rule.Targets[0]?.Arn);
      if (!fn) throw new Error(`no function for ${r.change}`);
      return {
        ...live,
        triggers: { ...live.triggers, [fn]: q.rule.State === 'DISABLED' ? 'Disabled' : 'Enabled' },
      };
    }
    case 'alarm-actions':
      return {
        ...live,
        alarms: (live.alarms ?? []).map((a) =>
          a.alarmName === q.alarmName && !('missing' in a) ? { ...a, actionsEnabled: true } : a,
        ),
      };
    case 'create-alarm':
      return {
        ...live,
        alarms: (live.alarms ?? []).map((a) =>
          a.alarmName === q.alarm.AlarmName
            ? {
                id: a.id,
                logicalId: a.logicalId,
                alarmName: a.alarmName,
                state: 'INSUFFICIENT_DATA',
                reason: 'Unchecked: Initial alarm creation',
                actionsEnabled: q.alarm.ActionsEnabled ?? true,
                actions: (q.alarm.AlarmActions ?? []).length,
                definition: {
                  Statistic: q.alarm.Statistic,
                  Period: q.alarm.Period,
                  EvaluationPeriods: q.alarm.EvaluationPeriods,
                  DatapointsToAlarm: q.alarm.DatapointsToAlarm,
                  Threshold: q.alarm.Threshold,
                  ComparisonOperator: q.alarm.ComparisonOperator,
                  TreatMissingData: q.alarm.TreatMissingData,
                  AlarmActions: q.alarm.AlarmActions ?? [],
                },
              }
            : a,
        ),
      };
    case 'create-mapping':
      return edit(named(q.functionName), (f) => ({
        ...f,
        mappings: [
          {
            UUID: `created-${q.functionName}`,
            EventSourceArn: q.eventSourceArn,
            State: 'Enabled',
            FunctionResponseTypes: [...(q.properties.FunctionResponseTypes ?? [])],
          },
        ],
      }));
  }
};

const option = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const driftArb = fc.record({
  visibility: option(fc.integer({ min: 0, max: 43_200 })),
  retention: option(fc.integer({ min: 60, max: 1_209_600 })),
  dlqRetention: option(fc.integer({ min: 60, max: 1_209_600 })),
  delay: option(fc.integer({ min: 0, max: 900 })),
  redrive: option(
    fc.oneof(
      fc.constant(undefined),
      fc.record({
        deadLetterTargetArn: fc.constantFrom(sqs('other-dlq'), OUTPUTS.OrdersDlqArn),
        maxReceiveCount: fc.integer({ min: 1, max: 1000 }),
      }),
    ),
  ),
  timeout: option(fc.integer({ min: 1, max: 900 })),
  reserved: option(
    fc.tuple(
      fc.constantFrom(...FNS),
      fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
    ),
  ),
  table: option(fc.constantFrom('restored-table', '')),
  extra: option(fc.constantFrom('DEBUG', 'INFO')),
  responseTypesCleared: fc.boolean(),
  triggerDeleted: option(fc.constantFrom<Fn>('ingest', 'aggregate')),
  rulesDeleted: fc.subarray<Fn>(['finalize', 'watch']),
  dlqDeleted: fc.boolean(),
  alarmsSilenced: fc.subarray(['DA', 'IE']),
  alarmsDeleted: fc.subarray(['DA', 'IE']),
  /** Alarms quieted by a threshold raised, or missing data read as fine. */
  alarmsRetuned: fc.subarray(['DA', 'IE']),
});

/** Hand edits an operator may make during an incident, each drawn or not. */
type HandEdits = typeof driftArb extends fc.Arbitrary<infer T> ? T : never;

/** The healthy stack with the drawn hand edits made. */
const drifted = (d: HandEdits): LiveStack => {
  const ingestQueue = { ...HEALTHY.queues.ingest };
  if (d.visibility !== undefined) ingestQueue.visibilityTimeoutS = d.visibility;
  if (d.retention !== undefined) ingestQueue.retentionS = d.retention;
  if (d.dlqRetention !== undefined) ingestQueue.dlqRetentionS = d.dlqRetention;
  const aggregateQueue = { ...HEALTHY.queues.aggregate };
  if (d.delay !== undefined) aggregateQueue.delaySeconds = d.delay;
  let live: LiveStack = { ...HEALTHY, queues: { ingest: ingestQueue, aggregate: aggregateQueue } };
  const edit = (fn: Fn, change: (f: FunctionFacts) => FunctionFacts) => {
    live = { ...live, functions: { ...live.functions, [fn]: change(live.functions[fn]) } };
  };
  if (d.redrive !== undefined) {
    const { redrive: _, ...rest } = ingestQueue;
    live = {
      ...live,
      queues: { ...live.queues, ingest: d.redrive ? { ...rest, redrive: d.redrive } : rest },
    };
  }
  if (d.timeout !== undefined) edit('ingest', (f) => ({ ...f, timeoutS: d.timeout ?? f.timeoutS }));
  if (d.reserved) {
    const [fn, value] = d.reserved;
    edit(fn, ({ reservedConcurrency: _, ...f }) =>
      value === undefined ? f : { ...f, reservedConcurrency: value },
    );
  }
  if (d.table !== undefined)
    edit('ingest', (f) => ({ ...f, environment: { ...f.environment, TABLE_NAME: d.table ?? '' } }));
  if (d.extra !== undefined)
    edit('aggregate', (f) => ({
      ...f,
      environment: { ...f.environment, POWERTOOLS_LOG_LEVEL: d.extra ?? '' },
    }));
  if (d.responseTypesCleared)
    edit('ingest', (f) => ({
      ...f,
      mappings: f.mappings.map((m) => ({ ...m, FunctionResponseTypes: [] })),
    }));
  if (d.triggerDeleted) edit(d.triggerDeleted, (f) => ({ ...f, mappings: [] }));
  for (const fn of d.rulesDeleted) live = { ...live, triggers: { ...live.triggers, [fn]: 'none' } };
  if (d.dlqDeleted)
    live = {
      ...live,
      queues: { ...live.queues, ingest: { ...live.queues.ingest, dlqMissing: true } },
    };
  live = {
    ...live,
    alarms: (live.alarms ?? []).map((a) =>
      d.alarmsDeleted.includes(a.id)
        ? { id: a.id, logicalId: a.logicalId, alarmName: a.alarmName, missing: true }
        : 'missing' in a
          ? a
          : {
              ...a,
              ...(d.alarmsSilenced.includes(a.id) ? { actionsEnabled: false } : {}),
              ...(d.alarmsRetuned.includes(a.id)
                ? {
                    definition: {
                      ...a.definition,
                      Threshold: 100,
                      TreatMissingData: 'notBreaching',
                    },
                  }
                : {}),
            },
    ),
  };
  return live;
};

describe('onceflow check --fix, for any hand edits', () => {
  it('puts back every setting the template sets, keeps what an operator added, and plans nothing more after', () => {
    fc.assert(
      fc.property(driftArb, (d) => {
        const live = drifted(d);
        const fixed = plan(live, EVERYTHING).repairs.reduce(applied, live);
        expect(plan(fixed, EVERYTHING).repairs).toEqual([]);
        // Every judged setting is the template's again; a variable an operator added stays.
        const strip = (l: LiveStack) => ({
          queues: l.queues,
          triggers: l.triggers,
          // A created alarm has no data yet: its state is CloudWatch's to evaluate.
          alarms: (l.alarms ?? []).map((a) =>
            'missing' in a ? a : [a.alarmName, a.actionsEnabled, a.actions, a.definition],
          ),
          functions: FNS.map((fn) => {
            const { mappings, environment, ...rest } = l.functions[fn];
            const { POWERTOOLS_LOG_LEVEL: _, ...templateVariables } = environment;
            return {
              ...rest,
              environment: templateVariables,
              mappings: mappings.map((m) => [m.EventSourceArn, m.FunctionResponseTypes]),
            };
          }),
        });
        expect(strip(fixed)).toEqual(strip(HEALTHY));
        expect(fixed.functions.aggregate.environment.POWERTOOLS_LOG_LEVEL).toBe(d.extra);
      }),
    );
  });
});

describe('onceflow check on the stack’s alarms', () => {
  it('fails an alarm with actions off or deleted, and only warns of one that has no action to run', () => {
    const silenced = (HEALTHY.alarms ?? []).map((a) =>
      'missing' in a ? a : { ...a, actionsEnabled: false },
    );
    expect(judgeAlarms(HEALTHY.alarms ?? []).map((f) => f.verdict)).toEqual(['ok', 'ok']);
    expect(judgeAlarms(silenced).map((f) => [f.name, f.verdict, f.detail])).toEqual([
      [
        'DA',
        'fail',
        'OK, actions off: nobody is told when it fires (a DLQ filling unseen loses its messages when they expire)',
      ],
      [
        'IE',
        'warn',
        'OK, actions off (it has none yet: an alarm email deployed later would not be sent)',
      ],
    ]);
    const [gone] = judgeAlarms([
      { id: 'DA', logicalId: 'DA', alarmName: 'app-DA-7A8B9C', missing: true },
    ]);
    expect(gone).toMatchObject({ verdict: 'fail', detail: expect.stringContaining(DELETED) });
  });

  it('warns of an alarm whose definition was changed by hand, and puts the deployed one back with its actions in one call', () => {
    const [da, ie] = HEALTHY.alarms ?? [];
    if (!da || !ie || 'missing' in da || 'missing' in ie)
      throw new Error('HEALTHY has both alarms');
    const quieted = {
      ...da,
      actionsEnabled: false,
      definition: { ...da.definition, Threshold: 100, TreatMissingData: 'notBreaching' },
    };
    const raised = { ...ie, definition: { ...ie.definition, EvaluationPeriods: 5 } };
    const { resolve, template } = resolverFor(TEMPLATE, HEALTHY);
    const findings = judgeAlarms([quieted, raised], deployedAlarms(template, resolve));
    expect(findings.map((f) => [f.name, f.verdict, f.detail])).toEqual([
      [
        'DA',
        'fail',
        'OK, actions off: nobody is told when it fires (a DLQ filling unseen loses its messages when they expire); changed by hand since the deploy (Threshold 100 → 1): it fires otherwise than deployed',
      ],
      [
        'IE',
        'warn',
        'OK, actions on (none configured: no alarm email); changed by hand since the deploy (EvaluationPeriods 5 → 1; DatapointsToAlarm 5 → 1): it fires otherwise than deployed',
      ],
    ]);
    const { repairs } = plan({ ...HEALTHY, alarms: [quieted, raised] }, findings);
    expect(repairs.map((r) => [r.name, r.change, r.request.kind])).toEqual([
      ['DA', 'put back app-DA-7A8B9C: Threshold 100 → 1; actions off → on', 'create-alarm'],
      [
        'IE',
        'put back app-IE-0D1E2F: EvaluationPeriods 5 → 1; DatapointsToAlarm 5 → 1',
        'create-alarm',
      ],
    ]);
  });

  it('prints the alarms found fine in one line where they stood, and each other one on its own', () => {
    const alarm = (name: string, verdict: Finding['verdict'], detail: string): Finding => ({
      subject: 'alarm',
      name,
      verdict,
      detail,
    });
    const table: Finding = { subject: 'table', name: 'ttl', verdict: 'ok', detail: 'on' };
    const findings = [
      alarm('A', 'ok', 'OK, actions on (none configured: no alarm email)'),
      alarm('B', 'warn', 'OK, actions off (it has none yet…)'),
      alarm('C', 'ok', 'ALARM, actions on (none configured: no alarm email)'),
      table,
    ];
    expect(foldAlarms(findings)).toEqual([
      alarm(
        '2 alarms',
        'ok',
        'actions on (none configured: no alarm email); 1 in ALARM (`onceflow status` says why)',
      ),
      findings[1],
      table,
    ]);
    // One alarm alone is printed as it is.
    expect(foldAlarms(findings.slice(1))).toEqual(findings.slice(1));
  });

  it('creates a deleted alarm as the template declares it, its references resolved through the stack', () => {
    const live: LiveStack = {
      ...HEALTHY,
      alarms: [{ id: 'DA', logicalId: 'DA', alarmName: 'app-DA-7A8B9C', missing: true }],
    };
    const { repairs, left } = plan(live, [flagged('alarm', 'DA')]);
    expect(left).toEqual([]);
    expect(repairs).toEqual([
      {
        subject: 'alarm',
        name: 'DA',
        change:
          'create app-DA-7A8B9C: Maximum of AWS/SQS ApproximateNumberOfMessagesVisible ≥ 1 over 1 × 60 s',
        request: {
          kind: 'create-alarm',
          alarm: {
            ...TEMPLATE.Resources.DA.Properties,
            AlarmName: 'app-DA-7A8B9C',
            // The queue's name from its URL; the topic's ARN, its physical id.
            Dimensions: [{ Name: 'QueueName', Value: 'orders-dlq' }],
            AlarmActions: [TOPIC_ARN],
          },
        },
      },
    ]);
  });

  it('leaves a deleted alarm on metric math, which --fix does not create, with the reason', () => {
    const template = {
      ...TEMPLATE,
      Resources: {
        ...TEMPLATE.Resources,
        IE: {
          Type: 'AWS::CloudWatch::Alarm',
          Properties: { ...TEMPLATE.Resources.IE.Properties, Metrics: [{ Id: 'm1' }] },
        },
      },
    };
    const live: LiveStack = {
      ...HEALTHY,
      alarms: [{ id: 'IE', logicalId: 'IE', alarmName: 'app-IE-0D1E2F', missing: true }],
    };
    expect(planRepairs(template, live, [flagged('alarm', 'IE')])).toEqual({
      repairs: [],
      left: [
        {
          subject: 'alarm',
          name: 'IE',
          reason:
            'not put back: its template properties do not resolve through the stack, or hold what `--fix` does not create (metric math)',
        },
      ],
    });
  });
});
