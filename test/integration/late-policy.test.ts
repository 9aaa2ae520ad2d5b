/**
 * latePolicy quarantine on the emulators: an hour closes before it is final, a batch decides once
 * which of its hours are too late, and what it refuses is quarantined whole, never half applied.
 */
import { describe, expect, it } from 'vitest';
import { DynamoFinalMarks } from '../../adapters/dynamo-hours.ts';
import { S3Store } from '../../adapters/s3.ts';
import { ingestPorts, ingestSettings } from '../../adapters/wiring.ts';
import { listHours } from '../../cli/commands/hours.ts';
import { replayRejects } from '../../cli/commands/replay-rejects.ts';
import { createIngestHandler } from '../../functions/ingest-orders.ts';
import { drainQueue } from '../../local/drain.ts';
import { LOCAL_REGION } from '../../local/emulators.ts';
import { lambdaContext } from '../../local/lambda-context.ts';
import { loadIngestConfig } from '../../shared/config.ts';
import { QUARANTINE_CLOSE_GRACE_MS } from '../../shared/finalizer.ts';
import { apply, batch, DAY, H09, objectOf } from '../support/hours.ts';
import { parseBatch } from '../support/json.ts';
import { cliTarget, createPipeline, type Pipeline } from '../support/pipeline.ts';

const H12 = `${DAY}T12:00:00Z`;

/** A pipeline under latePolicy quarantine, on a clock the test moves. */
const quarantining = async () => {
  const p = await createPipeline({ env: { LATE_POLICY: 'quarantine' } });
  let clock = Date.now();
  p.setClock(() => clock);
  /** One finalizer run, a grace after the previous one. */
  const finalizeLater = (replaced?: Parameters<Pipeline['finalize']>[0]) => {
    clock += QUARANTINE_CLOSE_GRACE_MS + 1_000;
    return p.finalize(replaced);
  };
  return { p, finalizeLater };
};

const batchIdOf = (body: string) => parseBatch(body).batchId;

/** The pipeline's orders queue drained by its ingest function redeployed with latePolicy amend. */
const drainWithAmend = async (p: Pipeline) => {
  const config = loadIngestConfig({ ...p.env, LATE_POLICY: 'amend' });
  const handler = createIngestHandler({
    ports: ingestPorts(config, p.clients),
    settings: ingestSettings(config),
  });
  await drainQueue({
    sqs: p.admin.sqs,
    queueUrl: p.outputs.OrdersQueueUrl ?? '',
    queueArn: p.outputs.OrdersQueueArn ?? '',
    region: LOCAL_REGION,
    invoke: (_, event) => handler(event, lambdaContext('ingest-orders', 30_000)),
  });
  await p.drainAggregates();
};

describe('latePolicy quarantine', () => {
  it('closes an hour on one run and makes it final on the next, a grace later', async () => {
    const { p, finalizeLater } = await quarantining();
    await apply(p, batch('09:10'), batch('12:40'));
    const first = await finalizeLater();
    expect(first).toMatchObject({ finalized: [], closed: [H09], heldBy: 'closing' });
    expect(await objectOf(p, H09)).not.toHaveProperty('final');
    // `onceflow hours` shows it closing to operators (its object still says open).
    const hours = () =>
      listHours(
        new S3Store(p.admin.s3, p.bucketName),
        new DynamoFinalMarks(p.admin.dynamo, p.tableName),
      );
    expect((await hours()).map((h) => [h.hour, h.state])).toEqual([
      [H09, 'closing'],
      [H12, 'open'],
    ]);
    // `--from` and `--to`: the first hour in, the end hour out.
    const between = async (from: string, to: string) =>
      (
        await listHours(
          new S3Store(p.admin.s3, p.bucketName),
          new DynamoFinalMarks(p.admin.dynamo, p.tableName),
          { fromMs: Date.parse(from), toMs: Date.parse(to) },
        )
      ).map((h) => h.hour);
    expect(await between(H09, H12)).toEqual([H09]);
    expect(await between(H12, `${DAY}T13:00:00Z`)).toEqual([H12]);
    // Run again at once: still inside the grace.
    expect(await p.finalize()).toMatchObject({ finalized: [], heldBy: 'closing' });
    const second = await finalizeLater();
    expect(second.finalized.map((f) => [f.hour, f.events])).toEqual([[H09, 1]]);
    expect(await objectOf(p, H09)).toMatchObject({ final: true, amendments: 0, events: 1 });
    // The final hour from its object (its revision and events), not from its day's index alone.
    const listed = await hours();
    expect(listed.map((h) => [h.state, h.events])).toEqual([
      ['final', 1],
      ['open', 1],
    ]);
    expect(listed[0]?.revision).toBe((await objectOf(p, H09))?.revision);
  });

  it('refuses a batch’s events of a closed hour as too-late, applies its other hours, and does so once', async () => {
    const { p, finalizeLater } = await quarantining();
    await apply(p, batch('09:10'), batch('12:40'));
    await finalizeLater();
    await finalizeLater();
    const ordersBefore = await p.orders();
    const late = batch('09:55', '09:56', '12:50');
    // Delivered three times: the decision and the reject are the same each time.
    await apply(p, late, late);
    await apply(p, late);

    expect(await objectOf(p, H09)).toMatchObject({ final: true, amendments: 0, events: 1 });
    expect(await objectOf(p, H12)).toMatchObject({ events: 2 });
    const orderIds = (await p.orders()).map((o) => o.orderId);
    // Only the 12:50 event's order is new: nothing of 09:55 and 09:56 was applied.
    expect(orderIds.filter((id) => !ordersBefore.some((o) => o.orderId === id))).toEqual([
      `o-${batchIdOf(late)}-2`,
    ]);
    const rejects = await p.rejects();
    expect(rejects).toHaveLength(1);
    const [reject] = rejects;
    expect(reject).toMatchObject({ reason: 'too-late', batchId: batchIdOf(late) });
    expect(reject?.detail).toContain(H09);
    const refused = parseBatch(reject?.body ?? '');
    expect(refused.events.map((e) => e.eventTime)).toEqual([
      `${DAY}T09:55:00Z`,
      `${DAY}T09:56:00Z`,
    ]);
  });

  it('applies too-late parts once with replay rejects after latePolicy amend is deployed, however often it runs', async () => {
    const { p, finalizeLater } = await quarantining();
    await apply(p, batch('09:10'), batch('12:40'));
    await finalizeLater();
    await finalizeLater();
    const late = batch('09:55', '09:56', '12:50');
    await apply(p, late);
    expect(await objectOf(p, H09)).toMatchObject({ final: true, amendments: 0, events: 1 });
    const [reject] = await p.rejects();

    const target = cliTarget(p);
    const planned = await replayRejects(target, 'too-late', { dryRun: true });
    expect(planned).toMatchObject({ sent: 0, parts: [{ key: reject?.key }] });
    const newId = planned.parts[0]?.batchId ?? '';
    expect(newId).not.toBe(batchIdOf(late));
    // --since selects by when each part was quarantined: from that instant on, it; after, none.
    const sentAtMs = Date.parse(reject?.sentAt ?? '');
    const since = (sinceMs: number) => replayRejects(target, 'too-late', { dryRun: true, sinceMs });
    expect(await since(sentAtMs)).toEqual(planned);
    expect(await since(sentAtMs + 1)).toEqual({ ...planned, parts: [] });
    // Refused while the stack says it quarantines them (its LatePolicy output): they would be
    // quarantined again. Planning is still allowed.
    const underQuarantine = { ...target, outputs: { ...target.outputs, LatePolicy: 'quarantine' } };
    await expect(replayRejects(underQuarantine, 'too-late')).rejects.toThrow(
      /still quarantines too-late parts .* Deploy latePolicy amend first/,
    );
    expect(await replayRejects(underQuarantine, 'too-late', { dryRun: true })).toEqual(planned);
    // Run twice, as an operator might: the same new batch id each time. The second time against
    // a stack deployed before the output existed: sent, with a warning.
    expect(target.outputs.LatePolicy).toBe('amend');
    expect(await replayRejects(target, 'too-late')).toEqual({ ...planned, sent: 1 });
    const { LatePolicy: _, ...earlierOutputs } = target.outputs;
    const warnings: string[] = [];
    const earlier = { ...target, outputs: earlierOutputs };
    expect(
      await replayRejects(earlier, 'too-late', { warn: (message) => warnings.push(message) }),
    ).toEqual({ ...planned, sent: 1 });
    expect(warnings).toEqual([expect.stringMatching(/has no LatePolicy output/)]);

    await drainWithAmend(p);
    // Both events once, as an amendment of the final hour; 12:00 untouched by the replay.
    expect(await objectOf(p, H09)).toMatchObject({ final: true, amendments: 1, events: 3 });
    expect(await objectOf(p, H12)).toMatchObject({ events: 2 });
    expect((await p.ledgerBatches()).applied).toContain(newId);
    expect((await p.rejects()).map((r) => r.reason)).toEqual(['too-late']);
  });

  it('refuses events of an hour that is closed but not final yet', async () => {
    const { p, finalizeLater } = await quarantining();
    await apply(p, batch('09:10'), batch('12:40'));
    await finalizeLater();
    await apply(p, batch('09:30'));
    expect((await p.rejects()).map((r) => r.reason)).toEqual(['too-late']);
    await finalizeLater();
    expect(await objectOf(p, H09)).toMatchObject({ final: true, amendments: 0, events: 1 });
  });

  it('lets a batch that found the hour open add to it, and holds the hour until it commits, when the pending index lagged', async () => {
    const { p, finalizeLater } = await quarantining();
    await apply(p, batch('09:10'), batch('12:40'));
    // A batch of 09:20 decides (H09 open) and crashes before its commit: pending.
    p.faults.add({ site: 'TransactWriteItems', kind: 'crash-before' });
    const inFlight = batch('09:20');
    expect((await p.ingest([{ body: inFlight }])).batchItemFailures).toHaveLength(1);
    // A run whose look at the pending index missed it closes 09:00 regardless.
    expect(await finalizeLater({ earliestPendingHour: async () => undefined })).toMatchObject({
      closed: [H09],
    });
    // A grace later the index shows the batch: 09:00 stays closed, not final.
    expect(await finalizeLater()).toMatchObject({ finalized: [], heldBy: 'pending-batch' });
    // Its redelivery follows its first decision: the event is applied, not refused.
    await apply(p, inFlight);
    expect(await p.rejects()).toEqual([]);
    const run = await finalizeLater();
    expect(run.finalized.map((f) => [f.hour, f.events])).toEqual([[H09, 2]]);
    expect(await objectOf(p, H09)).toMatchObject({ final: true, amendments: 0, events: 2 });
  });

  it('keeps the decision a delivery recorded before crashing: the redelivery refuses the same hours', async () => {
    const { p, finalizeLater } = await quarantining();
    await apply(p, batch('09:10'), batch('12:40'));
    await finalizeLater();
    const late = batch('09:40', '12:45');
    p.faults.add({
      site: 'UpdateItem',
      kind: 'crash-after',
      when: (input) => JSON.stringify(input).includes('lateHours'),
    });
    expect((await p.ingest([{ body: late }])).batchItemFailures).toHaveLength(1);
    expect(p.faults.fired).toHaveLength(1);
    await apply(p, late);
    expect((await p.rejects()).map((r) => r.reason)).toEqual(['too-late']);
    expect(await objectOf(p, H12)).toMatchObject({ events: 2 });
    await finalizeLater();
    expect(await objectOf(p, H09)).toMatchObject({ final: true, amendments: 0, events: 1 });
  });
});
