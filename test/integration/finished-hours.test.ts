import * as v from 'valibot';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { sendBodies } from '../../adapters/sqs.ts';
import { aggregateDependencies } from '../../adapters/wiring.ts';
import type { FaultKind } from '../../harness/faults.ts';
import { startLocalRuntime } from '../../local/runtime.ts';
import { restoreTable, snapshotTable } from '../../local/snapshot.ts';
import { loadAggregateConfig } from '../../shared/config.ts';
import { publishDayIndex } from '../../shared/day-index.ts';
import { FinalizerRunSchema, QUARANTINE_CLOSE_GRACE_MS } from '../../shared/finalizer.ts';
import { dayIndexKey } from '../../shared/keys.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { useEmulators } from '../support/emulators.ts';
import { apply, batch, DAY, dayIndex, H09, H10, objectOf } from '../support/hours.ts';
import { uniqueName } from '../support/names.ts';
import { holdUntilConcurrent } from '../support/overlap.ts';
import { createPipeline, heldS3Clients, type Pipeline, stateViews } from '../support/pipeline.ts';

/** Whether an S3 write is a day's index (under `_final/`), not an hour object. */
const writesDayIndex = (input: unknown) => JSON.stringify(input).includes('_final/');

describe('finished hours (allowedLatenessMinutes 120)', () => {
  it('finalizes an hour once the watermark passes its end, not before, and lists it in its day’s index', async () => {
    const p = await createPipeline();
    await apply(p, batch('09:10', '09:40'));
    // Latest event 09:40: the watermark (07:30) is before 09:00's end.
    expect((await p.finalize()).finalized).toEqual([]);
    expect(await objectOf(p, H09)).not.toHaveProperty('final');
    expect(await dayIndex(p)).toBeUndefined();

    await apply(p, batch('12:40'));
    // Latest event 12:40 (step 12:30): the watermark is 10:30, past 09:00's end, not 10:00's.
    const run = await p.finalize();
    expect(run.watermark).toBe(`${DAY}T10:30:00.000Z`);
    expect(run.finalized.map((f) => [f.hour, f.events])).toEqual([[H09, 2]]);
    expect(run.nextHour).toBe(H10);
    expect(await objectOf(p, H09)).toMatchObject({ final: true, amendments: 0, events: 2 });
    expect(await objectOf(p, H09)).toHaveProperty('finalizedAt');
    expect(await objectOf(p, `${DAY}T12:00:00Z`)).not.toHaveProperty('final');
    expect((await dayIndex(p))?.hours).toEqual([
      { hour: H09, revision: (await objectOf(p, H09))?.revision, events: 2, amendments: 0 },
    ]);
    // Nothing more to do until the watermark moves.
    expect((await p.finalize()).finalized).toEqual([]);
  });

  it('applies an event later than final once, republishing the hour with its amendments raised', async () => {
    const p = await createPipeline();
    await apply(p, batch('09:10'), batch('12:40'));
    await p.finalize();
    const late = batch('09:55');
    await apply(p, late);
    const amended = await objectOf(p, H09);
    expect(amended).toMatchObject({ final: true, amendments: 1, events: 2 });
    expect(amended).toHaveProperty('amendedAt');
    expect((await dayIndex(p))?.hours).toEqual([
      { hour: H09, revision: amended?.revision, events: 2, amendments: 1 },
    ]);
    // The same late batch again changes nothing: no second amendment.
    await apply(p, late);
    expect(await objectOf(p, H09)).toMatchObject({ amendments: 1, events: 2 });
  });

  it('finalizes an hour without events too, and counts its first late event as an amendment', async () => {
    const p = await createPipeline();
    await apply(p, batch('09:10'), batch('13:40'));
    // Watermark 11:30: 09:00 and the empty 10:00 are final.
    expect((await p.finalize()).finalized.map((f) => [f.hour, f.events])).toEqual([
      [H09, 1],
      [H10, 0],
    ]);
    expect(await objectOf(p, H10)).toBeUndefined();
    expect((await dayIndex(p))?.hours.map((h) => [h.hour, h.events])).toEqual([
      [H09, 1],
      [H10, 0],
    ]);
    await apply(p, batch('10:05'));
    expect(await objectOf(p, H10)).toMatchObject({ final: true, amendments: 1, events: 1 });
  });

  it('holds back the hours a batch in progress may touch until it commits, from the earliest', async () => {
    const p = await createPipeline();
    await apply(p, batch('09:10'), batch('12:40'));
    // Batches of 10:20 and of 09:20 crash before their commits: claimed, pending. The earliest
    // holds the finalizer back, whichever was claimed first.
    p.faults.add({ site: 'TransactWriteItems', kind: 'crash-before', times: 2 });
    const later = batch('10:20');
    const stuck = batch('09:20');
    for (const [body, messageId] of [
      [later, 'm-later'],
      [stuck, 'm-stuck'],
    ] as const)
      expect((await p.ingest([{ body, messageId }])).batchItemFailures).toHaveLength(1);
    const held = await p.finalize();
    expect(held).toMatchObject({ finalized: [], heldBy: 'pending-batch', nextHour: H09 });
    expect(await objectOf(p, H09)).not.toHaveProperty('final');

    await apply(p, later, stuck);
    const run = await p.finalize();
    expect(run.finalized.map((f) => [f.hour, f.events])).toEqual([[H09, 2]]);
    expect(await objectOf(p, H09)).toMatchObject({ final: true, amendments: 0, events: 2 });
  });

  it('publishes a backlog of hours several at a time, and reports and lists them in hour order', async () => {
    const p = await createPipeline();
    await apply(p, batch('04:10'), batch('05:10', '05:20'), batch('07:10'), batch('12:40'));
    // Three hour objects to publish: a run that publishes them one at a time never has the
    // three in flight at once, and fails here.
    holdUntilConcurrent(p.faults, 'PutObject:aggregates', 3);
    const run = await p.finalize();
    const backlog = ['04', '05', '06', '07', '08', '09'].map((h) => `${DAY}T${h}:00:00Z`);
    expect(run.finalized.map((f) => [f.hour, f.events])).toEqual(
      backlog.map((hour, i) => [hour, [1, 2, 0, 1, 0, 0][i]]),
    );
    expect(run.nextHour).toBe(H10);
    // Only the hours with events have an object; the empty ones are final in the index alone.
    for (const hour of [backlog[0], backlog[1], backlog[3]])
      expect(await objectOf(p, hour ?? '')).toMatchObject({ final: true, amendments: 0 });
    expect((await dayIndex(p))?.hours.map((h) => h.hour)).toEqual(backlog);
  });

  it('finalizes once when two runs overlap', async () => {
    const p = await createPipeline();
    await apply(p, batch('09:10'), batch('12:40'));
    const runs = await Promise.all([p.finalize(), p.finalize()]);
    expect(runs.flatMap((r) => r.finalized.map((f) => f.hour)).sort()).toEqual([H09, H09]);
    expect(await objectOf(p, H09)).toMatchObject({ final: true, amendments: 0, events: 1 });
    expect((await dayIndex(p))?.hours.map((h) => h.hour)).toEqual([H09]);
    expect((await p.finalize()).finalized).toEqual([]);
  });

  it('keeps a newly final hour in its day’s index when an older publication is slow to read the index', async () => {
    // The index's ETag must be read before the marks: a publication that read the marks first
    // and the index after a newer one would write its older list over it.
    const p = await createPipeline();
    await apply(p, batch('09:10'), batch('12:40'));
    const held = heldS3Clients(
      p,
      'GetObject:aggregates',
      (input) => (input as { Key?: string }).Key === dayIndexKey(DAY),
    );
    const slow = publishDayIndex(
      DAY,
      aggregateDependencies(loadAggregateConfig(p.env), held.clients).index,
    );
    await held.reached;

    expect((await p.finalize()).finalized.map((f) => f.hour)).toEqual([H09]);
    held.release();
    expect((await slow).hours.map((h) => h.hour)).toEqual([H09]);
    expect((await dayIndex(p))?.hours.map((h) => h.hour)).toEqual([H09]);
  });

  it('keeps its final hours in a day’s index when a restored table lost their marks and a late event amends one', async () => {
    const p = await createPipeline();
    await apply(p, batch('09:10'));
    const copy = await snapshotTable(p.admin.dynamo, p.tableName);
    // The watermark (11:30) passes 09:00 and 10:00, which has no events (listed with none).
    await apply(p, batch('13:40'));
    await p.finalize();
    expect((await dayIndex(p))?.hours.map((h) => [h.hour, h.events])).toEqual([
      [H09, 1],
      [H10, 0],
    ]);
    // Back to a copy older than the marks: the objects stay final, and what lands in their hours
    // now is an amendment.
    await restoreTable(p.admin.dynamo, p.tableName, copy);
    await apply(p, batch('09:55'));
    const amended = await objectOf(p, H09);
    expect(amended).toMatchObject({ final: true, amendments: 1, events: 2 });
    expect((await dayIndex(p))?.hours).toEqual([
      { hour: H09, revision: amended?.revision, events: 2, amendments: 1 },
      { hour: H10, revision: 0, events: 0, amendments: 0 },
    ]);
  });

  it.each([
    {
      how: 'its notification comes again',
      after: (p: Pipeline) =>
        p.sendToAggregateQueue(JSON.stringify({ hour: H09 })).then(() => p.drainAggregates()),
      listed: { events: 1, amendments: 0 },
    },
    {
      how: 'a late event amends it',
      after: (p: Pipeline) => apply(p, batch('09:55')),
      listed: { events: 2, amendments: 1 },
    },
  ])(
    'lists a final hour its day’s index missed when $how after its mark was lost',
    async ({ after, listed }) => {
      const p = await createPipeline();
      await apply(p, batch('09:10'), batch('12:40'));
      const copy = await snapshotTable(p.admin.dynamo, p.tableName);
      // The finalizer crashes between the hour's object (final now) and its day's index.
      p.faults.add({
        site: 'PutObject:aggregates',
        kind: 'crash-before',
        when: writesDayIndex,
      });
      await expect(p.finalize()).rejects.toThrow();
      expect(await objectOf(p, H09)).toMatchObject({ final: true });
      expect(await dayIndex(p)).toBeUndefined();
      // The table goes back to before the mark, then the hour is published again.
      await restoreTable(p.admin.dynamo, p.tableName, copy);
      await after(p);
      const object = await objectOf(p, H09);
      expect((await dayIndex(p))?.hours).toEqual([
        { hour: H09, revision: object?.revision, ...listed },
      ]);
    },
  );
});

/** The finalizer's side effects, each told apart by what it writes. */
const FINALIZER_STEPS: { name: string; site: string; when?: (input: unknown) => boolean }[] = [
  { name: 'the closing mark', site: 'PutItem:other' },
  {
    name: 'the final mark',
    site: 'UpdateItem',
    when: (input) => JSON.stringify(input).includes('finalizedAt'),
  },
  {
    name: 'the hour object',
    site: 'PutObject:aggregates',
    when: (input) => !writesDayIndex(input),
  },
  {
    name: 'the final revision',
    site: 'UpdateItem',
    when: (input) => JSON.stringify(input).includes('finalRevision'),
  },
  {
    name: 'the day index',
    site: 'PutObject:aggregates',
    when: writesDayIndex,
  },
  {
    name: 'the cursor',
    site: 'UpdateItem',
    when: (input) => JSON.stringify(input).includes('nextHour'),
  },
];

describe.concurrent('a crash at every step of the finalizer', () => {
  const cases = FINALIZER_STEPS.flatMap((step) =>
    (['crash-before', 'crash-after'] as FaultKind[]).flatMap((kind) =>
      (['amend', 'quarantine'] as const).map((policy) => ({ ...step, kind, policy })),
    ),
  );
  it.each(cases)(
    'leaves no hour wrongly final and later runs complete it when $name has $kind (latePolicy $policy)',
    async ({ site, kind, when, policy }) => {
      const p = await createPipeline({ env: { LATE_POLICY: policy } });
      await apply(p, batch('09:10'), batch('10:20'), batch('13:40'));
      // Each run a grace later than the last: under quarantine an hour closed by one run is
      // final on the next.
      let clock = Date.now();
      p.setClock(() => clock);
      const run = () => {
        clock += QUARANTINE_CLOSE_GRACE_MS + 1_000;
        return p.finalize();
      };
      p.faults.add({ site, kind, ...(when ? { when } : {}) });
      // Under quarantine the first run only closes: the later steps crash in the second.
      const outcomes: string[] = [];
      while (p.faults.fired.length === 0 && outcomes.length < 2)
        outcomes.push(
          await run().then(
            () => 'done',
            () => 'crashed',
          ),
        );
      expect(outcomes.at(-1)).toBe('crashed');
      expect(p.faults.fired).toHaveLength(1);
      // Whatever is final is an hour the watermark (11:30) has passed.
      for (const { body } of await p.hourObjects())
        if (body.final) expect([H09, H10]).toContain(body.hour);

      for (let i = 0; i < 3; i++) await run();
      for (const hour of [H09, H10])
        expect(await objectOf(p, hour)).toMatchObject({ final: true, amendments: 0, events: 1 });
      expect(await objectOf(p, `${DAY}T13:00:00Z`)).not.toHaveProperty('final');
      expect((await dayIndex(p))?.hours.map((h) => [h.hour, h.amendments])).toEqual([
        [H09, 0],
        [H10, 0],
      ]);
      expect((await run()).finalized).toEqual([]);
    },
  );
});

describe.concurrent('a crash in an amendment', () => {
  const steps = [
    {
      name: 'the hour object',
      when: (input: unknown) => !writesDayIndex(input),
    },
    { name: 'the day index', when: writesDayIndex },
  ];
  const cases = steps.flatMap((step) =>
    (['crash-before', 'crash-after'] as FaultKind[]).map((kind) => ({ ...step, kind })),
  );
  it.each(cases)(
    'counts the amendment once and lists it when $name has $kind',
    async ({ kind, when }) => {
      const p = await createPipeline();
      await apply(p, batch('09:10'), batch('12:40'));
      await p.finalize();
      p.faults.add({ site: 'PutObject:aggregates', kind, when });
      await apply(p, batch('09:55'));
      expect(p.faults.fired).toEqual([`${kind}@PutObject:aggregates`]);
      const amended = await objectOf(p, H09);
      expect(amended).toMatchObject({ final: true, amendments: 1, events: 2 });
      expect((await dayIndex(p))?.hours).toEqual([
        { hour: H09, revision: amended?.revision, events: 2, amendments: 1 },
      ]);
    },
  );
});

describe('the finalizer in the local runtime', () => {
  const emulators = useEmulators();

  it('runs the template’s scheduled rules, and the finalizer’s run finalizes the hours its watermark passed', async () => {
    const reported: unknown[] = [];
    const runtime = await startLocalRuntime({
      assemblyDir: inject('assembly').assemblyDir,
      emulators: emulators(),
      localStackName: uniqueName('final'),
      onScheduled: (_, outcome) => reported.push(outcome.result),
    });
    onTestFinished(() => runtime.stop());
    const rules = runtime.stack.schedules.map((s) => [
      runtime.stack.functions
        .find((f) => f.logicalId === s.functionLogicalId)
        ?.logicalId.split('Function')[0],
      s.expression.text,
    ]);
    expect(rules.sort()).toEqual([
      ['FinalizeHours', 'rate(5 minutes)'],
      ['WatchPending', 'rate(5 minutes)'],
    ]);
    const { refused } = await sendBodies(
      runtime.clients.sqs,
      runtime.stack.outputs.OrdersQueueUrl ?? '',
      [batch('09:10', '09:40'), batch('12:40')],
    );
    expect(refused).toEqual([]);
    await runtime.drain({ timeoutMs: DEADLINE_MS });
    const result = await runtime.runSchedule('FinalizeHours');
    const run = v.parse(FinalizerRunSchema, result);
    expect(run.finalized.map((f) => [f.hour, f.events])).toEqual([[H09, 2]]);
    // Returned to the caller, who reports it (`npm start`'s demo prints it), not told again as
    // a run of the rule's own (the rules' timers may still report theirs).
    expect(reported).not.toContain(result);
    const { outputs } = runtime.stack;
    const views = stateViews(runtime.clients, outputs.TableName ?? '', outputs.BucketName ?? '');
    const objects = await views.hourObjects();
    expect(objects.find((o) => o.body.hour === H09)?.body).toMatchObject({ final: true });
  });
});
