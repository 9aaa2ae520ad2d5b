/** The CLI's views of a local stack: orders, rejects, logs, invoke, table check, profiles. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../local/net.ts';
import { follow, onceflow } from '../support/cli.ts';
import { RejectsSchema, SEED, useCliStacks } from '../support/cli-stack.ts';
import { DEADLINE_MS, DEADLINE_S } from '../support/deadlines.ts';
import { expectedOrders, seedBatches } from '../support/fixtures.ts';
import { parseBatch, parseJson } from '../support/json.ts';
import { uniqueName } from '../support/pipeline.ts';

const { dir, stack } = useCliStacks();

describe('onceflow inspecting the local stack', () => {
  it('uses a named profile of the shared AWS files with --profile, and names one that is missing', async () => {
    await using s = await stack();
    const config = join(dir, `${uniqueName('aws-config')}`);
    const credentials = join(dir, `${uniqueName('aws-credentials')}`);
    writeFileSync(config, '[profile drill]\nregion = us-east-1\n');
    writeFileSync(
      credentials,
      '[drill]\naws_access_key_id = drill\naws_secret_access_key = drill\n',
    );
    const files = { AWS_CONFIG_FILE: config, AWS_SHARED_CREDENTIALS_FILE: credentials };
    const common = ['--target', 'localstack', '--endpoint', s.runtime.endpoint];
    const stackName = ['--stack-name', s.runtime.stack.stackName];
    const ok = await onceflow([...common, ...stackName, '--profile', 'drill', 'status', '--json'], {
      ...files,
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
    });
    expect(ok.stderr).toBe('');
    expect(JSON.parse(ok.stdout)).toMatchObject({ ledger: { applied: 0, pending: 0 } });
    const missing = await onceflow(
      [...common, ...stackName, '--profile', 'no-such-profile', 'status'],
      { ...files, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' },
    );
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toContain('no-such-profile');
  });

  it('checks a restored table with table check, and turns on its TTL with --fix', async () => {
    await using s = await stack();
    const own = await s.cli('table', 'check', '--table', s.outputs.TableName ?? '');
    expect(own.code).toBe(0);
    expect(own.stdout).toContain('✓ key schema: pk HASH S, sk RANGE S');
    expect(own.stdout).toContain('✓ TTL on expiresAt: ENABLED');
    expect(own.stdout).toContain('point-in-time recovery: not available on this endpoint');
    // A restored table has the key, but not the TTL: refused, then fixed.
    const restored = uniqueName('restored');
    await s.runtime.clients.dynamo.send(
      new CreateTableCommand({
        TableName: restored,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      }),
    );
    const before = await s.cli('table', 'check', '--table', restored);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain('✗ TTL on expiresAt');
    const fixed = await s.cli('table', 'check', '--table', restored, '--fix');
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toContain(`${restored} can serve the stack`);
    const missing = await s.cli('table', 'check', '--table', uniqueName('none'));
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toContain('does not exist');
  });

  it('prints a function’s log with logs, filtered by text and time, and follows new lines with --follow', async () => {
    await using s = await stack();
    expect((await s.cli('send', SEED)).code).toBe(0);
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    const applied = await s.cli('logs', 'ingest', '--filter', 'batch applied');
    expect(applied.code, applied.stderr).toBe(0);
    const lines = applied.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ message: 'batch applied' });
    expect(
      (await s.cli('logs', 'ingest', '--since', '1h', '--filter', 'batch applied')).stdout,
    ).toBe(applied.stdout);
    expect((await s.cli('logs', 'ingest', '--since', '2999-01-01T00:00:00Z')).stdout).toBe('');
    // Lambda's own lines too, as in CloudWatch: a REPORT per invocation, the first with its init.
    const reports = (await s.cli('logs', 'ingest', '--filter', 'REPORT')).stdout.trim().split('\n');
    expect(reports.length).toBeGreaterThanOrEqual(1);
    for (const report of reports) expect(report).toMatch(/^REPORT RequestId: [\w-]+\tDuration: /);
    expect(reports.filter((r) => r.includes('\tInit Duration: '))).not.toEqual([]);
    const bad = await s.cli('logs', 'ingest', '--since', 'yesterday');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--since yesterday: give a duration');

    const follower = follow([
      '--local-state',
      join(dir, `${s.runtime.stack.stackName}.json`),
      'logs',
      'ingest',
      '--follow',
      '--filter',
      'follow-me',
    ]);
    try {
      const [first = ''] = seedBatches();
      const body = JSON.stringify({ ...JSON.parse(first), batchId: uniqueName('follow-me') });
      await s.runtime.clients.sqs.send(
        new SendMessageCommand({ QueueUrl: s.outputs.OrdersQueueUrl, MessageBody: body }),
      );
      await waitFor(() => follower.stdout().includes('follow-me'), {
        timeoutMs: DEADLINE_MS,
        what: 'logs --follow to print the new batch',
      });
    } finally {
      follower.stop();
    }
  });

  it('invokes a function with the SQS event its queue’s mapping would build, printing its log tail and each failed line', async () => {
    await using s = await stack();
    const prefix = uniqueName('invoke');
    const batchOf = (n: number) =>
      JSON.stringify({
        batchId: `${prefix}-${n}`,
        events: [
          {
            eventId: `${prefix}-e${n}`,
            orderId: `${prefix}-o${n}`,
            customerId: 'C1',
            status: 'placed',
            amount: '5.00',
            currency: 'USD',
            eventTime: '2026-10-01T09:05:00Z',
          },
        ],
      });
    const file = join(dir, `${prefix}.ndjson`);
    writeFileSync(file, `${batchOf(1)}\n{"batchId":\n`);

    // The event alone: the orders queue's records, in the file's order; nothing runs.
    const only = await s.cli('invoke', 'ingest', file, '--event-only');
    expect(only.code, only.stderr).toBe(0);
    const EventSchema = v.object({
      Records: v.array(v.object({ body: v.string(), eventSourceARN: v.string() })),
    });
    expect(
      parseJson(EventSchema, only.stdout).Records.map((r) => [r.body, r.eventSourceARN]),
    ).toEqual([
      [batchOf(1), s.outputs.OrdersQueueArn],
      ['{"batchId":', s.outputs.OrdersQueueArn],
    ]);
    expect(await s.views.orders()).toEqual([]);

    const invoked = await s.cli('invoke', 'ingest', file, '--logs');
    expect(invoked.code, invoked.stderr).toBe(0);
    expect(invoked.stdout).toContain('with 2 records');
    expect(invoked.stdout).toContain('✓ every record succeeded');
    // A fresh environment's first invocation, counted as a cold start as on Lambda, and the
    // REPORT line's fields apart by tabs.
    expect(invoked.stdout).toContain('"cold_start":true');
    expect(invoked.stdout).toMatch(
      /REPORT RequestId: [\w-]+\tDuration: [\d.]+ ms\t.*\tInit Duration: [\d.]+ ms\n/,
    );
    expect((await s.views.orders()).map((o) => o.orderId)).toEqual([`${prefix}-o1`]);
    // One invocation's lines in its function's log, found by its request id.
    const requestId = /^START RequestId: ([\w-]+)/m.exec(invoked.stdout)?.[1] ?? '';
    const own = (await s.cli('logs', 'ingest', '--filter', requestId)).stdout.trim().split('\n');
    expect(own[0]).toBe(`START RequestId: ${requestId} Version: $LATEST`);
    expect(own.some((l) => l.includes('"message":"batch applied"'))).toBe(true);
    expect(own.at(-1)).toMatch(new RegExp(`^REPORT RequestId: ${requestId}\t`));
    // The body that is no batch was quarantined, not failed.
    const rejects = parseJson(RejectsSchema, (await s.cli('rejects', '--json')).stdout);
    expect(rejects.map((r) => r.reason)).toEqual(['invalid-json']);

    // Bodies go to the SQS-triggered functions only.
    const noFile = await s.cli('invoke', 'ingest');
    expect([noFile.code, noFile.stderr]).toEqual([
      1,
      'onceflow: give ingest a file of message bodies, one per line (- for stdin)\n',
    ]);
    const withFile = await s.cli('invoke', 'finalize', file);
    expect(withFile.stderr).toContain("finalize runs on its schedule's event: it takes no bodies");

    // An environment that dies before the commit fails the whole invocation: exit 1.
    s.runtime.addCrash({ when: (call) => call.action === 'TransactWriteItems', phase: 'before' });
    const second = join(dir, `${prefix}-2.ndjson`);
    writeFileSync(second, batchOf(2));
    const crashed = await s.cli('invoke', 'ingest', second);
    expect(crashed.code).toBe(1);
    expect(crashed.stdout).toContain('✘ it failed (Unhandled): Runtime.ExitError');
    expect(crashed.stdout).toContain('every record would be delivered again');
  });

  it('lists quarantined messages with their reasons, counts them in status, and reads orders by id, by customer and page by page', async () => {
    await using s = await stack();
    const file = join(dir, 'bad.ndjson');
    writeFileSync(
      file,
      ['{"batchId":', JSON.stringify({ batchId: 'x', events: [] }), ...seedBatches()].join('\n'),
    );
    await s.cli('send', file);
    await s.cli('drain');
    const rejects = parseJson(RejectsSchema, (await s.cli('rejects', '--json')).stdout);
    expect(rejects.map((r) => r.reason).sort()).toEqual(['invalid-json', 'schema-violation']);
    expect((await s.cli('rejects')).stdout).toContain('2 quarantined');
    const byReason = await s.cli('rejects', '--json', '--reason', 'invalid-json');
    expect(parseJson(RejectsSchema, byReason.stdout).map((r) => r.reason)).toEqual([
      'invalid-json',
    ]);
    expect((await s.cli('rejects', '--since', '2999-01-01')).stdout).toContain('0 quarantined');
    expect((await s.cli('rejects', '--since', '2000-01-01')).stdout).toContain('2 quarantined');
    // The body refused whole named batch x: found by its id, and named by `batch x`.
    const named = await s.cli('rejects', '--json', '--batch-id', 'x');
    expect(parseJson(RejectsSchema, named.stdout).map((r) => r.reason)).toEqual([
      'schema-violation',
    ]);
    const absent = await s.cli('batch', 'x');
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain('onceflow rejects --batch-id x');
    const one = JSON.parse((await s.cli('orders', '--json', '--order-id', '1001')).stdout);
    expect(one).toEqual(expectedOrders().filter((o) => o.orderId === '1001'));
    const c01 = JSON.parse((await s.cli('orders', '--json', '--customer', 'C01')).stdout);
    expect(c01).toEqual(expectedOrders().filter((o) => o.customerId === 'C01'));
    // Page by page: each page's cursor on stderr, the pages together every order once.
    const paged: unknown[] = [];
    let after: string[] = [];
    for (let page = 0; page < 10; page++) {
      const out = await s.cli('orders', '--json', '--limit', '3', ...after);
      paged.push(...parseJson(v.array(v.unknown()), out.stdout));
      const next = /more: --after (\S+)/.exec(out.stderr)?.[1];
      if (next === undefined) break;
      after = ['--after', next];
    }
    expect(paged).toEqual(expect.arrayContaining(expectedOrders()));
    expect(paged).toHaveLength(expectedOrders().length);
    const badCursor = await s.cli('orders', '--limit', '3', '--after', 'bogus');
    expect(badCursor.code).toBe(1);
    expect(badCursor.stderr).toContain('bogus: not a cursor onceflow handed out');
    const unknown = await s.cli('orders', '--order-id', 'no-such-order');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no order no-such-order');
    const status = await s.cli('status');
    expect(status.stdout).toMatch(
      /ledger: 4 batches applied \(\d+ events\), 0 pending; duplicates recognised: \S+; conflicts: 0; rejects: 2/,
    );
    // The quarantine alarm fired, with CloudWatch's reason: the rejects in its period (a
    // redelivered reject counts again in the metric, not in the reject records).
    expect(status.stdout).toMatch(/^alarms: \d+, 1 in ALARM$/m);
    expect(status.stdout).toMatch(
      /^ {2}ALARM RejectedMessages: Threshold Crossed: 1 datapoint \[\d+\.0 \(\d\d\/\d\d\/\d\d \d\d:\d\d:\d\d\)\] was greater than or equal to the threshold \(1\.0\)\.$/m,
    );
  });

  it('prints quarantined bodies one per line with rejects --bodies, and the corrected ones apply when sent', async () => {
    await using s = await stack();
    const event = (orderId: string, amount: unknown) => ({
      eventId: 'e-1',
      orderId,
      customerId: 'C09',
      status: 'placed',
      amount,
      currency: 'USD',
      eventTime: '2026-10-01T09:00:00Z',
    });
    // A producer's bodies: an amount as a number, pretty-printed over several lines; a body cut
    // short; and one cut short over two lines, which no single line can hold unchanged.
    const pretty = JSON.stringify({ batchId: 'fix-1', events: [event('fix-1', 25.5)] }, null, 2);
    const cut = JSON.stringify({ batchId: 'fix-2', events: [event('fix-2', '7.25')] }).slice(0, -2);
    const sent = await s.runtime.clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: s.outputs.OrdersQueueUrl,
        Entries: [pretty, cut, '{"batchId":\n"fix-'].map((body, i) => ({
          Id: String(i),
          MessageBody: body,
        })),
      }),
    );
    expect(sent.Failed ?? []).toEqual([]);
    const unreadable = sent.Successful?.find((m) => m.Id === '2')?.MessageId;
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);

    const out = await s.cli('rejects', '--bodies');
    expect(out.code).toBe(0);
    const lines = out.stdout.split('\n').filter((line) => line !== '');
    expect(lines.sort()).toEqual([cut, pretty.replaceAll('\n', ' ')].sort());
    expect(out.stderr).toContain(
      `left out ${unreadable} (invalid-json): its body spans several lines and is not JSON`,
    );
    expect(out.stderr).toContain('2 bodies to correct and send again');

    // Corrected as an operator would: the amount as a string, the cut body completed.
    const fixed = join(dir, 'fixed.ndjson');
    writeFileSync(
      fixed,
      lines
        .map((line) => (line === cut ? `${line}]}` : line.replace('25.5', '"25.50"')))
        .join('\n'),
    );
    expect((await s.cli('send', fixed)).code).toBe(0);
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    const orders = parseJson(
      v.array(v.object({ orderId: v.string(), amount: v.string() })),
      (await s.cli('orders', '--json', '--customer', 'C09')).stdout,
    );
    expect(orders.map((o) => [o.orderId, o.amount]).sort()).toEqual([
      ['fix-1', '25.50'],
      ['fix-2', '7.25'],
    ]);
    expect(parseJson(RejectsSchema, (await s.cli('rejects', '--json')).stdout)).toHaveLength(3);

    const both = await s.cli('rejects', '--bodies', '--json');
    expect(both.code).toBe(1);
    expect(both.stderr).toContain("option '--bodies' cannot be used with option '--json'");
  });
});

describe('untrusted text in the terminal', () => {
  it('prints hostile keys, details and ids escaped in rejects and orders, and exactly in --json', async () => {
    await using s = await stack();
    // An unknown key that would retitle and clear the terminal, and one far too long for a detail.
    const hostileKey = '\u001b]0;pwned\u0007\u001b[2J';
    const [first = '{}'] = seedBatches();
    const bad = { ...parseBatch(first), batchId: 'hostile-1', [hostileKey]: 1 };
    const long = { ...parseBatch(first), batchId: 'hostile-2', ['k'.repeat(5000)]: 1 };
    // Valid under the contract: C1 and bidi characters are not C0 controls.
    const event = { ...parseBatch(first).events[0], customerId: 'C\u009b2J\u202eevil' };
    const sneaky = { batchId: 'hostile-3', events: [event] };
    const file = join(dir, 'hostile.ndjson');
    writeFileSync(file, [bad, long, sneaky].map((b) => JSON.stringify(b)).join('\n'));
    expect((await s.cli('send', file)).code).toBe(0);
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);

    const rejects = await s.cli('rejects');
    for (const c of ['\u001b', '\u0007', '\u009b', '\u202e'])
      expect(rejects.stdout).not.toContain(c);
    expect(rejects.stdout).toContain('\\u{001b}]0;pwned\\u{0007}');
    const records = parseJson(RejectsSchema, (await s.cli('rejects', '--json')).stdout);
    const hostile = records.find((r) => r.body === JSON.stringify(bad));
    expect(hostile?.detail).toContain(hostileKey);
    expect(hostile?.body).toBe(JSON.stringify(bad));
    const bounded = records.find((r) => r.body === JSON.stringify(long));
    expect(bounded?.detail.length).toBeLessThan(1200);
    expect(bounded?.detail).toContain('the body is kept whole');
    expect(bounded?.body).toBe(JSON.stringify(long));

    const orders = await s.cli('orders');
    for (const c of ['\u009b', '\u202e']) expect(orders.stdout).not.toContain(c);
    expect(orders.stdout).toContain('C\\u{009b}2J\\u{202e}evil');
    const exact = parseJson(
      v.array(v.object({ customerId: v.string() })),
      (await s.cli('orders', '--json')).stdout,
    );
    expect(exact.map((o) => o.customerId)).toContain('C\u009b2J\u202eevil');

    // An object under rejects/ that the quarantine did not write, with a hostile key: the error
    // names the key, escaped.
    await s.runtime.clients.s3.send(
      new PutObjectCommand({
        Bucket: s.outputs.BucketName,
        Key: `rejects/ingest/${hostileKey}.json`,
        Body: '{"note":"not a reject"}',
      }),
    );
    const foreign = await s.cli('rejects');
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('is not a reject record');
    expect(foreign.stderr).toContain('\\u{001b}]0;pwned\\u{0007}');
    expect(foreign.stderr).not.toContain('\u001b');
  });
});
