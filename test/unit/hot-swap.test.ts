import { describe, expect, it } from 'vitest';
import { changedFunctions, changesNeedingRestart, mappingChanges } from '../../local/hot-swap.ts';
import type { LocalFunction } from '../../local/provision.ts';
import type { Template } from '../../local/template.ts';
import { describeWatchEvent } from '../../local/watch.ts';

const resource = (Type: string, Properties: Record<string, unknown> = {}) => ({
  Type,
  Properties,
  Metadata: {},
});

const template = (): Template => ({
  Resources: {
    Work: resource('AWS::SQS::Queue', { VisibilityTimeout: 60 }),
    Things: resource('AWS::DynamoDB::Table', { BillingMode: 'PAY_PER_REQUEST' }),
    Fn: {
      ...resource('AWS::Lambda::Function', {
        Handler: 'index.handler',
        Code: { S3Key: 'aaa.zip' },
        Timeout: 30,
        Environment: { Variables: { TABLE: { Ref: 'Things' } } },
      }),
      Metadata: { 'aws:asset:path': 'asset.aaa' },
    },
    Trigger: resource('AWS::Lambda::EventSourceMapping', { BatchSize: 10 }),
    Role: resource('AWS::IAM::Role', { Path: '/' }),
  },
  Outputs: { QueueUrl: { Value: { Ref: 'Work' } } },
});

describe('what a new synthesis changes beyond the functions', () => {
  it('finds nothing to restart for when only a function’s code and settings changed', () => {
    const next = template();
    next.Resources.Fn = {
      ...resource('AWS::Lambda::Function', {
        Handler: 'main.run',
        Code: { S3Key: 'bbb.zip' },
        Timeout: 60,
        MemorySize: 1024,
        Environment: { Variables: { TABLE: { Ref: 'Things' }, LEVEL: 'DEBUG' } },
      }),
      Metadata: { 'aws:asset:path': 'asset.bbb' },
    };
    expect(changesNeedingRestart(template(), next)).toEqual([]);
  });

  it('ignores resources with no local meaning, such as roles and alarms', () => {
    const next = template();
    next.Resources.Role = resource('AWS::IAM::Role', { Path: '/other/' });
    next.Resources.Alarm = resource('AWS::CloudWatch::Alarm', { Threshold: 1 });
    expect(changesNeedingRestart(template(), next)).toEqual([]);
  });

  it('names each provisioned resource, mapping, renamed function and output that changed', () => {
    const next = template();
    next.Resources.Work = resource('AWS::SQS::Queue', { VisibilityTimeout: 90 });
    delete next.Resources.Things;
    next.Resources.Spare = resource('AWS::S3::Bucket');
    // Another queue: a mapping's source is not changed in place.
    next.Resources.Trigger = resource('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      EventSourceArn: { 'Fn::GetAtt': ['Spare', 'Arn'] },
    });
    next.Resources.Fn = resource('AWS::Lambda::Function', { FunctionName: 'renamed' });
    next.Outputs.QueueUrl = { Value: { 'Fn::GetAtt': ['Work', 'Arn'] } };
    expect(changesNeedingRestart(template(), next)).toEqual([
      'Fn (AWS::Lambda::Function) renamed',
      'Spare (AWS::S3::Bucket) added',
      'Things (AWS::DynamoDB::Table) removed',
      'Trigger (AWS::Lambda::EventSourceMapping) changed',
      'Work (AWS::SQS::Queue) changed',
      'output QueueUrl changed',
    ]);
  });
});

const fn = (overrides: Partial<LocalFunction> = {}): LocalFunction => ({
  logicalId: 'Fn',
  name: 'stack-Fn',
  arn: 'arn:aws:lambda:us-east-1:000000000000:function:stack-Fn',
  handlerFile: '/assembly/asset.aaa/index.mjs',
  handlerExport: 'handler',
  environment: { TABLE: 'stack-Things' },
  timeoutSeconds: 30,
  memoryMb: 512,
  codeSha256: 'aaa=',
  lastModified: '2026-12-05T10:00:00.000Z',
  ...overrides,
});

describe('which mapping settings a new synthesis updates in place', () => {
  it('updates batch size, batching window, scaling, Enabled and response types in place, and only what changed', () => {
    const next = template();
    next.Resources.Trigger = resource('AWS::Lambda::EventSourceMapping', {
      BatchSize: 4,
      ScalingConfig: { MaximumConcurrency: 2 },
      Enabled: false,
    });
    expect(changesNeedingRestart(template(), next)).toEqual([]);
    expect(mappingChanges(template(), next)).toEqual([
      { logicalId: 'Trigger', batchSize: 4, scaling: { maxConcurrency: 2 }, enabled: false },
    ]);
    const reporting = template();
    reporting.Resources.Trigger = resource('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(changesNeedingRestart(template(), reporting)).toEqual([]);
    expect(mappingChanges(template(), reporting)).toEqual([
      { logicalId: 'Trigger', reportBatchItemFailures: true },
    ]);
    expect(mappingChanges(reporting, template())).toEqual([
      { logicalId: 'Trigger', reportBatchItemFailures: false },
    ]);
    const filtered = template();
    const criteria = { Filters: [{ Pattern: '{"body":["ping"]}' }] };
    filtered.Resources.Trigger = resource('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      FilterCriteria: criteria,
    });
    expect(changesNeedingRestart(template(), filtered)).toEqual([]);
    expect(mappingChanges(template(), filtered)).toEqual([
      { logicalId: 'Trigger', filterCriteria: criteria },
    ]);
    expect(mappingChanges(filtered, template())).toEqual([
      { logicalId: 'Trigger', filterCriteria: {} },
    ]);
    // Back to the defaults: no batch size is 10, no ScalingConfig is no maximum.
    expect(mappingChanges(next, template())).toEqual([
      {
        logicalId: 'Trigger',
        batchSize: 10,
        scaling: { maxConcurrency: undefined },
        enabled: true,
      },
    ]);
  });

  it('finds nothing to update when no mapping setting changed, or a mapping is new', () => {
    const next = template();
    next.Resources.Other = resource('AWS::Lambda::EventSourceMapping', { BatchSize: 3 });
    expect(mappingChanges(template(), template())).toEqual([]);
    expect(mappingChanges(template(), next)).toEqual([]);
  });
});

describe('which functions a new synthesis updates', () => {
  it('takes a function whose code, handler, environment, timeout, memory, async retries or reserved concurrency differ', () => {
    for (const change of [
      { codeSha256: 'bbb=' },
      { handlerExport: 'run' },
      { environment: { TABLE: 'stack-Things', LEVEL: 'DEBUG' } },
      { timeoutSeconds: 60 },
      { memoryMb: 1024 },
      { asyncInvoke: { maximumRetryAttempts: 0, maximumEventAgeSeconds: 300 } },
      { reservedConcurrency: 2 },
    ])
      expect(changedFunctions([fn()], [fn(change)])).toEqual([fn(change)]);
  });

  it('leaves a function alone when the same code comes from another assembly directory', () => {
    const again = fn({
      handlerFile: '/elsewhere/asset.aaa/index.mjs',
      lastModified: '2026-12-05T11:00:00.000Z',
    });
    expect(changedFunctions([fn()], [again])).toEqual([]);
  });

  it('updates no function the running stack does not have', () => {
    expect(changedFunctions([fn()], [fn({ logicalId: 'Other', codeSha256: 'bbb=' })])).toEqual([]);
  });
});

describe('what the watcher prints', () => {
  it('names the updated functions and what waits for a restart', () => {
    const text = describeWatchEvent({
      kind: 'updated',
      ms: 12,
      update: {
        updated: [fn()],
        restartNeeded: ['Work (AWS::SQS::Queue) changed'],
        mappings: [
          'Trigger: batch size 10 → 4',
          'Other not updated: Batching window is not supported for FIFO queues',
        ],
      },
    });
    expect(text).toBe(
      '  Fn updated in 12 ms: invocations from now on run the new code in fresh environments\n' +
        '  trigger Trigger: batch size 10 → 4\n' +
        '! trigger Other not updated: Batching window is not supported for FIFO queues\n' +
        '! not applied until npm start runs again: Work (AWS::SQS::Queue) changed',
    );
  });

  it('shows esbuild’s errors of a failed synthesis, not the stacks after them', () => {
    const output = [
      'Bundling asset onceflow-dev/AggregateHours/Function/Code/Stage...',
      '✘ [ERROR] Unexpected ";"',
      '',
      '    functions/aggregate-hours.ts:146:30:',
      '      146 │ export const broken: number = ;',
      '          ╵                               ^',
      '',
      'node:internal/modules/run_main:107',
      '    triggerUncaughtException(',
      '«FailedToBundleAsset» Failed to bundle asset onceflow-dev/AggregateHours/Function/Code/Stage',
    ].join('\n');
    expect(describeWatchEvent({ kind: 'synth-failed', error: new Error(output) })).toBe(
      [
        '✘ the synthesis failed; the functions keep the code they run:',
        '✘ [ERROR] Unexpected ";"',
        '',
        '    functions/aggregate-hours.ts:146:30:',
        '      146 │ export const broken: number = ;',
        '          ╵                               ^',
      ].join('\n'),
    );
  });

  it('says when the system stopped reporting changes, and that the stack runs on', () => {
    const error = new Error('ENOSPC: System limit for number of file watchers reached');
    expect(describeWatchEvent({ kind: 'watch-failed', error })).toBe(
      '✘ watching stopped (ENOSPC: System limit for number of file watchers reached); the stack runs on with the code it has',
    );
  });

  it('shows the end of a failed synthesis, and at most three changed files', () => {
    const output = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const failed = describeWatchEvent({ kind: 'synth-failed', error: new Error(output) });
    expect(failed.split('\n').slice(1)).toEqual(
      Array.from({ length: 20 }, (_, i) => `line ${i + 10}`),
    );
    expect(
      describeWatchEvent({ kind: 'synthesizing', changed: ['a.ts', 'b.ts', 'c.ts', 'd.ts'] }),
    ).toBe('▸ a.ts, b.ts, c.ts and 1 more changed: synthesizing…');
  });
});
