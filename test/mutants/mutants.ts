/**
 * Mutations of the code the guarantees rest on, each a bug a plausible change could bring in:
 * the suite must fail on every one that changes behaviour (`npm run test:mutants`). The few that
 * cannot change behaviour say why, and must survive: one that starts failing tests was not
 * equivalent after all, and its reason is wrong.
 */
export interface Mutant {
  /** The file, from the project's root. */
  readonly file: string;
  /** Text found exactly once in the file, and what replaces it. */
  readonly from: string;
  readonly to: string;
  /** What would break: the guarantee the tests must defend. */
  readonly breaks: string;
  /** Set when no input can tell the mutant apart: why. */
  readonly equivalent?: string;
  /** The test files that defend it; default the core's (unit, integration, property, chaos). */
  readonly files?: readonly string[];
}

/** The local poller's tests: partial batch responses, filters, FIFO groups, the DLQ. */
const POLLER_TESTS = ['test/local/poller.test.ts', 'test/unit/fifo-groups.test.ts'];
/** The chaos judge's own test: each way of breaking the end state, reported. */
const JUDGE_TESTS = ['test/chaos/judge.test.ts'];
/** EventBridge's schedule expressions: parsing, next runs, time zones, the rules run. */
const SCHEDULE_TESTS = [
  'test/unit/schedule-expression.test.ts',
  'test/unit/scheduler.test.ts',
  'test/unit/scheduled-rules.test.ts',
];
/** Lambda's event source mapping API on the local edge, and redeploys that change mappings. */
const MAPPING_API_TESTS = [
  'test/local/lambda-api.test.ts',
  'test/local/reserved-concurrency.test.ts',
  'test/local/hot-swap.test.ts',
  'test/unit/hot-swap.test.ts',
];
/** SQS's query protocol, translated at the edge, and the clients that speak it. */
const QUERY_PROTOCOL_TESTS = [
  'test/unit/sqs-query.test.ts',
  'test/local/clients.test.ts',
  'test/emulators/abandoned-receives.test.ts',
];
/** `onceflow check`'s rules and the repairs it plans. */
const CHECK_TESTS = ['test/unit/check.test.ts', 'test/unit/check-fixes.test.ts'];
/** The stack's contract, synthesized. */
const STACK_TESTS = ['test/infra/stack.test.ts'];
/** Settings and currencies, read at the edge. */
const CONFIG_TESTS = [
  'test/unit/config.test.ts',
  'test/unit/money-time.test.ts',
  'test/unit/schema.test.ts',
];
/** The bench's meters and prices. */
const BILLING_TESTS = ['test/bench/billing.test.ts', 'test/bench/capacity.test.ts'];
/** Lambda's quotas and SQS's characters on the local edge. */
const QUOTA_TESTS = [
  'test/unit/lambda-quotas.test.ts',
  'test/unit/throttling.test.ts',
  'test/emulators/sqs-unicode.test.ts',
  'test/local/lambda-environment.test.ts',
  'test/local/lambda-api.test.ts',
];
/** What the functions' wiring decides: the finalizer's holds, the ledger's retention. */
const WIRING_TESTS = [
  'test/integration/finished-hours.test.ts',
  'test/integration/late-policy.test.ts',
  'test/integration/ledger-status.test.ts',
  'test/integration/event-claims.test.ts',
  'test/integration/quarantine.test.ts',
];
/** The tests that inject each kind of fault. */
const FAULT_TESTS = [
  'test/integration/faults.test.ts',
  'test/integration/crashes.test.ts',
  'test/integration/send-bodies.test.ts',
  'test/integration/partial-reads.test.ts',
  'test/integration/concurrency.test.ts',
  'test/integration/finished-hours.test.ts',
  'test/integration/late-policy.test.ts',
  'test/property/delivery-schedules.test.ts',
];
/** Asynchronous invocations on the local edge. */
const ASYNC_TESTS = [
  'test/unit/scheduled-rules.test.ts',
  'test/unit/throttling.test.ts',
  'test/local/scheduled-rules.test.ts',
  'test/local/reserved-concurrency.test.ts',
  'test/local/lambda-api.test.ts',
];
/** The local provisioner's tests. */
const PROVISION_TESTS = [
  'test/local/provision.test.ts',
  'test/local/start.test.ts',
  'test/chaos/chaos.test.ts',
];
const MOVE_TASK_TESTS = ['test/emulators/move-tasks.test.ts'];
const FIFO_RECEIVE_TESTS = ['test/emulators/sqs-fifo-receive.test.ts'];

export const MUTANTS: readonly Mutant[] = [
  {
    file: 'shared/order-state.ts',
    from: 'compareUtf8(a.eventId, b.eventId) > 0',
    to: 'compareUtf8(a.eventId, b.eventId) >= 0',
    breaks: 'ties on event time: an event would be newer than itself',
  },
  {
    file: 'shared/order-state.ts',
    from: 'c + 0x10000 : c',
    to: 'c : c',
    breaks: 'ties broken in UTF-16 order, not the UTF-8 order of DynamoDB’s condition',
  },
  {
    file: 'adapters/dynamo-orders.ts',
    from: '(#t = :t AND #eid < :eid)',
    to: '(#t = :t AND #eid <= :eid)',
    breaks: 'newest wins in the table’s condition',
    equivalent:
      'an equal (time, id) is the event the state already holds: settling never offers it as newer, so the condition never compares it',
  },
  {
    file: 'adapters/dynamo-orders.ts',
    from: 'const CLAIM_GRACE_MS = 24 * 3600 * 1000;',
    to: 'const CLAIM_GRACE_MS = 0;',
    breaks: 'the day of grace for clocks before an expired claim is dropped',
  },
  {
    file: 'adapters/dynamo-orders.ts',
    from: 'expiresAt * 1000 + CLAIM_GRACE_MS < nowMs',
    to: 'expiresAt * 1000 + CLAIM_GRACE_MS > nowMs',
    breaks: 'claims dropped while their batch’s ledger entry lives: events counted twice',
  },
  {
    file: 'shared/claims.ts',
    from: 'else if (claim.batchId === batchId) ours.push(event);',
    to: 'else if (claim.batchId === batchId) duplicates.push(event);',
    breaks: 'a redelivered batch no longer counts the events it claimed before a crash',
  },
  {
    file: 'shared/ingest.ts',
    from: 'return counterDeltas(counted.filter(',
    to: 'return counterDeltas(plan.batch.events.filter(',
    breaks: 'a batch adds the counters of events another batch counts',
  },
  {
    file: 'adapters/dynamo.ts',
    from: "'digest = :digest AND NOT contains(doneParts, :n)'",
    to: "'digest = :digest'",
    breaks: 'a batch part committed twice',
  },
  {
    file: 'adapters/s3.ts',
    from: "...(etag === undefined ? { IfNoneMatch: '*' } : { IfMatch: etag }),",
    to: "...(etag === undefined ? { IfNoneMatch: '*' } : {}),",
    breaks: 'an older recompute overwriting a newer hour object',
  },
  {
    file: 'shared/aggregator.ts',
    from: 'sameAggregate(stored.aggregate, aggregate) &&',
    to: 'false &&',
    breaks: 'a recompute that changes nothing writes nothing',
  },
  {
    file: 'shared/coalesce.ts',
    from: 'Math.floor(nowMs / (windowSeconds * 1000))',
    to: 'Math.floor(nowMs / (windowSeconds * 2000))',
    breaks: 'a notification dropped after the kept one was delivered: an update missed',
  },
  {
    file: 'shared/money.ts',
    from: ".padStart(exponent, '0')",
    to: ".padEnd(exponent, '0')",
    breaks: 'exact amounts: 25.05 rendered as 25.50',
  },
  {
    file: 'shared/watermark.ts',
    from: 'Date.parse(hour) + MS_PER_HOUR <= watermark',
    to: 'Date.parse(hour) <= watermark',
    breaks: 'an hour finalized before the watermark passes its end',
  },
  {
    file: 'adapters/dynamo-hours.ts',
    from: "'attribute_not_exists(#t) OR #t < :t'",
    to: "'attribute_not_exists(#t) OR #t <> :t'",
    breaks: 'the watermark moving backwards',
  },
  {
    file: 'shared/lifecycle.ts',
    from: '(previous?.final ? (previous.amendments ?? 0) : 0) + (amended ? 1 : 0)',
    to: '(amended ? 1 : 0)',
    breaks: 'a final hour’s amendments count going back',
  },
  {
    file: 'shared/lifecycle.ts',
    from: '(previous?.final ? previous.finalizedAt : undefined) ??',
    to: 'undefined ??',
    breaks: 'a final hour turning open again after a restore',
  },
  {
    file: 'shared/finalizer.ts',
    from: 'pending.hour !== undefined && hour >= pending.hour',
    to: 'pending.hour !== undefined && hour > pending.hour',
    breaks: 'an hour finalized while a batch in progress may still touch it',
  },
  {
    file: 'shared/finalizer.ts',
    from: 'if (!mark || (grace > 0 && mark.closedAtMs + grace > pending.atMs)) {',
    to: 'if (!mark) {',
    breaks: 'under quarantine, an hour final before the pending index shows every batch',
  },
  {
    file: 'shared/late-policy.ts',
    from: 'const decided = claim.claimed ? undefined : claim.entry.lateHours;',
    to: 'const decided = undefined;',
    breaks: 'every delivery of a batch following its first late decision',
    equivalent:
      'the ledger keeps the first decision (a conditional write) and returns it to every later one: the shortcut saves a read and a write, it decides nothing',
  },
  {
    file: 'shared/digest.ts',
    from: 'batch.source ?? null',
    to: 'null',
    breaks: 'a batch id reused with another source taken for the same batch, not a batch-conflict',
  },
  {
    file: 'shared/digest.ts',
    from: '.sort((a, b) => (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0))',
    to: '',
    breaks: 'the same batch re-serialised with its events in another order taken for a conflict',
  },
  {
    file: 'shared/digest.ts',
    from: 'e.eventId,\n        e.customerId,',
    to: 'e.eventId,',
    breaks: 'an event re-sent with another customer taken for a copy, not an event-conflict',
  },
  {
    file: 'shared/claims.ts',
    from: 'else if (claim.digest !== digest) conflicts.push({ event, claim });',
    to: '',
    breaks: 'an event re-sent with other content counted as a duplicate, its conflict unreported',
  },
  {
    file: 'adapters/dynamo.ts',
    from: "ConditionExpression: 'attribute_not_exists(pk)',",
    to: '',
    breaks: 'every delivery of a batch claiming it anew: a redelivered batch applied again',
  },
  {
    file: 'adapters/dynamo-orders.ts',
    from: 'if (name.startsWith(CLAIM_PREFIX)) conditions.push(',
    to: 'if (false) conditions.push(',
    breaks: 'two batches racing with one event both claiming it: the event counted twice',
  },
  {
    file: 'shared/retention.ts',
    from: 'span.earliestMs < nowMs - retentionMs',
    to: 'span.latestMs < nowMs - retentionMs',
    breaks: 'a batch holding events older than the ledger retention applied: counted twice',
  },
  {
    file: 'shared/retention.ts',
    from: 'Math.max(nowMs, span.latestMs) + retentionMs',
    to: 'nowMs + retentionMs',
    breaks:
      'the ledger entry of a batch of future events expiring while a redelivery is still accepted',
  },
  {
    file: 'shared/schema.ts',
    from: 'v.maxLength(MAX_EVENTS_PER_BATCH,',
    to: 'v.maxLength(MAX_EVENTS_PER_BATCH + 1,',
    breaks: 'a batch over the contract’s 500 events admitted',
  },
  {
    file: 'shared/time.ts',
    from: "const fraction = leap ? '999999999'",
    to: "const fraction = leap ? '000000000'",
    breaks: 'a leap second ordered before the last instant of its minute',
  },
  {
    file: 'adapters/s3.ts',
    from: 'if (isPreconditionFailed(error)) return;',
    to: 'if (isPreconditionFailed(error) || isConditionalConflict(error)) return;',
    breaks: 'a 409 on the archive taken as already there: a batch committed without its archive',
  },
  {
    file: 'shared/ingest.ts',
    from: 'const isCommitted = (entry: LedgerEntry) => entry.doneParts.size >= entry.parts;',
    to: 'const isCommitted = (entry: LedgerEntry) => entry.doneParts.size > 0;',
    breaks: 'a batch in parts, crashed after its first commit, never applying the others',
  },
  {
    file: 'shared/schema.ts',
    from: 'if (first !== undefined) {',
    to: 'if (false) {',
    breaks: 'a batch holding two events of one id admitted',
  },
  {
    file: 'shared/schema.ts',
    from: '(e) => fractionDigits(e.amount) <= (currencyExponent(e.currency) ?? 0),',
    to: '(e) => fractionDigits(e.amount) <= (currencyExponent(e.currency) ?? 0) + 1,',
    breaks: 'an amount finer than its currency’s minor unit admitted',
  },
  {
    file: 'shared/ingest.ts',
    from: 'if (!(error instanceof InvalidMessageError)) throw error;',
    to: 'if (!(error instanceof Error)) throw error;',
    breaks: 'a transient failure quarantined instead of retried: a valid batch never applied',
  },
  {
    file: 'shared/aggregator.ts',
    from: 'const stored = await ports.objects.get(hour);\n  const { shards, mark } = await ports.counters.readHour(hour);',
    to: 'const [stored, { shards, mark }] = await Promise.all([\n    ports.objects.get(hour),\n    ports.counters.readHour(hour),\n  ]);',
    breaks:
      'the counters read before the object’s ETag: an older recompute overwriting a newer hour object',
  },
  {
    file: 'shared/ingest.ts',
    // The commit loop moved below its notification: the text spans both.
    from: '  let completedHere = false;\n  let commitConflictRetries = 0;\n  for (const [part] of plan.parts.entries()) {\n    if (done.has(part)) continue;\n    const last = part === plan.parts.length - 1;\n    const { committed, conflictRetries } = await ports.ledger.commitPart(\n      plan,\n      part,\n      claimedDeltas(plan, part, counted),\n      last ? { events: counted.length } : undefined,\n    );\n    commitConflictRetries += conflictRetries;\n    completedHere = committed && last;\n  }\n  // After the commit: the watermark never passes an hour ahead of the events that made it move.\n  await ports.clock.advance(plan.latestMs, firstReceived ?? receivedAtMs);\n  await ports.notifier.notifyHours(plan.hours.filter((hour) => !late.has(hour)));\n',
    to: '  await ports.notifier.notifyHours(plan.hours.filter((hour) => !late.has(hour)));\n  let completedHere = false;\n  let commitConflictRetries = 0;\n  for (const [part] of plan.parts.entries()) {\n    if (done.has(part)) continue;\n    const last = part === plan.parts.length - 1;\n    const { committed, conflictRetries } = await ports.ledger.commitPart(\n      plan,\n      part,\n      claimedDeltas(plan, part, counted),\n      last ? { events: counted.length } : undefined,\n    );\n    commitConflictRetries += conflictRetries;\n    completedHere = committed && last;\n  }\n  // After the commit: the watermark never passes an hour ahead of the events that made it move.\n  await ports.clock.advance(plan.latestMs, firstReceived ?? receivedAtMs);\n',
    breaks: 'an hour notified before its batch commits: published without it, and never again',
  },
  {
    file: 'shared/ingest.ts',
    from: '  await ports.notifier.notifyHours(plan.hours.filter((hour) => !late.has(hour)));\n  if (!completedHere)',
    to: '  if (!completedHere)',
    breaks: 'a batch’s hours never notified: their objects never published',
  },
  {
    file: 'shared/ingest.ts',
    from: '      await ports.notifier.notifyHours(plan.hours);\n',
    to: '',
    breaks: 'a crash between a commit and its notification: the hours never published',
  },
  {
    file: 'adapters/sqs.ts',
    from: '      pending = retry;',
    to: '      pending = [];',
    breaks:
      'entries SQS failed on its side dropped: bodies and hour notifications reported sent, never sent',
  },
  {
    file: 'adapters/sqs.ts',
    from: 'if (failure.SenderFault) {\n          refused.push(',
    to: 'if (failure.SenderFault) {\n          [].push(',
    breaks: 'a body SQS refuses dropped without a word: `send` reports every line sent',
  },
  {
    file: 'functions/aggregate-hours.ts',
    // The map of publications in flight moved from the invocation to the handler: the text spans both.
    from: "  const resolve = once(dependencies);\n  const { logger, metrics } = observability();\n  return instrumented<SQSEvent, SQSBatchResponse>(tracing, logger, metrics).handler(\n    (event, context) => {\n      const { ports, quarantine, index } = resolve();\n      metrics.addMetric('RecordsReceived', MetricUnit.Count, event.Records.length);\n      const inFlight = new Map<string, Promise<PublishOutcome>>();\n",
    to: "  const resolve = once(dependencies);\n  const inFlight = new Map<string, Promise<PublishOutcome>>();\n  const { logger, metrics } = observability();\n  return instrumented<SQSEvent, SQSBatchResponse>(tracing, logger, metrics).handler(\n    (event, context) => {\n      const { ports, quarantine, index } = resolve();\n      metrics.addMetric('RecordsReceived', MetricUnit.Count, event.Records.length);\n",
    breaks:
      'an hour notified again in a later invocation taken as published: its object left behind',
  },
  {
    file: 'adapters/recovery.ts',
    from: '  if (selection.pending) keys.push(...(await ledger.pendingArchiveKeys()));\n',
    to: '',
    breaks:
      'after a restore, a batch claimed before the copy and completed after it never re-applied',
  },
  {
    file: 'shared/day-index.ts',
    from: '    const stored = await ports.objects.getDayIndex(date);\n    const marks = await ports.marks.marksOf(hours);',
    to: '    const [stored, marks] = await Promise.all([\n      ports.objects.getDayIndex(date),\n      ports.marks.marksOf(hours),\n    ]);',
    breaks:
      'the marks read before the day index’s ETag: an older list written over a newer one, a final hour unlisted',
  },
  {
    file: 'shared/ingest.ts',
    from: 'ports.orders.settle(onTime, claimant, settings.writeConcurrency, archived),',
    to: 'ports.orders.settle(onTime, claimant, settings.writeConcurrency),',
    breaks:
      'events claimed before their batch is archived: a conflict reported meanwhile without the first content',
  },
  // What an operator is told about a batch and its conflicts.
  {
    file: 'shared/conflicts.ts',
    from: 'e.orderId === orderId && e.eventId === eventId',
    to: 'e.eventId === eventId',
    breaks:
      'an event conflict reported with another order’s event as the first content (event ids are unique per order only)',
    equivalent:
      'the first content is looked up in the batch that claimed the event, and a batch holding one event id twice, in any orders, is refused whole (duplicate-event-id)',
  },
  {
    file: 'shared/batch-report.ts',
    from: 'entry.doneParts.size >= entry.parts',
    to: 'entry.doneParts.size >= 1',
    breaks:
      'a batch in parts reported applied (by batch, status, the DLQ’s listing) once its first part commits',
  },
  {
    file: 'shared/batch-report.ts',
    from: "if (claim.digest !== eventDigest(event)) return { ...base, fate: 'conflict', ...other };",
    to: '',
    breaks: 'an event whose other content was refused reported as counted or a duplicate',
  },
  // The pending watcher: what the stuck-batch alarm and its log line say.
  {
    file: 'shared/pending.ts',
    from: 'a.receivedAtMs - b.receivedAtMs ||',
    to: 'b.receivedAtMs - a.receivedAtMs ||',
    breaks:
      'the newest batch in progress taken for the oldest: the stuck-batch alarm measures the wrong age',
  },
  {
    file: 'shared/pending.ts',
    from: 'Math.max(0, Math.floor((nowMs - first.receivedAtMs) / 1000))',
    to: 'Math.floor((nowMs - first.receivedAtMs) / 1000)',
    breaks: 'a negative age published when the watcher’s clock is behind the ingest’s',
  },
  {
    file: 'shared/pending.ts',
    from: '(a.batchId < b.batchId ? -1 : a.batchId > b.batchId ? 1 : 0)',
    to: '0',
    breaks:
      'batches received in the same millisecond named in whatever order the index returns them',
  },
  // Every read the guarantees rest on asks for consistency: the edge's lagging replica
  // (local/eventual-reads.ts) answers one that does not with the state of an earlier read.
  {
    file: 'adapters/dynamo-counters.ts',
    from: 'ConsistentRead: true,',
    to: '',
    breaks:
      'an hour recomputed from counters a replica has not updated yet: published without its latest batch, never notified again',
  },
  {
    file: 'adapters/dynamo-items.ts',
    from: 'Key: keyOf(key), ConsistentRead: true }',
    to: 'Key: keyOf(key) }',
    breaks:
      'the finalizer’s watermark, cursor and marks read from a lagging replica: hours finalized late, or listed stale in their day’s index',
  },
  {
    file: 'adapters/dynamo-items.ts',
    from: 'Keys: pending, ConsistentRead: true,',
    to: 'Keys: pending,',
    breaks:
      'final marks (and orders) read from a lagging replica: a final hour left out of its day’s index',
  },
  {
    file: 'adapters/dynamo-items.ts',
    from: 'TableName: table,\n        ConsistentRead: true,\n        FilterExpression',
    to: 'TableName: table,\n        FilterExpression',
    breaks:
      'the ledger listed from a lagging replica: a batch redelivered and applied still reported pending',
  },
  {
    file: 'local/eventual-reads.ts',
    from: 'return request.IndexName !== undefined || request.ConsistentRead !== true;',
    to: 'return request.ConsistentRead !== true;',
    breaks:
      'reads of a global secondary index answered fresh when they ask for consistency, which DynamoDB cannot give',
    files: ['test/emulators/eventual-reads.test.ts'],
  },
  // The local runtime behaves as Lambda's SQS event source mapping: its tests defend it.
  {
    file: 'local/sqs-event.ts',
    from: "typeof id !== 'string' || id === '' || !batchIds.includes(id)",
    to: "typeof id !== 'string' || id === ''",
    breaks:
      'an itemIdentifier not in the batch honoured: the rest of the batch deleted, where Lambda retries it all',
    files: POLLER_TESTS,
  },
  {
    file: 'local/sqs-poller.ts',
    from: 'if (!this.#settings.reportBatchItemFailures) return { failed: [] };',
    to: '',
    breaks: 'a partial batch response read from a function whose trigger does not report them',
    files: POLLER_TESTS,
  },
  {
    file: 'local/sqs-poller.ts',
    from: 'return { failed: ids, error: (e as Error).message };',
    to: 'return { failed: [], error: (e as Error).message };',
    breaks: 'a batch whose invocation threw deleted: its messages lost',
    files: POLLER_TESTS,
  },
  {
    file: 'local/sqs-poller.ts',
    from: 'if (group !== undefined && outcome.failed.includes(r.messageId)) failedGroups.add(group);',
    to: '',
    breaks: 'a FIFO group running ahead of its failed message',
    files: POLLER_TESTS,
  },
  {
    file: 'local/sqs-poller.ts',
    from: 'await this.#delete(received.filter((m) => !messages.includes(m)));',
    to: '',
    breaks: 'messages no filter matches left in the queue, where Lambda deletes them',
    files: POLLER_TESTS,
  },
  // The operator's tools: what a runbook step does after an incident, against its tests.
  {
    file: 'adapters/sqs.ts',
    from: 'await setVisibility(sqs, queueUrl, handles, 0);',
    to: '',
    breaks:
      'a DLQ looked at with replay dlq --dry-run left hidden for a minute: the replay that follows moves nothing until then',
    files: ['test/integration/dlq-peek.test.ts'],
  },
  {
    file: 'adapters/recovery.ts',
    from: '[formatHour(first), ...hoursBetween(first + 1, toMs)]',
    to: 'hoursBetween(first + 1, toMs)',
    breaks:
      'a restore’s replay by arrival missing the batches received in the restore point’s own hour',
    files: ['test/integration/restore.test.ts', 'test/integration/replay-archive.test.ts'],
  },
  {
    file: 'adapters/s3-quarantine.ts',
    from: '`, source])',
    to: '`])',
    breaks:
      'rejects written before the reason was in their key never listed by reason: replay rejects leaves them behind',
    files: ['test/integration/reject-listing.test.ts'],
  },
  {
    file: 'cli/commands/reconcile.ts',
    from: 'if (!stored && aggregate.events === 0) return undefined;',
    to: 'if (aggregate.events === 0) return undefined;',
    breaks: 'reconcile leaving the object of an hour without events (after a restore) in place',
    files: ['test/integration/parallel-hours.test.ts', 'test/cli/recovery.test.ts'],
  },
  {
    file: 'cli/commands/reconcile.ts',
    from: 'ms >= interval.fromMs && ms < interval.toMs',
    to: 'ms >= interval.fromMs && ms <= interval.toMs',
    breaks: 'verify --from --to judging the hour after the interval, which it was not asked about',
    files: ['test/integration/parallel-hours.test.ts', 'test/cli/recovery.test.ts'],
  },
  {
    file: 'cli/commands/replay.ts',
    from: 'hours = spanOfBoth(hours, eventHoursOf(bodies));',
    to: 'hours = eventHoursOf(bodies);',
    breaks:
      'the reconcile a replay prints covering only its last chunk’s hours: the others left unreconciled',
    files: ['test/integration/replay-archive.test.ts'],
  },
  // The local runtime beyond the poller: triggers' filters, code swaps, reserved concurrency.
  {
    file: 'local/event-filter.ts',
    from: "if (op === 'exists') return (value !== undefined) === arg;",
    to: "if (op === 'exists') return value !== undefined;",
    breaks:
      'a trigger filter of `exists: false` passing the bodies that have the field, where Lambda drops them',
    files: ['test/unit/event-filter.test.ts'],
  },
  {
    file: 'local/environment-pool.ts',
    from: 'if (env.fn !== this.#current(logicalId)) this.#retire(env);',
    to: 'if (false) this.#retire(env);',
    breaks:
      'an environment that was busy during a code swap reused: invocations after the swap run the old code',
    files: ['test/local/hot-swap.test.ts', 'test/unit/hot-swap.test.ts'],
  },
  {
    file: 'local/environment-pool.ts',
    from: 'reserved !== undefined && busy >= reserved',
    to: 'reserved !== undefined && busy > reserved',
    breaks: 'one invocation more at once than the function’s reserved concurrency',
    files: ['test/local/reserved-concurrency.test.ts'],
  },
  {
    file: 'functions/sqs-record.ts',
    from: 'skipGroupOnError: true,',
    to: 'skipGroupOnError: false,',
    breaks:
      'an hour’s later notifications processed after its earlier one failed: a FIFO group run out of order',
    equivalent:
      'each processor is given one message group: without the option it fails every record after the first failure, which are all of that group, as with it',
    files: ['test/integration/parallel-hours.test.ts', 'test/unit/fifo-groups.test.ts'],
  },
  // Beyond the core's paths: the tools the core runs on, the finalizer's marks, the entry points.
  {
    file: 'shared/concurrency.ts',
    from: 'while (next < items.length && !failure)',
    to: 'while (next < items.length)',
    breaks: 'a batch’s order writes still started after one of them failed',
  },
  {
    file: 'shared/concurrency.ts',
    from: 'const tail = result.catch(() => undefined);',
    to: 'const tail = result;',
    breaks: 'an order’s failed write blocking every later write to that order in the environment',
  },
  {
    file: 'shared/concurrency.ts',
    from: 'const previous = this.#tails.get(key) ?? Promise.resolve();',
    to: 'const previous = Promise.resolve();',
    breaks:
      'records of one invocation settling the same order at once, failing each other’s conditions',
  },
  {
    file: 'shared/aggregate.ts',
    from: 'revision += shard.updates;',
    to: 'revision = shard.updates;',
    breaks:
      'an hour’s revision taken from its last currency’s shard: it may fall as the hour grows',
  },
  {
    file: 'shared/aggregate.ts',
    from: 'JSON.stringify([a.hour, a.events, a.byStatus, a.revision])',
    to: 'JSON.stringify([a.hour, a.events, a.byStatus])',
    breaks: 'a recompute with a newer revision but the same totals never published',
  },
  {
    file: 'adapters/dynamo-hours.ts',
    from: "ConditionExpression: 'attribute_not_exists(pk)',\n          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',",
    to: "ReturnValuesOnConditionCheckFailure: 'ALL_OLD',",
    breaks:
      'a finalizer that read no mark closing an hour another already finalized: its closing time and final mark erased',
  },
  {
    file: 'adapters/dynamo-hours.ts',
    from: "'attribute_exists(pk) AND attribute_not_exists(finalizedAt)'",
    to: "'attribute_exists(pk)'",
    breaks: 'overlapping finalizers each recording their own time the hour became final',
  },
  {
    file: 'adapters/dynamo-hours.ts',
    from: "'attribute_exists(pk) AND attribute_not_exists(finalRevision)'",
    to: "'attribute_exists(pk)'",
    breaks: 'the revision consumers read as final rewritten by a later finalizer',
  },
  {
    file: 'adapters/dynamo-hours.ts',
    from: "'attribute_not_exists(nextHour) OR nextHour < :h'",
    to: "'attribute_not_exists(nextHour) OR nextHour <> :h'",
    breaks: 'the finalizer’s cursor moved back by a slower run',
  },
  {
    file: 'functions/ingest-orders.ts',
    from: '      resolve(); // a configuration error',
    to: '      // a configuration error',
    breaks:
      'a configuration error reported as every record failing ("all records failed"), naming no variable',
  },
  {
    file: 'functions/sqs-record.ts',
    from: 'if (event.Records.length > 0 && batchItemFailures.length === event.Records.length)',
    to: 'if (false)',
    breaks: 'a FIFO batch that failed whole reported as a successful invocation',
  },
  {
    file: 'shared/order-history.ts',
    from: 'claim?.batchId === batch.batchId && claim.digest === eventDigest(event)',
    to: 'claim?.batchId === batch.batchId',
    breaks: 'an order’s history showing content its claim does not hold',
  },
  {
    file: 'shared/order-history.ts',
    from: 'a.instant === b.instant ? compareUtf8(a.eventId, b.eventId) :',
    to: 'a.instant === b.instant ? 0 :',
    breaks: 'an order’s history not ending on its state’s event when times tie',
  },
  {
    file: 'local/s3-preconditions.ts',
    from: '    await previous;\n',
    to: '',
    breaks:
      'two conditional writes to one key checked at once on the local stack: both win, where S3 lets one',
    files: ['test/emulators/s3-preconditions.test.ts'],
  },
  {
    file: 'local/s3-preconditions.ts',
    from: 'if (normaliseEtag(ifMatch) !== normaliseEtag(current)) {',
    to: 'if (false) {',
    breaks: 'an If-Match on a stale ETag accepted by the local stack, as S3 never does',
    files: ['test/emulators/s3-preconditions.test.ts'],
  },
  {
    file: 'adapters/dynamo-items.ts',
    from: 'pending = page.UnprocessedKeys?.[table]?.Keys ?? [];',
    to: 'pending = [];',
    breaks:
      'the keys DynamoDB left unprocessed in a batch read never asked for again: orders, totals and claims silently missing',
  },
  // Pages: every answer that may end a page short of the data is followed to the end.
  {
    file: 'adapters/dynamo-counters.ts',
    from: '} while (startKey);',
    to: '} while (false);',
    breaks: 'an hour recomputed from its first page of counters: currencies past it left out',
  },
  {
    file: 'adapters/dynamo-items.ts',
    from: '} while (startKey);',
    to: '} while (false);',
    breaks: 'a scan of the ledger or the hours stopping at its first page',
  },
  {
    file: 'adapters/dynamo-order-reader.ts',
    from: '} while (startKey);',
    to: '} while (false);',
    breaks: 'every order listed, but only the first page of them',
  },
  {
    file: 'adapters/s3.ts',
    from: '} while (token);',
    to: '} while (false);',
    breaks:
      'a listing of hour objects, rejects or archived batches stopping at its first 1,000 keys: verify, reconcile and replays miss the rest',
  },
  // The chaos judge: a judge that finds nothing makes every schedule's zeros meaningless.
  {
    file: 'harness/chaos/judge.ts',
    from: 'if (gap < 0) lost -= gap;',
    to: 'if (gap < 0) lost += 0;',
    breaks: 'chaos blind to events lost: the model’s events missing from the hour objects',
    files: JUDGE_TESTS,
  },
  {
    file: 'harness/chaos/judge.ts',
    from: 'else doubleCounted += gap;',
    to: 'else doubleCounted += 0;',
    breaks: 'chaos blind to events counted twice',
    files: JUDGE_TESTS,
  },
  {
    file: 'harness/chaos/judge.ts',
    from: 'orders.filter((x) => want.get(x.orderId) !== JSON.stringify(x)).length +',
    to: '0 +',
    breaks: 'chaos blind to an order overwritten by an older event',
    files: JUDGE_TESTS,
  },
  {
    file: 'harness/chaos/judge.ts',
    from: "action !== 'unchanged') staleOverwrites++;",
    to: "action !== 'unchanged') staleOverwrites += 0;",
    breaks: 'chaos blind to an hour object left behind its counters at the end',
    files: JUDGE_TESTS,
  },
  {
    file: 'harness/chaos/judge.ts',
    from: 'if (rejects.bodies !== expectedRejects)',
    to: 'if (rejects.bodies > expectedRejects)',
    breaks: 'chaos blind to an invalid body lost instead of quarantined',
    files: JUDGE_TESTS,
  },
  {
    file: 'harness/chaos/judge.ts',
    from: 'if (rejects.conflicts !== model.conflicts)',
    to: 'if (rejects.conflicts > model.conflicts)',
    breaks: 'chaos blind to an event conflict never reported',
    files: JUDGE_TESTS,
  },
  {
    file: 'harness/chaos/judge.ts',
    from: 'refused.filter((part) => !rejects.tooLate.has(part))',
    to: 'refused.filter(() => false)',
    breaks: 'chaos blind to a refused too-late part missing from rejects/',
    files: JUDGE_TESTS,
  },
  {
    file: 'harness/chaos/judge.ts',
    from: 'finalHours.filter((h) => !decisions.get(batch.batchId)?.has(h))',
    to: 'finalHours.filter((h) => decisions.get(batch.batchId)?.has(h) === false)',
    breaks: 'chaos blind to a late batch applied whole to final hours under quarantine',
    files: JUDGE_TESTS,
  },
  {
    file: 'harness/chaos/judge.ts',
    from: 'if (amended.length > 0) diffs.push',
    to: 'if (amended.length > 1) diffs.push',
    breaks: 'chaos blind to a final hour amended under the quarantine policy',
    files: JUDGE_TESTS,
  },
  {
    file: 'harness/chaos/judge.ts',
    from: 'if (revision !== entry.revision)',
    to: 'if (object === undefined)',
    breaks: 'chaos blind to a day index listing an hour at another revision than its object',
    files: JUDGE_TESTS,
  },
  {
    file: 'harness/chaos/judge.ts',
    from: '!listed.some((e) => e.hour === o.aggregate.hour)',
    to: 'listed.length === 0',
    breaks: 'chaos blind to a final hour missing from its day index',
    files: JUDGE_TESTS,
  },
  {
    file: 'harness/chaos/play.ts',
    from: "action !== 'unchanged') behind.push(hour);",
    to: "action !== 'unchanged') void hour;",
    breaks: 'chaos blind to hour notifications lost: objects behind their counters once drained',
    files: JUDGE_TESTS,
  },
  // The local edge's message move tasks: what `onceflow replay dlq` redrives with.
  {
    file: 'local/sqs-move-tasks.ts',
    from: "done.map((m) => m.ReceiptHandle ?? ''),",
    to: "messages.map((m) => m.ReceiptHandle ?? ''),",
    breaks: 'a message the destination refused deleted from the DLQ anyway: lost by a redrive',
    files: MOVE_TASK_TESTS,
  },
  {
    file: 'local/sqs-move-tasks.ts',
    from: 'MessageDeduplicationId: m?.MessageId ?? String(i),',
    to: '',
    breaks:
      'a FIFO DLQ redriven with content-based deduplication: notifications of one hour dropped as duplicates of each other',
    files: MOVE_TASK_TESTS,
  },
  {
    file: 'local/sqs-move-tasks.ts',
    from: "MessageGroupId: groupId ?? 'redrive',",
    to: "MessageGroupId: 'redrive',",
    breaks: 'a FIFO DLQ redriven into one group: the order within each group lost',
    files: MOVE_TASK_TESTS,
  },
  {
    file: 'local/sqs-move-tasks.ts',
    from: '? { MessageAttributes: m.MessageAttributes }',
    to: '? {}',
    breaks: 'a redriven message without the attributes its producer gave it',
    files: MOVE_TASK_TESTS,
  },
  // FIFO receives on the local edge: whole runs of a group, never a group with one in flight.
  {
    file: 'local/sqs-fifo-receive.ts',
    from: 'if (lockedBefore.has(group)) continue;',
    to: '',
    breaks: 'a receive giving the next message of a group whose earlier one is still in flight',
    files: FIFO_RECEIVE_TESTS,
  },
  {
    file: 'local/sqs-fifo-receive.ts',
    from: 'this.fifoLockedGroups.set(group, (this.fifoLockedGroups.get(group) ?? 0) + count);',
    to: '',
    breaks:
      'a group left open after a receive took its messages: the next receive gives the rest out of order',
    files: FIFO_RECEIVE_TESTS,
  },
  {
    file: 'local/sqs-fifo-receive.ts',
    from: 'if (!ordered)',
    to: 'if (false)',
    breaks: 'messages of a group whose visibility ended coming back last first',
    files: FIFO_RECEIVE_TESTS,
  },
  {
    file: 'local/sqs-fifo-receive.ts',
    from: 'if (!(Number(visibility) > 0)) return',
    to: 'if (Number(visibility) < 0) return',
    breaks: 'a receive with no visibility timeout giving one message several times',
    files: FIFO_RECEIVE_TESTS,
  },
  // Keys the operator's replays read back.
  {
    file: 'shared/keys.ts',
    from: 'archiveKey.slice(RAW_PREFIX.length)',
    to: 'archiveKey',
    breaks:
      'arrival markers naming an archive key that does not exist: the restore runbook re-sends nothing received since the copy',
    files: ['test/integration/restore.test.ts', 'test/integration/replay-archive.test.ts'],
  },
  {
    file: 'shared/keys.ts',
    from: 'const BATCH_PART_ID = /^(.+)\\/',
    to: 'const BATCH_PART_ID = /^([^/]+)\\/',
    breaks: 'a reject of a batch whose id holds a slash listed under another batch id',
    files: ['test/unit/reject-objects.test.ts', 'test/integration/reject-listing.test.ts'],
  },
  // Draining and abandoned receives on the local edge.
  {
    file: 'local/drain.ts',
    from: 'streak = pending === 0 ? streak + 1 : 0;',
    to: 'streak = pending === 0 ? streak + 1 : streak;',
    breaks:
      '`onceflow drain` returning on an approximate depth that read empty once, while messages are still queued',
    files: ['test/local/drain.test.ts'],
  },
  {
    file: 'local/orphaned-receives.ts',
    from: 'VisibilityTimeout: 0,',
    to: 'VisibilityTimeout: 300,',
    breaks:
      'messages taken by a long poll whose caller left hidden for the whole visibility timeout',
    files: ['test/emulators/abandoned-receives.test.ts'],
  },
  // The local event source mapping: its batching window and pause.
  {
    file: 'local/sqs-poller.ts',
    from: 'batch.push(...(await this.#receive(batchSize - batch.length, wait)));',
    to: 'batch.push(...(await this.#receive(batchSize, wait)));',
    breaks: 'a batching window filling a batch past the trigger’s batch size',
    files: POLLER_TESTS,
  },
  {
    file: 'local/sqs-poller.ts',
    from: 'if (this.#resumed) {\n        await this.#release(messages);',
    to: 'if (false) {\n        await this.#release(messages);',
    breaks: 'a paused trigger invoking the function with what a receive brought back as it paused',
    files: ['test/local/lambda-api.test.ts', 'test/cli/trigger.test.ts'],
  },
  {
    file: 'local/sqs-poller.ts',
    from: "return this.#processing > 0 ? 'Disabling' : 'Disabled';",
    to: "return 'Disabled';",
    breaks: 'a trigger read Disabled while a batch received before the pause still runs',
    files: ['test/local/lambda-api.test.ts', 'test/cli/trigger.test.ts'],
  },
  // Throttled invocations (reserved concurrency) on the local runtime.
  {
    file: 'local/throttling.ts',
    from: 'if (Date.now() >= untilMs || abandoned()) throw error;',
    to: 'if (abandoned()) throw error;',
    breaks:
      'a throttled batch tried again after its messages’ visibility ended, when a timer fired late: run while another receive may hold them',
    files: ['test/unit/throttling.test.ts'],
  },
  {
    file: 'local/throttling.ts',
    from: 'if (!(error instanceof ThrottledError) || Date.now() + pause >= untilMs',
    to: 'if (Date.now() + pause >= untilMs',
    breaks: 'a function’s own failure retried as if throttled: run again inside one delivery',
    files: ['test/unit/throttling.test.ts'],
  },
  // The versions of hour objects the chaos judge reads: the lifecycle's promise to consumers.
  {
    file: 'harness/chaos/versions.ts',
    from: 'v.content !== final.content && v.amendments <= final.amendments',
    to: 'v.content !== final.content && v.amendments < final.amendments',
    breaks: 'chaos blind to a final hour whose content changed with its amendments count unchanged',
    files: ['test/integration/version-log.test.ts'],
  },
  {
    file: 'harness/chaos/versions.ts',
    from: 'if (v.final) final = v;',
    to: 'if (v.final && !final) final = v;',
    breaks: 'chaos blind to an amended hour changing again without another amendment',
    files: ['test/integration/version-log.test.ts'],
  },
  {
    file: 'harness/chaos/versions.ts',
    from: 'if (final && !v.final) found.push',
    to: 'if (false) found.push',
    breaks: 'chaos blind to an hour read final, then open',
    files: ['test/integration/version-log.test.ts'],
  },
  // The pending watcher: what the stuck-batch alarm reads.
  {
    file: 'functions/watch-pending.ts',
    from: "metrics.addMetric('OldestPendingBatchAge', MetricUnit.Seconds, report.oldestAgeSeconds);",
    to: "metrics.addMetric('OldestPendingBatchAge', MetricUnit.Seconds, 0);",
    breaks:
      'the stuck-batch alarm never firing: a batch retrying or in a DLQ, its hours wrong, nobody told',
    files: ['test/local/cloudwatch-api.test.ts'],
  },
  {
    file: 'functions/ingest-orders.ts',
    from: "outcome.reason === 'batch-conflict' ? 'BatchConflicts' : 'RejectedMessages'",
    to: "'RejectedMessages'",
    breaks: 'a reused batch id counted as an invalid body: the batch-conflict alarm never fires',
    files: ['test/local/cloudwatch-api.test.ts'],
  },
  {
    file: 'functions/ingest-orders.ts',
    from: "metrics.addMetric('EventConflicts', MetricUnit.Count, outcome.conflicts);",
    to: "metrics.addMetric('EventConflicts', MetricUnit.Count, 0);",
    breaks: 'the event-conflict alarm never firing: events re-sent with other content, nobody told',
    files: ['test/local/cloudwatch-api.test.ts'],
  },
  // The late-event alarms: what each late policy tells operators.
  {
    file: 'functions/aggregate-hours.ts',
    from: "metrics.addMetric('LateAfterFinal', MetricUnit.Count, 1);",
    to: "metrics.addMetric('LateAfterFinal', MetricUnit.Count, 0);",
    breaks: 'the LateAfterFinal alarm never firing: final hours amended, nobody told',
    files: ['test/local/late-alarms.test.ts'],
  },
  {
    file: 'functions/ingest-orders.ts',
    from: "metrics.addMetric('TooLateEvents', MetricUnit.Count, outcome.tooLate);",
    to: "metrics.addMetric('TooLateEvents', MetricUnit.Count, 0);",
    breaks: 'the TooLateEvents alarm never firing: events refused as too late, nobody told',
    files: ['test/local/late-alarms.test.ts'],
  },
  // replay dlq: what an operator runs after an incident.
  {
    file: 'cli/commands/replay-dlq.ts',
    from: 'for (let round = 0; round < 5; round++) {',
    to: 'for (let round = 0; round < 1; round++) {',
    breaks: 'a peeked DLQ message left behind once the visible ones are moved',
    files: ['test/integration/replay-dlq.test.ts'],
  },
  {
    file: 'cli/commands/replay-dlq.ts',
    from: 'moved += await awaitMoveTask(target, dlqArn, moved, deadline, timeoutMs, io);',
    to: 'moved = await awaitMoveTask(target, dlqArn, moved, deadline, timeoutMs, io);',
    breaks: 'replay dlq reporting only its last round’s messages as moved',
    files: ['test/integration/replay-dlq.test.ts'],
  },
  {
    file: 'cli/commands/replay-dlq.ts',
    from: "if (task?.Status === 'FAILED' || task?.Status === 'CANCELLED') {",
    to: "if (task?.Status === 'CANCELLED') {",
    breaks: 'a failed move task waited on until the deadline, its reason never told',
    files: ['test/integration/replay-dlq.test.ts'],
  },
  {
    file: 'cli/commands/replay-dlq.ts',
    from: `    io.onProgress?.(
      before + moved,`,
    to: `    io.onProgress?.(
      moved,`,
    breaks: 'the progress bar starting again from 0 on each round',
    files: ['test/integration/replay-dlq.test.ts'],
  },
  // The local edge's alarms: each statistic as CloudWatch computes it.
  {
    file: 'local/alarms.ts',
    from: 'Average: set.sum / set.sampleCount,',
    to: 'Average: set.sum,',
    breaks: 'an alarm on an Average evaluated on the sum: fires where CloudWatch would not',
    files: ['test/unit/alarms.test.ts'],
  },
  {
    file: 'local/alarms.ts',
    from: 'Minimum: set.minimum,',
    to: 'Minimum: set.maximum,',
    breaks: 'an alarm on a Minimum evaluated on the maximum',
    files: ['test/unit/alarms.test.ts'],
  },
  {
    file: 'local/alarm-reasons.ts',
    from: "const minimum = o.state === 'ALARM' ? o.datapointsToAlarm : o.periods - o.datapointsToAlarm + 1;",
    to: 'const minimum = o.datapointsToAlarm;',
    breaks: 'an OK reason that names the datapoints an ALARM needs, not those leaving it needs',
    files: ['test/unit/alarms.test.ts'],
  },
  {
    file: 'local/cloudwatch-api.ts',
    from: '          ...(h.data === undefined ? {} : { HistoryData: h.data }),',
    to: '',
    breaks: 'alarm history without its data: no reason for a change, `alarms --history` included',
    files: ['test/local/cloudwatch-api.test.ts', 'test/cli/alarms.test.ts'],
  },
  {
    file: 'local/metrics.ts',
    from: 'minimum: Math.min(a.minimum, b.minimum),',
    to: 'minimum: b.minimum,',
    breaks: 'a period’s minimum that of its last datum, not the least',
    files: ['test/unit/alarms.test.ts'],
  },
  // The reference model: the truth chaos, the bench and the property tests compare against.
  {
    file: 'harness/model.ts',
    from: 'a.seconds > b.seconds || (a.seconds === b.seconds && a.fraction > b.fraction);',
    to: 'a.seconds > b.seconds;',
    breaks: 'the model blind to fractions of a second: its newest event wrong within a second',
    files: ['test/unit/model.test.ts'],
  },
  {
    file: 'harness/model.ts',
    from: 'minorUnits(a.amount, a.currency) === minorUnits(b.amount, b.currency) &&',
    to: 'a.amount === b.amount &&',
    breaks:
      'the model taking 25.5 and 25.50 for other content: a conflict the product rightly ignores',
    files: ['test/unit/model.test.ts'],
  },
  {
    file: 'harness/model.ts',
    from: 'same(instant(a.eventTime), instant(b.eventTime));',
    to: 'a.eventTime === b.eventTime;',
    breaks: 'the model taking one instant written in two offsets for other content',
    files: ['test/unit/model.test.ts'],
  },
  {
    file: 'harness/model.ts',
    from: 'conflicts.add(JSON.stringify([batch.batchId ?? index, e.orderId, e.eventId]));',
    to: 'conflicts.add(JSON.stringify([e.orderId, e.eventId]));',
    breaks: 'the model counting one conflict per event, where each batch that re-sends it is one',
    files: ['test/unit/model.test.ts'],
  },
  {
    file: 'cli/commands/replay-rejects.ts',
    from: '...(options.sinceMs === undefined ? {} : { sinceMs: options.sinceMs }),',
    to: '',
    breaks: 'replay rejects --since sending every too-late part, however old',
    files: ['test/integration/late-policy.test.ts'],
  },
  // The recovery drill: a check that passes whatever it finds proves nothing.
  {
    file: 'cli/commands/drill.ts',
    from: 'report.differences.length === 0,',
    to: 'true,',
    breaks: 'the drill passing with hour objects unlike the table',
    files: ['test/cli/drill.test.ts'],
  },
  {
    file: 'cli/commands/drill.ts',
    from: 's.ledger.pending === 0,',
    to: 'true,',
    breaks: 'the drill passing with batches still pending after the runbook',
    files: ['test/cli/drill.test.ts'],
  },
  {
    file: 'cli/commands/drill.ts',
    from: "dlqs.every((q) => !('missing' in q) && q.visible + q.inFlight === 0),",
    to: 'true,',
    breaks: 'the drill passing with messages in a DLQ',
    files: ['test/cli/drill.test.ts'],
  },
  {
    file: 'cli/commands/drill.ts',
    from: 'return ok ? 0 : 1;',
    to: 'return 0;',
    breaks: 'a failed drill exiting 0: a scheduled rehearsal never alerts',
    files: ['test/cli/drill.test.ts'],
  },
  {
    file: 'cli/commands/reconcile.ts',
    from: 'else if (!stored.aggregate)',
    to: 'else if (false)',
    breaks:
      'verify failing with a TypeError on an hour object that is not an aggregate, naming no hour',
    files: ['test/integration/parallel-hours.test.ts'],
  },
  // The bench's verdict: it says who is exact.
  {
    file: 'harness/bench/exactness.ts',
    from: 'JSON.stringify(state.hourly) === JSON.stringify(model.hourly) &&',
    to: '',
    breaks: 'the bench calling a pass exact whose hours are wrong',
    files: ['test/bench/exactness.test.ts'],
  },
  {
    file: 'harness/bench/exactness.ts',
    from: 'doubleCountedEvents: events(state.hourly) - events(model.hourly),',
    to: 'doubleCountedEvents: 0,',
    breaks: 'the bench reporting no double count for the naive writer',
    files: ['test/bench/exactness.test.ts'],
  },
  {
    file: 'harness/bench/exactness.ts',
    from: '(conflictsReported === undefined || conflictsReported === expectedConflicts);',
    to: 'true;',
    breaks: 'the bench calling a pass exact that reported fewer conflicts than it carried',
    files: ['test/bench/exactness.test.ts'],
  },
  // npm start's demo: its verdict is the first thing a user reads.
  {
    file: 'local/demo.ts',
    from: 'if (JSON.stringify(orders) !== JSON.stringify(expectedOrders))',
    to: 'if (false)',
    breaks: 'the demo saying the orders equal the expected results whatever they are',
    files: ['test/deployed/local-runtime.test.ts'],
  },
  {
    file: 'local/demo.ts',
    from: 'if (JSON.stringify(essence) !== JSON.stringify(expectedHours))',
    to: 'if (false)',
    breaks: 'the demo saying the hourly aggregates equal the expected results whatever they are',
    files: ['test/deployed/local-runtime.test.ts'],
  },
  // A chaos run's summary and exit: what a CI job running chaos reads.
  {
    file: 'harness/chaos.ts',
    from: 'mismatches: sum((r) => r.mismatches),',
    to: 'mismatches: results.at(-1)?.mismatches ?? 0,',
    breaks: 'a schedule’s mismatch hidden by the clean schedule folded after it: chaos exits 0',
    files: ['test/unit/chaos-summary.test.ts'],
  },
  {
    file: 'harness/chaos.ts',
    from: 'failures: results.flatMap((r) => (r.diff ? [{ seed: r.seed, diff: r.diff }] : [])),',
    to: 'failures: [],',
    breaks: 'a failing schedule’s seed never printed: nobody can rerun it',
    files: ['test/unit/chaos-summary.test.ts'],
  },
  {
    file: 'harness/chaos.ts',
    from: 'if (s.mismatches > 0) return { code: 1 };',
    to: '',
    breaks: 'onceflow chaos exiting 0 on mismatches once every crash point is covered',
    files: ['test/unit/chaos-summary.test.ts'],
  },
  // The demo's crash count: its verdict on the crashed delivery.
  {
    file: 'local/demo.ts',
    from: 'if (crashes.length !== 1)',
    to: 'if (false)',
    breaks: 'the demo claiming its crashed delivery was counted once when no crash, or two, fired',
    files: ['test/deployed/local-runtime.test.ts'],
  },
  {
    file: 'local/demo.ts',
    from: 'runtime.crashes.slice(crashesBefore)',
    to: 'runtime.crashes.slice(0)',
    breaks: 'the demo taking crashes fired before it for its own',
    files: ['test/deployed/local-runtime.test.ts'],
  },
  // EventBridge's schedule expressions, as the local runtime runs its rules and schedules.
  {
    file: 'local/schedule-expression.ts',
    from: 'if (weekday === 7) return day === 1 ? 3 : day - 1;',
    to: 'if (weekday === 7) return day - 1;',
    breaks:
      '`1W` on a Saturday run on the last day of the month before (day 0), not Monday the 3rd',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/schedule-expression.ts',
    from: 'return day === d.lastDay ? day - 2 : day + 1;',
    to: 'return day + 1;',
    breaks: '`LW` on a Sunday run on a day past the month’s end, never',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/schedule-expression.ts',
    from: 'd.weekday === weekday && d.day + 7 > d.lastDay',
    to: 'd.weekday === weekday && d.day + 7 >= d.lastDay',
    breaks:
      '`5L` (the last Thursday) also run on the one before, when it falls a week before the month’s end',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/schedule-expression.ts',
    from: 'Math.ceil(d.day / 7) === k',
    to: 'Math.floor(d.day / 7) + 1 === k',
    breaks: '`n#k` counting the 7th as a month’s second week',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/schedule-expression.ts',
    from: '(stepText === undefined ? from : spec.max)',
    to: 'from',
    breaks: '`5/15` run only at 5, not every 15 from 5 to the field’s end',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/schedule-expression.ts',
    from: '(((to - from) % span) + span) % span',
    to: 'to - from',
    breaks: 'a range past the week’s end (`FRI-MON`) taken as nothing',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/schedule-expression.ts',
    from: "if ((dom === '?') === (dow === '?'))",
    to: "if (dom === '?' && dow === '?')",
    breaks: 'a cron with both day fields set accepted, where PutRule refuses it',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/schedule-expression.ts',
    from: "value < 1 || (value === 1) !== (rate[3] === '')",
    to: 'value < 1',
    breaks: '`rate(5 minute)` accepted, where PutRule refuses it',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/schedule-expression.ts',
    from: '[day, fromMinute] = [day + 1, 0];',
    to: '[day, fromMinute] = [day + 1, fromMinute];',
    breaks:
      'a day after the first one searched from the first one’s time of day: runs early in the day skipped',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/schedule-expression.ts',
    from: '.filter((t) => wallOf(t, zone) === wallMs)',
    to: '',
    breaks: 'a wall time the clocks skip run anyway, at an instant whose clock reads another time',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/schedule-expression.ts',
    from: 'const [first] = instantsOfWall(next, zone);',
    to: 'const first = instantsOfWall(next, zone).at(-1);',
    breaks: 'a wall time the clocks repeat run the second time, an hour late, instead of the first',
    files: SCHEDULE_TESTS,
  },
  // Lambda's event source mapping API on the local edge: what an operator pausing or resizing a trigger meets.
  {
    file: 'local/lambda-mappings-api.ts',
    from: 'maxConcurrency: c.scaling ? c.scaling.maxConcurrency : before.maxConcurrency',
    to: 'maxConcurrency: c.scaling?.maxConcurrency ?? before.maxConcurrency',
    breaks: 'an empty ScalingConfig keeping the concurrency cap, where Lambda removes it',
    files: MAPPING_API_TESTS,
  },
  {
    file: 'local/lambda-mappings-api.ts',
    from: "if (state !== 'Enabled' && state !== 'Disabled')",
    to: 'if (false)',
    breaks:
      'a change taken by a mapping still Disabling, where Lambda answers ResourceInUseException',
    files: MAPPING_API_TESTS,
  },
  {
    file: 'local/lambda-mappings-api.ts',
    from: '  if (existing)\n',
    to: '  if (false)\n',
    breaks:
      'a second mapping of one function to one queue created, where Lambda answers ResourceConflictException',
    files: MAPPING_API_TESTS,
  },
  {
    file: 'local/lambda-mappings-api.ts',
    from: 'batchSize: o.BatchSize ?? 10,',
    to: 'batchSize: o.BatchSize ?? 100,',
    breaks: 'a mapping created without BatchSize taking 100 messages, not Lambda’s 10',
    files: MAPPING_API_TESTS,
  },
  {
    file: 'local/lambda-mappings-api.ts',
    from: '  const refusal = mappingRefusal({ ...next, ...m.limits() });\n  if (refusal) return { refusal };\n',
    to: '  const refusal = undefined;\n',
    breaks:
      'an update Lambda refuses (a window of 0 with more than 10 messages, a timeout past the queue’s visibility) applied',
    files: MAPPING_API_TESTS,
  },
  {
    file: 'local/lambda-mappings-api.ts',
    from: 'if (kept) resources[c.logicalId] = kept;',
    to: '',
    breaks:
      'a redeploy refused for a mapping recorded as deployed: the next redeploy compares with what does not run',
    files: MAPPING_API_TESTS,
  },
  {
    file: 'local/lambda-mappings-api.ts',
    from: '.filter(({ m }) => fn === undefined || m.functionName === fn)',
    to: '.filter(() => true)',
    breaks: 'ListEventSourceMappings for one function listing every function’s mappings',
    files: MAPPING_API_TESTS,
  },
  {
    file: 'local/lambda-mappings-api.ts',
    from: 'if (moved.length > 0) m.configure(next);',
    to: 'if (moved.length > 1) m.configure(next);',
    breaks: 'an update that moves one setting answered Updating and not applied',
    files: MAPPING_API_TESTS,
  },
  {
    file: 'local/lambda-mappings-api.ts',
    from: 'm = backend.mappingControl.create(name, queueArn, settings, o.Enabled ?? true);',
    to: 'm = backend.mappingControl.create(name, queueArn, settings, o.Enabled ?? false);',
    breaks: 'a mapping created without Enabled left disabled, where Lambda enables it',
    files: MAPPING_API_TESTS,
  },
  // SQS's query protocol at the edge: the AWS CLI v2.9 and the SDK v2 speak it.
  {
    file: 'local/sqs-query.ts',
    from: "  'WaitTimeSeconds',\n",
    to: '',
    breaks: 'a long poll’s WaitTimeSeconds passed on as text, which the JSON protocol refuses',
    files: QUERY_PROTOCOL_TESTS,
  },
  {
    file: 'local/sqs-query.ts',
    from: '/[&<>"\'\\r]/g',
    to: '/[&<>"\']/g',
    breaks:
      'a carriage return in a body sent raw in the XML, which a conforming parser (the AWS CLI’s) reads as a line feed: the body changed and its MD5 wrong',
    files: QUERY_PROTOCOL_TESTS,
  },
  {
    file: 'local/sqs-query.ts',
    from: '.sort((a, b) => Number(a) - Number(b))',
    to: '.sort()',
    breaks: 'a batch’s tenth entry read before its second: entries out of the order they were sent',
    files: QUERY_PROTOCOL_TESTS,
  },
  {
    file: 'local/sqs-query.ts',
    from: "const type = fault || (answer.status >= 500 ? 'Receiver' : 'Sender');",
    to: "const type = fault || 'Sender';",
    breaks: 'a server error reported as the caller’s fault, which clients do not retry',
    files: QUERY_PROTOCOL_TESTS,
  },
  {
    file: 'local/sqs-query.ts',
    from: "if (action === 'ReceiveMessage' && (res.closed || res.destroyed))",
    to: 'if (false)',
    breaks:
      'messages taken by a long poll whose caller left kept in flight until their visibility timeout',
    files: QUERY_PROTOCOL_TESTS,
  },
  {
    file: 'local/sqs-query.ts',
    from: '    body.QueueUrl === undefined &&\n    queuePath &&',
    to: '    body.QueueUrl === undefined &&\n    queuePath === null &&',
    breaks: 'a queue addressed by the request’s path (as the AWS CLI does) left without a QueueUrl',
    files: QUERY_PROTOCOL_TESTS,
  },
  // `onceflow check`'s rules: what it calls a failure, a warning or fine.
  {
    file: 'cli/commands/check-rules.ts',
    from: '...(q.visibilityTimeoutS >= advised',
    to: '...(q.visibilityTimeoutS > advised',
    breaks: 'a visibility timeout of exactly what AWS advises warned of',
    files: CHECK_TESTS,
  },
  {
    file: 'cli/commands/check-rules.ts',
    from: 'const advised = VISIBILITY_FACTOR * fn.timeoutS + window;',
    to: 'const advised = VISIBILITY_FACTOR * fn.timeoutS;',
    breaks:
      'a visibility timeout advised without the trigger’s batching window, which a batch also waits out',
    files: CHECK_TESTS,
  },
  {
    file: 'cli/commands/check-rules.ts',
    from: 'q.visibilityTimeoutS < fn.timeoutS ?',
    to: 'q.visibilityTimeoutS > fn.timeoutS ?',
    breaks:
      'a visibility timeout shorter than the function’s timeout not said to run a batch twice at once',
    files: CHECK_TESTS,
  },
  {
    file: 'cli/commands/check-rules.ts',
    from: '          : q.dlqRetentionS > q.retentionS\n',
    to: '          : q.dlqRetentionS >= q.retentionS\n',
    breaks:
      'a DLQ that keeps messages no longer than its queue passed, where a redriven message may expire in it',
    files: CHECK_TESTS,
  },
  {
    file: 'cli/commands/check-rules.ts',
    from: '        q.fifo\n          ? {',
    to: '        false\n          ? {',
    breaks: 'a FIFO queue’s DLQ warned of for a retention it restarts from the move',
    files: CHECK_TESTS,
  },
  {
    file: 'cli/commands/check-rules.ts',
    from: 'maxReceiveCount >= MIN_RECEIVES',
    to: 'maxReceiveCount > MIN_RECEIVES',
    breaks: 'AWS’s advised 5 receives warned of',
    files: CHECK_TESTS,
  },
  {
    file: 'cli/commands/check-rules.ts',
    from: 'aggregateQueue.delaySeconds >= windowS',
    to: 'aggregateQueue.delaySeconds > windowS',
    breaks: 'an aggregate queue delayed exactly ingest’s coalescing window failed',
    files: CHECK_TESTS,
  },
  {
    file: 'cli/commands/check-rules.ts',
    from: '  if (!aggregateQueue.fifo)\n',
    to: '  if (false)\n',
    breaks: 'coalescing on a standard queue, whose sends fail after each commit, passed',
    files: CHECK_TESTS,
  },
  {
    file: 'cli/commands/check-rules.ts',
    from: 'filter(([name, value]) => environment[name] !== value)',
    to: 'filter(([name, value]) => environment[name] !== value && environment[name] !== undefined)',
    breaks: 'a function with no table or bucket variable at all passed as wired',
    files: CHECK_TESTS,
  },
  {
    file: 'cli/commands/check-rules.ts',
    from: 'else if (reserved !== undefined && cap > reserved)',
    to: 'else if (reserved !== undefined && cap >= reserved)',
    breaks: 'a reservation equal to the trigger’s maximum concurrency, as AWS advises, warned of',
    files: CHECK_TESTS,
  },
  {
    file: 'cli/commands/check-rules.ts',
    from: "  if (m.State === 'Enabled')\n    return { subject: fn, name: 'trigger', verdict: 'ok'",
    to: "  if (m.State !== 'Disabled')\n    return { subject: fn, name: 'trigger', verdict: 'ok'",
    breaks: 'a trigger still Disabling, or Creating, reported running',
    files: CHECK_TESTS,
  },
  {
    file: 'cli/commands/check-rules.ts',
    from: "const stopped = m.State === 'Disabled' || m.State === 'Disabling';",
    to: "const stopped = m.State === 'Disabled';",
    breaks: 'a trigger being paused reported as a change under way, not as stopping',
    files: CHECK_TESTS,
  },
  // The deployed contract: what `cdk deploy` sets that the guarantees rest on.
  {
    file: 'infra/constructs/sqs-function.ts',
    from: 'reportBatchItemFailures: true,',
    to: 'reportBatchItemFailures: false,',
    breaks:
      'a deployed trigger without partial batch responses: a batch with one failed message deleted whole, unapplied',
    files: STACK_TESTS,
  },
  {
    file: 'infra/constructs/sqs-function.ts',
    from: 'const needed = 6 * this.timeout.toSeconds() + this.maxBatchingWindow.toSeconds();',
    to: 'const needed = this.timeout.toSeconds();',
    breaks: 'a visibility timeout under AWS’s 6 × timeout + window deployed without a word',
    files: STACK_TESTS,
  },
  {
    file: 'infra/constructs/queue-with-dlq.ts',
    from: 'this.maxReceiveCount = props.maxReceiveCount ?? 5;',
    to: 'this.maxReceiveCount = props.maxReceiveCount ?? 1;',
    breaks: 'a message moved to the DLQ after one throttled or failed receive',
    files: STACK_TESTS,
  },
  {
    file: 'infra/constructs/queue-with-dlq.ts',
    from: 'if (dlqRetention.toSeconds() <= retention.toSeconds()) {',
    to: 'if (dlqRetention.toSeconds() < retention.toSeconds()) {',
    breaks:
      'a DLQ that keeps messages no longer than its queue deployed: a redriven message may expire in it',
    files: STACK_TESTS,
  },
  {
    file: 'infra/constructs/queue-with-dlq.ts',
    from: '      enforceSSL: true,\n      retentionPeriod: dlqRetention,',
    to: '      enforceSSL: false,\n      retentionPeriod: dlqRetention,',
    breaks: 'a DLQ that takes requests over plain HTTP',
    files: STACK_TESTS,
  },
  {
    file: 'infra/constructs/queue-with-dlq.ts',
    from: 'deduplicationScope: DeduplicationScope.MESSAGE_GROUP,',
    to: 'deduplicationScope: DeduplicationScope.QUEUE,',
    breaks: 'the aggregate queue deduplicating across hours: throughput per queue, not per hour',
    files: STACK_TESTS,
  },
  {
    file: 'infra/onceflow-stack.ts',
    from: '? { fifo: true, deliveryDelay: Duration.seconds(coalesceSeconds) }',
    to: '? { fifo: true }',
    breaks:
      'coalesced notifications delivered at once: a dropped copy’s batch may commit after its hour is read',
    files: STACK_TESTS,
  },
  {
    file: 'infra/onceflow-stack.ts',
    from: 'MAX_BODY_BYTES: String(this.ordersQueue.maxMessageSizeBytes),',
    to: 'MAX_BODY_BYTES: String(256 * 1024),',
    breaks: 'a body the queue accepts (up to 1 MiB) quarantined as oversize by ingest',
    files: STACK_TESTS,
  },
  {
    file: 'infra/onceflow-stack.ts',
    from: '    6 * (t?.timeout ?? Duration.seconds(30)).toSeconds() +\n      (t?.maxBatchingWindow ?? Duration.seconds(0)).toSeconds(),',
    to: '    6 * (t?.timeout ?? Duration.seconds(30)).toSeconds(),',
    breaks: 'a queue’s visibility timeout sized without its trigger’s batching window',
    files: STACK_TESTS,
  },
  {
    file: 'infra/constructs/order-table.ts',
    from: 'pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },',
    to: 'pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: false },',
    breaks:
      'a table with no point-in-time recovery: the recovery drill has nothing to restore from',
    files: STACK_TESTS,
  },
  {
    file: 'infra/constructs/order-table.ts',
    from: 'projectionType: ProjectionType.INCLUDE,\n          nonKeyAttributes: [...OrderTable.PENDING_INDEX.projected],',
    to: 'projectionType: ProjectionType.KEYS_ONLY,',
    breaks:
      'the pending index without the archive key: status and the watcher cannot name a pending batch’s archive',
    files: STACK_TESTS,
  },
  {
    file: 'infra/constructs/alarms.ts',
    from: '          treatMissingData: TreatMissingData.NOT_BREACHING,',
    to: '          treatMissingData: TreatMissingData.BREACHING,',
    breaks: 'every alarm in ALARM whenever its metric has no data: an idle pipeline pages someone',
    files: STACK_TESTS,
  },
  {
    file: 'infra/constructs/alarms.ts',
    from: "metric: q.dlq.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),\n        threshold: 1,",
    to: "metric: q.dlq.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),\n        threshold: 10,",
    breaks: 'nine messages in a DLQ raise no alarm',
    files: STACK_TESTS,
  },
  {
    file: 'infra/constructs/alarms.ts',
    from: "metric: q.queue.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum' }),",
    to: "metric: q.queue.metricApproximateAgeOfOldestMessage({ period, statistic: 'Minimum' }),",
    breaks:
      'a stuck message’s age read as the minimum over the minute: the backlog alarm late or silent',
    files: STACK_TESTS,
  },
  {
    file: 'infra/constructs/alarms.ts',
    from: "          'Maximum',\n        ),\n        threshold: (props.maxPendingAge ?? Duration.minutes(15)).toSeconds(),",
    to: "          'Average',\n        ),\n        threshold: (props.maxPendingAge ?? Duration.minutes(15)).toSeconds(),",
    breaks: 'a batch pending too long averaged away with the watcher’s runs that saw none',
    files: STACK_TESTS,
  },
  // Settings and currencies: what a deployment and an order's amount are read with.
  {
    file: 'shared/config.ts',
    from: 'e.LEDGER_RETENTION_DAYS * 86_400',
    to: 'e.LEDGER_RETENTION_DAYS * 3_600',
    breaks: 'a ledger retention of days read as hours: claims expire before redeliveries stop',
    files: CONFIG_TESTS,
  },
  {
    file: 'shared/config.ts',
    from: "    v.regex(/^\\d+$/, 'must be a whole number'),\n",
    to: '',
    breaks: 'a setting of 1.5 or 1e3 taken as a number, where the variable must be a whole number',
    files: CONFIG_TESTS,
  },
  {
    file: 'shared/config.ts',
    from: "S3_FORCE_PATH_STYLE: v.optional(flag, 'false'),",
    to: "S3_FORCE_PATH_STYLE: v.optional(flag, 'true'),",
    breaks: 'path-style S3 addressing on AWS by default, where virtual-hosted style is the rule',
    files: CONFIG_TESTS,
  },
  {
    file: 'shared/config.ts',
    from: "ALLOWED_LATENESS_MINUTES: v.optional(integer(0, 10_080), '120'),",
    to: "ALLOWED_LATENESS_MINUTES: v.optional(integer(0, 10_080), '60'),",
    breaks: 'hours finalized an hour sooner than the documented 2 hours of lateness',
    files: CONFIG_TESTS,
  },
  {
    file: 'shared/config.ts',
    from: "const required = v.pipe(v.string('is required'), v.minLength(1, 'is required'));",
    to: "const required = v.string('is required');",
    breaks: 'an empty TABLE_NAME accepted at start, failing every request later instead',
    files: CONFIG_TESTS,
  },
  {
    file: 'shared/currencies.ts',
    from: "3: 'BHD IQD JOD KWD LYD OMR TND',",
    to: "3: 'BHD IQD JOD LYD OMR TND',",
    breaks: 'orders in Kuwaiti dinars refused as an unknown currency',
    files: CONFIG_TESTS,
  },
  {
    file: 'shared/currencies.ts',
    from: 'ISK JPY KMF',
    to: 'ISK KMF',
    breaks: 'orders in yen refused as an unknown currency',
    files: CONFIG_TESTS,
  },
  {
    file: 'shared/currencies.ts',
    from: 'export const MAX_CURRENCY_EXPONENT = Math.max(...EXPONENTS.values());',
    to: 'export const MAX_CURRENCY_EXPONENT = 2;',
    breaks:
      'an amount with three or four fraction digits (KWD, CLF) refused before its currency is known',
    files: CONFIG_TESTS,
  },
  // The bench's billing: the units and prices behind dollars per million events.
  {
    file: 'harness/bench/meter.ts',
    from: 'const requests = Math.max(1, Math.ceil(payload / SQS_CHUNK_BYTES));',
    to: 'const requests = Math.max(1, Math.round(payload / SQS_CHUNK_BYTES));',
    breaks: 'an SQS request’s part of a 64 KB chunk not billed: dollars per million events low',
    files: BILLING_TESTS,
  },
  {
    file: 'harness/bench/meter.ts',
    from: 'bytes((output.Messages ?? []).map((m) => m.Body));',
    to: '0;',
    breaks: 'receives billed as if they brought nothing back',
    files: BILLING_TESTS,
  },
  {
    file: 'harness/bench/meter.ts',
    from: "if (input.QueueUrl?.endsWith('.fifo')) this.sqsFifoRequests += requests;",
    to: '',
    breaks: 'the coalescing FIFO queue’s requests priced as a standard queue’s',
    files: BILLING_TESTS,
  },
  {
    file: 'harness/bench/meter.ts',
    from: "Buffer.byteLength(t ?? '', 'utf8')",
    to: "(t ?? '').length",
    breaks: 'SQS payload counted in UTF-16 characters, not the bytes AWS bills',
    files: BILLING_TESTS,
  },
  {
    file: 'harness/bench/meter.ts',
    from: '/^(Put|Copy|Post|List|Create|Upload|Complete)/',
    to: '/^(Put|Copy|Post|Create|Upload|Complete)/',
    breaks: 'S3 LIST requests priced as GETs, at 8% of their price',
    files: BILLING_TESTS,
  },
  {
    file: 'harness/bench/meter.ts',
    from: 'this.gbSeconds += (ms / 1000) * (memoryMb / 1024);',
    to: 'this.gbSeconds += (ms / 1000) * (memoryMb / 1000);',
    breaks: 'Lambda GB-seconds reckoned in decimal gigabytes',
    files: BILLING_TESTS,
  },
  {
    file: 'harness/bench/meter.ts',
    from: 'this.writeUnits += Math.max(consumed - indexUnits, items) * 2 + indexUnits;',
    to: 'this.writeUnits += Math.max(consumed - indexUnits, items) + indexUnits;',
    breaks: 'transactional writes billed one unit an item, where AWS bills two',
    files: BILLING_TESTS,
  },
  {
    file: 'harness/bench/prices.ts',
    from: '(u.sqsRequests - u.sqsFifoRequests) * PRICES.sqsRequest +',
    to: 'u.sqsRequests * PRICES.sqsRequest +',
    breaks: 'FIFO requests priced twice, at both prices',
    files: BILLING_TESTS,
  },
  {
    file: 'harness/bench/prices.ts',
    from: 'lambdaArmGbSecond: 0.0000133334,',
    to: 'lambdaArmGbSecond: 0.0000166667,',
    breaks: 'Lambda duration priced at x86’s rate, where the functions run on Arm',
    files: BILLING_TESTS,
  },
  // Lambda's quotas and SQS's characters, as the local edge holds to them.
  {
    file: 'local/lambda-quotas.ts',
    from: 'if (m.batchingWindowSeconds > 300)',
    to: 'if (m.batchingWindowSeconds >= 300)',
    breaks: 'Lambda’s longest batching window, 300 s, refused',
    files: QUOTA_TESTS,
  },
  {
    file: 'local/lambda-quotas.ts',
    from: 'm.maxConcurrency !== undefined && m.maxConcurrency < 2',
    to: 'm.maxConcurrency !== undefined && m.maxConcurrency < 1',
    breaks: 'a trigger capped at one concurrent batch accepted, where Lambda’s minimum is 2',
    files: QUOTA_TESTS,
  },
  {
    file: 'local/lambda-quotas.ts',
    from: 'if (ACCOUNT_CONCURRENCY - reservedByOthers - value < UNRESERVED_MINIMUM)',
    to: 'if (ACCOUNT_CONCURRENCY - reservedByOthers - value <= UNRESERVED_MINIMUM)',
    breaks: 'a reservation leaving exactly 100 unreserved refused, where Lambda takes it',
    files: QUOTA_TESTS,
  },
  {
    file: 'local/lambda-quotas.ts',
    from: 'export const RESPONSE_PAYLOAD_BYTES = 6 * 1024 * 1024 + 100;',
    to: 'export const RESPONSE_PAYLOAD_BYTES = 6 * 1024 * 1024;',
    breaks: 'a response Lambda returns, up to 6,291,556 bytes, refused locally',
    files: QUOTA_TESTS,
  },
  {
    file: 'local/lambda-quotas.ts',
    from: 'const ENVIRONMENT_KEY = /^[a-zA-Z][a-zA-Z0-9_]+$/;',
    to: 'const ENVIRONMENT_KEY = /^[a-zA-Z][a-zA-Z0-9_]*$/;',
    breaks: 'a one-letter environment variable name accepted, where Lambda refuses it',
    files: QUOTA_TESTS,
  },
  {
    file: 'local/lambda-quotas.ts',
    from: 'if (m.queue.visibilityTimeoutSeconds < m.functionTimeoutSeconds)',
    to: 'if (m.queue.visibilityTimeoutSeconds <= m.functionTimeoutSeconds)',
    breaks:
      'a queue whose visibility timeout equals the function’s timeout refused, where Lambda takes it',
    files: QUOTA_TESTS,
  },
  {
    file: 'local/sqs-unicode.ts',
    from: '/[^\\x09\\x0A\\x0D\\x20-\\uD7FF\\uE000-\\uFFFD\\u{10000}-\\u{10FFFF}]/u',
    to: '/[^\\x09\\x0A\\x20-\\uD7FF\\uE000-\\uFFFD\\u{10000}-\\u{10FFFF}]/u',
    breaks: 'a body with a carriage return refused, where SQS takes it',
    files: QUOTA_TESTS,
  },
  // `onceflow orders --events`: an order's history when part of it cannot be read.
  {
    file: 'cli/order-history.ts',
    from: '    if (!(error instanceof InvalidMessageError)) throw error;\n',
    to: '    throw error;\n',
    breaks: 'an archive that is not a batch failing `orders --events` whole instead of being named',
    files: ['test/integration/order-history.test.ts', 'test/unit/order-history.test.ts'],
  },
  {
    file: 'cli/order-history.ts',
    from: "  if (!entry)\n    return { batchId, events: undefined, reason: 'its ledger entry expired with the retention' };",
    to: '  if (!entry) return { batchId, events: [] };',
    breaks:
      'a batch whose ledger entry expired shown as counting no event: its claims vanish from the history',
    files: ['test/integration/order-history.test.ts', 'test/unit/order-history.test.ts'],
  },
  {
    file: 'cli/order-history.ts',
    from: 'if (r.eventId !== undefined && !r.events.some((e) => e.current))',
    to: 'if (false)',
    breaks: 'a history that does not show the state’s event not saying so',
    files: ['test/integration/order-history.test.ts', 'test/unit/order-history.test.ts'],
  },
  // Each function's wiring from its configuration.
  {
    file: 'adapters/wiring.ts',
    from: '        .sort()[0],',
    to: '        .sort()\n        .at(-1),',
    breaks:
      'the finalizer held back by the latest pending batch’s hour, not the earliest: an hour a pending batch still touches finalized',
    files: WIRING_TESTS,
  },
  {
    file: 'adapters/wiring.ts',
    from: "closeGraceMs: config.latePolicy === 'quarantine' ? QUARANTINE_CLOSE_GRACE_MS : 0,",
    to: 'closeGraceMs: 0,',
    breaks:
      'under quarantine, an hour closed while a batch read it open: its events applied to a closed hour',
    files: WIRING_TESTS,
  },
  {
    file: 'adapters/wiring.ts',
    from: '  ...(config.ledgerRetentionSeconds === undefined\n    ? {}\n    : { ledgerRetentionSeconds: config.ledgerRetentionSeconds }),\n',
    to: '',
    breaks: 'LEDGER_RETENTION_DAYS ignored: ledger entries kept forever',
    files: WIRING_TESTS,
  },
  // Fault injection: the faults tests and chaos use to prove the claims must be the faults they name.
  {
    file: 'harness/faults.ts',
    from: "} else if (rule && rule.kind !== 'crash-after' && rule.kind !== 'stale-read') {",
    to: "} else if (rule && rule.kind !== 'stale-read') {",
    breaks:
      'a crash after a call injected before it: no test or chaos schedule ever loses an answer to a call that took effect',
    files: FAULT_TESTS,
  },
  {
    file: 'harness/faults.ts',
    from: 'const answer = await next({ ...args, input: { ...args.input, Entries: rest } });',
    to: 'const answer = await next(args);',
    breaks: 'an entry reported failed that SQS did send: the failure chaos injects is not SQS’s',
    files: FAULT_TESTS,
  },
  {
    file: 'harness/faults.ts',
    from: 'read[table] = { ...request, Keys: keys.slice(0, half) };',
    to: 'read[table] = request;',
    breaks:
      'keys reported unprocessed that were read: the partial answer never leaves the caller short',
    files: FAULT_TESTS,
  },
  {
    file: 'harness/faults.ts',
    from: "return 'Bucket' in input ? { ...input, MaxKeys: 1 } : { ...input, Limit: 1 };",
    to: 'return input;',
    breaks: 'short pages never injected: no test follows a page’s continuation',
    files: FAULT_TESTS,
  },
  {
    file: 'harness/faults.ts',
    from: 'if (rule.seen >= (rule.nth ?? 1) && rule.fired < (rule.times ?? 1)) {',
    to: 'if (rule.seen > (rule.nth ?? 1) && rule.fired < (rule.times ?? 1)) {',
    breaks: 'each fault fired one call late: the call a test or a schedule aims at is spared',
    files: FAULT_TESTS,
  },
  {
    file: 'harness/faults.ts',
    from: '          await released(rule);\n        }\n        return output;',
    to: '        }\n        return output;',
    breaks:
      'stale reads answered at once: no test sees a read older than the writes made meanwhile',
    files: FAULT_TESTS,
  },
  {
    file: 'harness/faults.ts',
    from: 'if (Limit !== undefined || MaxKeys !== undefined) return input;',
    to: "if ('Limit' in input || 'MaxKeys' in input) return input;",
    breaks:
      'short pages never injected into the SDK’s paginators (they name `Limit: undefined`): the pending index always read whole',
    files: FAULT_TESTS,
  },
  // `onceflow replay archive`: what it reports of a selection it cannot send whole.
  {
    file: 'cli/commands/replay.ts',
    from: '      if (body === undefined) missing.push(key);\n      else found.push({ key, body });',
    to: '      if (body !== undefined) found.push({ key, body });',
    breaks: 'a pending batch never archived left out of the replay without a word',
    files: ['test/integration/replay-archive.test.ts', 'test/integration/restore.test.ts'],
  },
  {
    file: 'cli/commands/replay.ts',
    from: "refused.push({ key: found[r.line - 1]?.key ?? '', reason: r.reason });",
    to: "refused.push({ key: found[r.line]?.key ?? '', reason: r.reason });",
    breaks: 'a refused body reported under the next batch’s archive key',
    files: ['test/integration/replay-archive.test.ts', 'test/integration/restore.test.ts'],
  },
  {
    file: 'cli/commands/replay.ts',
    from: 'unknown: named.flatMap((n) => (n.entry ? [] : [n.batchId])),',
    to: 'unknown: [],',
    breaks: 'a batch id the ledger does not know dropped from the replay without a word',
    files: ['test/integration/replay-archive.test.ts', 'test/integration/restore.test.ts'],
  },
  {
    file: 'cli/commands/replay.ts',
    from: '...(onProgress ? { onProgress: (done) => onProgress(start + done, keys.length) } : {}),',
    to: '...(onProgress ? { onProgress: (done) => onProgress(done, keys.length) } : {}),',
    breaks: 'the replay’s progress starting again at each chunk',
    files: ['test/integration/replay-archive.test.ts', 'test/integration/restore.test.ts'],
  },
  {
    file: 'cli/commands/replay.ts',
    from: 'const chunkSize = options.chunkSize ?? 160;',
    to: 'const chunkSize = options.chunkSize ?? 1_000_000;',
    breaks: 'a replay of thousands of batches holding every body in memory at once',
    files: ['test/integration/replay-archive.test.ts', 'test/integration/restore.test.ts'],
  },
  // Lambda's asynchronous invocations on the local edge: retries, records, dead letters.
  {
    file: 'local/async-invocations.ts',
    from: 'const LAMBDA_RETRY_DELAYS_MS = [60_000, 120_000];',
    to: 'const LAMBDA_RETRY_DELAYS_MS = [60_000, 60_000];',
    breaks: 'a failed asynchronous invocation retried a minute after the first retry, not two',
    files: ASYNC_TESTS,
  },
  {
    file: 'local/async-invocations.ts',
    from: '          n <= config.maximumRetryAttempts &&\n',
    to: '',
    breaks:
      'an asynchronous invocation retried past its function’s MaximumRetryAttempts (the scheduled functions’ 0)',
    files: ASYNC_TESTS,
  },
  {
    file: 'local/async-invocations.ts',
    from: "? attempts > config.maximumRetryAttempts\n        ? 'RetriesExhausted'\n        : 'EventAgeExceeded'",
    to: "? 'RetriesExhausted'",
    breaks: 'an event too old to retry recorded as RetriesExhausted, not EventAgeExceeded',
    files: ASYNC_TESTS,
  },
  {
    file: 'local/async-invocations.ts',
    from: 'else settle(q, n - 1, { error });',
    to: 'else settle(q, n, { error });',
    breaks: 'a throttled try that never ran counted among the attempts',
    files: ASYNC_TESTS,
  },
  {
    file: 'local/async-invocations.ts',
    from: 'q.throttlePauseMs = Math.min(q.throttlePauseMs * 2, throttleBackoff.mostMs);',
    to: 'q.throttlePauseMs = Math.min(q.throttlePauseMs, throttleBackoff.mostMs);',
    breaks:
      'a throttled asynchronous invocation retried at the first pause forever, without backing off',
    files: ASYNC_TESTS,
  },
  {
    file: 'local/async-invocations.ts',
    from: '      deliver(deadLetterArn, {',
    to: '      deliver(undefined, {',
    breaks: 'a discarded event never sent to the function’s dead-letter queue',
    files: ASYNC_TESTS,
  },
  // EventBridge Scheduler's schedules on the local runtime.
  {
    file: 'local/scheduler.ts',
    from: 'const from = Math.max(afterMs, (s.startMs ?? Number.NEGATIVE_INFINITY) - 1);',
    to: 'const from = afterMs;',
    breaks: 'a schedule run before its StartDate',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/scheduler.ts',
    from: 'return due !== undefined && (s.endMs === undefined || due <= s.endMs) ? due : undefined;',
    to: 'return due;',
    breaks: 'a schedule run after its EndDate',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/scheduler.ts',
    from: '(instantsOfWall(minute, zone)[0] ?? minute - offsetAt(minute - 86_400_000, zone)) + seconds;',
    to: '(instantsOfWall(minute, zone)[0] ?? minute) + seconds;',
    breaks: 'a one-time schedule whose wall time the clocks skip run at that time read as UTC',
    files: SCHEDULE_TESTS,
  },
  {
    file: 'local/scheduler.ts',
    from: 'toISOString().slice(0, 19)}Z',
    to: 'toISOString()}',
    breaks: '<aws.scheduler.scheduled-time> given with milliseconds, not as Scheduler writes it',
    files: SCHEDULE_TESTS,
  },
  // `onceflow status`: the figures an operator reads first.
  {
    file: 'cli/commands/status.ts',
    from: '  const [oldest] = pending;',
    to: '  const oldest = pending.at(-1);',
    breaks: 'status naming the newest pending batch as the one in progress the longest',
    files: ['test/integration/ledger-status.test.ts', 'test/local/logs-api.test.ts'],
  },
  {
    file: 'cli/commands/status.ts',
    from: "Dimensions: [{ Name: 'service', Value: target.outputs.MetricsService ?? 'onceflow' }],",
    to: "Dimensions: [{ Name: 'service', Value: 'onceflow' }],",
    breaks: 'duplicates read from another stack’s metrics (or none) instead of this stack’s',
    files: ['test/integration/ledger-status.test.ts', 'test/local/logs-api.test.ts'],
  },
  {
    file: 'cli/commands/status.ts',
    from: 'ageSeconds: Math.max(0, Math.round((Date.now() - oldest.receivedAtMs) / 1000)),',
    to: 'ageSeconds: Math.max(0, Math.round(Date.now() - oldest.receivedAtMs)),',
    breaks: 'the oldest pending batch’s age given in milliseconds as seconds',
    files: ['test/integration/ledger-status.test.ts', 'test/local/logs-api.test.ts'],
  },
  // `onceflow check` on the stack's alarms.
  {
    file: 'cli/commands/check-alarms.ts',
    from: '      live.DatapointsToAlarm ?? live.EvaluationPeriods,\n      deployed.DatapointsToAlarm ?? deployed.EvaluationPeriods,',
    to: '      live.DatapointsToAlarm,\n      deployed.DatapointsToAlarm,',
    breaks:
      'an alarm’s DatapointsToAlarm set by hand to its EvaluationPeriods (the same alarm) reported as changed',
    files: ['test/unit/check-fixes.test.ts', 'test/unit/check.test.ts', 'test/cli/alarms.test.ts'],
  },
  {
    file: 'cli/commands/check-alarms.ts',
    from: "[...live.AlarmActions].sort().join(', ') || 'none',",
    to: "live.AlarmActions.join(', ') || 'none',",
    breaks: 'an alarm whose actions were listed in another order reported as changed by hand',
    files: ['test/unit/check-fixes.test.ts', 'test/unit/check.test.ts', 'test/cli/alarms.test.ts'],
  },
  {
    file: 'cli/commands/check-alarms.ts',
    from: "verdict: changed.length === 0 ? 'ok' : 'warn',",
    to: "verdict: 'ok',",
    breaks: 'an alarm changed by hand since the deploy passed as fine',
    files: ['test/unit/check-fixes.test.ts', 'test/unit/check.test.ts', 'test/cli/alarms.test.ts'],
  },
  {
    file: 'cli/commands/check-alarms.ts',
    from: '    return a.actions > 0\n      ? {',
    to: '    return a.actions >= 0\n      ? {',
    breaks:
      'an alarm with its actions off and none to take failed, where nobody was to be told anyway',
    files: ['test/unit/check-fixes.test.ts', 'test/unit/check.test.ts', 'test/cli/alarms.test.ts'],
  },
  {
    file: 'cli/commands/check-alarms.ts',
    from: '  if (fine.length < 2) return [...findings];',
    to: '  if (fine.length < 1) return [...findings];',
    breaks: 'one fine alarm folded into a line that counts it as `1 alarms`, its name lost',
    files: ['test/unit/check-fixes.test.ts', 'test/unit/check.test.ts', 'test/cli/alarms.test.ts'],
  },
  {
    file: 'cli/commands/check-alarms.ts',
    from: "const firing = fine.filter((f) => f.detail.startsWith('ALARM,')).length;",
    to: 'const firing = 0;',
    breaks: 'alarms firing folded away among the fine ones, unmentioned',
    files: ['test/unit/check-fixes.test.ts', 'test/unit/check.test.ts', 'test/cli/alarms.test.ts'],
  },
  // `onceflow hours`: each hour's state as operators read it.
  {
    file: 'cli/commands/hours.ts',
    from: 'return !interval || (ms >= interval.fromMs && ms < interval.toMs);',
    to: 'return !interval || (ms >= interval.fromMs && ms <= interval.toMs);',
    breaks: '`hours --to` taking in its end hour',
    files: ['test/integration/late-policy.test.ts', 'test/integration/finished-hours.test.ts'],
  },
  {
    file: 'cli/commands/hours.ts',
    from: "state: closed.has(aggregate.hour) ? 'closing' : stateOf(lifecycle),",
    to: 'state: stateOf(lifecycle),',
    breaks:
      'an hour the finalizer closed shown open: an operator not told its late events are refused',
    files: ['test/integration/late-policy.test.ts', 'test/integration/finished-hours.test.ts'],
  },
  {
    file: 'cli/commands/hours.ts',
    from: '      if (!rows.has(h.hour))\n',
    to: '',
    breaks: 'an hour with an object listed from its day index instead, as final with no events',
    files: ['test/integration/late-policy.test.ts', 'test/integration/finished-hours.test.ts'],
  },
  // The local provisioner: the template's table and queues as the emulators make them.
  {
    file: 'local/provision-table.ts',
    from: '    ...(gsis?.length ? { GlobalSecondaryIndexes: gsis } : {}),\n',
    to: '',
    breaks: 'the local table made without the template’s indexes',
    files: PROVISION_TESTS,
  },
  {
    file: 'local/provision-table.ts',
    from: '    indexes: [...(t.GlobalSecondaryIndexes ?? []), ...(t.LocalSecondaryIndexes ?? [])]\n      .map((i) => i.IndexName)\n      .sort(),',
    to: '    indexes: [],',
    breaks: 'kept data of a template without an index reused by one that needs it',
    files: PROVISION_TESTS,
  },
  {
    file: 'local/queue-attributes.ts',
    from: "  'DelaySeconds',\n",
    to: '',
    breaks: 'a queue’s delivery delay (the coalescing window) not given to the local queue',
    files: PROVISION_TESTS,
  },
  {
    file: 'local/queue-attributes.ts',
    from: "      attributes[key] = typeof value === 'string' ? value : JSON.stringify(value);",
    to: '      attributes[key] = String(value);',
    breaks: 'a redrive policy written as [object Object]: the local queue with no DLQ',
    files: PROVISION_TESTS,
  },
  {
    file: 'local/queue-attributes.ts',
    from: '    else others.push(key);',
    to: '    else continue;',
    breaks: 'a queue property the local runtime cannot apply dropped without a word',
    files: PROVISION_TESTS,
  },
  // `onceflow batch`: what became of one batch.
  {
    file: 'cli/commands/batch.ts',
    from: "  if (r.state === 'pending' && r.archived)\n",
    to: "  if (r.state === 'pending')\n",
    breaks: '`batch` telling an operator to resume a pending batch from an archive that is missing',
    files: ['test/integration/batch-report.test.ts', 'test/integration/late-policy.test.ts'],
  },
  {
    file: 'cli/commands/batch.ts',
    from: '  if (r.lateHours || (r.fates && r.fates.conflict > 0))\n',
    to: '  if (r.fates && r.fates.conflict > 0)\n',
    breaks: '`batch` not pointing to the rejects of a batch whose too-late parts were quarantined',
    files: ['test/integration/batch-report.test.ts', 'test/integration/late-policy.test.ts'],
  },
  {
    file: 'cli/commands/batch.ts',
    from: 'const lateHours = entry.lateHours && entry.lateHours.size > 0 ? [...entry.lateHours].sort() : [];',
    to: 'const lateHours: string[] = [];',
    breaks: '`batch` silent on the hours of a batch refused as too late',
    files: ['test/integration/batch-report.test.ts', 'test/integration/late-policy.test.ts'],
  },
  {
    file: 'cli/commands/batch.ts',
    from: 'committedParts: entry.doneParts.size,',
    to: 'committedParts: entry.parts,',
    breaks: '`batch` reporting every part of a pending batch committed',
    files: ['test/integration/batch-report.test.ts', 'test/integration/late-policy.test.ts'],
  },
  // Where the CLI connects: the stack, region and credentials an operator's command reaches.
  {
    file: 'cli/target.ts',
    from: "const stackName = options.stackName ?? 'onceflow-dev';",
    to: "const stackName = options.stackName ?? 'onceflow';",
    breaks:
      'the CLI going to a stack named onceflow when none is named, not the deployed onceflow-dev',
    files: ['test/unit/target.test.ts'],
  },
  {
    file: 'cli/target.ts',
    from: 'const envRegion = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;',
    to: 'const envRegion = env.AWS_DEFAULT_REGION ?? env.AWS_REGION;',
    breaks:
      'AWS_DEFAULT_REGION (the AWS CLI’s) taking precedence over AWS_REGION (the SDK’s): the CLI in another region than the SDK’s tools',
    files: ['test/unit/target.test.ts'],
  },
  {
    file: 'cli/target.ts',
    from: "const region = options.region ?? (options.profile ? undefined : (envRegion ?? 'us-east-1'));",
    to: "const region = options.region ?? envRegion ?? 'us-east-1';",
    breaks: 'a profile’s region overridden by the environment’s, or us-east-1',
    files: ['test/unit/target.test.ts'],
  },
  {
    file: 'cli/target.ts',
    from: "accessKeyId: env.AWS_ACCESS_KEY_ID ?? 'test',",
    to: "accessKeyId: 'test',",
    breaks: 'LocalStack reached with test credentials whatever the environment sets',
    files: ['test/unit/target.test.ts'],
  },
  {
    file: 'cli/target.ts',
    from: '    endpoint: options.endpoint ?? state.endpoint,\n',
    to: '    endpoint: state.endpoint,\n',
    breaks: '`--endpoint` ignored with --target local',
    files: ['test/unit/target.test.ts'],
  },
  {
    file: 'cli/target.ts',
    from: '  if (!running(state.pid))\n',
    to: '  if (false)\n',
    breaks: 'the CLI sending to a local stack that stopped, as if it ran',
    files: ['test/unit/target.test.ts'],
  },
  {
    file: 'cli/main.ts',
    from: "  if (named.length === 0 || args.includes('help')) return fullCli();",
    to: "  if (named.length >= 0 || args.includes('help')) return fullCli();",
    breaks: 'every CLI run loading all twenty-one command modules, whichever it runs',
    files: ['test/cli/cli.test.ts'],
  },
  {
    file: 'shared/day-index.ts',
    from: '      if (!mark && !before && !finalHours.includes(hour)) continue;',
    to: '      if (!mark && !finalHours.includes(hour)) continue;',
    breaks: 'after a restore older than its mark, a listed final hour dropped from its day’s index',
    files: ['test/integration/finished-hours.test.ts'],
  },
  {
    file: 'shared/day-index.ts',
    from: '      } else if (!object && (mark?.finalRevision === 0 || before?.revision === 0)) {',
    to: '      } else if (!object && mark?.finalRevision === 0) {',
    breaks: 'a listed final hour without events dropped from its day’s index once its mark is gone',
    files: ['test/integration/finished-hours.test.ts'],
  },
  {
    file: 'shared/day-index.ts',
    from: '  await publishDayIndex(date, ports, [entry.hour]);',
    to: '  await publishDayIndex(date, ports);',
    breaks: 'a final hour the index missed, its mark gone, never listed by a redelivery',
    files: ['test/integration/finished-hours.test.ts'],
  },
  {
    file: 'functions/aggregate-hours.ts',
    from: 'await publishDayIndex(parsed.hour.slice(0, 10), index, [parsed.hour]);',
    to: 'await publishDayIndex(parsed.hour.slice(0, 10), index);',
    breaks: 'an amended final hour the index missed, its mark gone, left unlisted',
    files: ['test/integration/finished-hours.test.ts'],
  },
  {
    file: 'local/eventual-reads.ts',
    from: '    if (answer && answer.at <= now - this.lagMs) {',
    to: '    if (false) {',
    breaks:
      'an eventually consistent read answered from a state older than the lag, after reads finished out of order',
    files: ['test/emulators/eventual-reads.test.ts'],
  },
  {
    file: 'local/snapshot.ts',
    from: '  await sleep(options.readLagMs ?? DEFAULT_READ_LAG_MS);',
    to: '',
    breaks:
      'a restore read through the replica’s answers from before it: a batch the copy shows pending never re-sent',
    files: ['test/cli/drill.test.ts'],
  },
  {
    file: 'cli/commands/drill.ts',
    from: '        await sleep(Math.max(0, drainedAtMs + readLagMs - Date.now()));',
    to: '',
    breaks: 'the drill failing on a batch it applied, read as pending from before the drain',
    files: ['test/cli/drill.test.ts'],
  },
  {
    file: 'local/dynamodb-local.ts',
    from: `      process.removeListener('exit', reap);
      removeScratch();`,
    to: "      process.removeListener('exit', reap);",
    breaks: 'a JVM killed under a running runtime leaves its native library in the temp dir',
    files: ['test/local/start.test.ts'],
  },
  {
    file: 'local/reaper.ts',
    from: '  if (scratch) rmSync(scratch, { recursive: true, force: true });',
    to: '',
    breaks: 'a runtime killed outright leaves its JVM’s temporary directory behind',
    files: ['test/local/start.test.ts'],
  },
  {
    file: 'local/start.ts',
    from: '      readLagMs: runtime.emulators.readLagMs,',
    to: '',
    breaks: 'local.json without the read lag: the drill waits the default second out',
    files: ['test/local/start.test.ts'],
  },
  {
    file: 'test/support/nothing-left-running.ts',
    from: '    .filter(([kind, n]) => n > (before.get(kind) ?? 0))',
    to: '    .filter(([, n]) => n > 0)',
    breaks: 'a test file failed for what an earlier file in its worker left open',
    files: ['test/unit/nothing-left-running.test.ts'],
  },
  {
    file: 'test/support/nothing-left-running.ts',
    from: '  await waitFor(() => leftOpen().length === 0, {',
    to: '  await waitFor(() => true, {',
    breaks: 'a test file that leaves a server or a timer running passing, its worker shared',
    files: ['test/unit/nothing-left-running.test.ts'],
  },
  {
    file: 'cli/commands/replay.ts',
    from: '      listed.has(key) ? Promise.resolve(true) : store.exists(key),',
    to: '      Promise.resolve(true),',
    breaks:
      'replay archive --dry-run listing a batch the ledger names but the archive lacks as one it would send',
    files: ['test/integration/replay-archive.test.ts'],
  },
  {
    file: 'cli/commands/replay.ts',
    from: "      ledger: entry ? batchState(entry) : 'absent',",
    to: "      ledger: entry ? 'applied' : 'absent',",
    breaks:
      'replay archive --dry-run calling a pending batch applied, which a restore drill must resume',
    files: ['test/integration/replay-archive.test.ts'],
  },
  {
    file: 'shared/keys.ts',
    from: '    return decodeURIComponent(m[1]);',
    to: '    return m[1];',
    breaks:
      'replay archive --dry-run looking up an encoded id (b%3A1) in the ledger instead of b:1',
    files: ['test/unit/archive-keys.test.ts'],
  },
  {
    file: 'shared/preflight.ts',
    from: "        kind: earlier.digest === digest ? 'repeat' : 'batch-conflict',",
    to: "        kind: 'repeat',",
    breaks: 'validate calling a reused batch id with other content a harmless repeat',
    files: ['test/integration/preflight.test.ts'],
  },
  {
    file: 'shared/preflight.ts',
    from: '      else if (claim.digest === content) repeatedEvents++;',
    to: '      else repeatedEvents++;',
    breaks: 'validate missing an event re-sent with other content, which the pipeline quarantines',
    files: ['test/integration/preflight.test.ts'],
  },
  {
    file: 'shared/preflight.ts',
    from: "  for (const [id, digest] of options.known ?? []) batches.set(id, { digest, first: 'stack' });",
    to: '',
    breaks: 'validate --against-stack passing a batch id the stack holds with other content',
    files: ['test/unit/preflight.test.ts'],
  },
  {
    file: 'infra/bundling/bundle-cache.ts',
    from: '  const unchanged = Object.entries(inputs).every(([path, hash]) => hashOf(path) === hash);',
    to: '  const unchanged = true;',
    breaks: 'a synthesis deploying the bundle of code changed since it was built',
    files: ['test/unit/bundle-cache.test.ts'],
  },
  {
    file: 'infra/bundling/bundle-cache.ts',
    from: "  if (!unchanged || named.join('\\n') !== sources.named.join('\\n')) return false;",
    to: '  if (!unchanged) return false;',
    breaks: 'a reused bundle whose source map names its sources from another place',
    files: ['test/unit/bundle-cache.test.ts'],
  },
  {
    file: 'infra/bundling/bundle-cache.ts',
    from: '  if (paths.some((path) => writtenMs(path) >= builtSinceMs - 1000)) return undefined;',
    to: '',
    breaks: 'a bundle kept with the hash of a file edited while esbuild read its earlier content',
    files: ['test/unit/bundle-cache.test.ts'],
  },
  {
    file: 'cdk.json',
    from: '"@aws-cdk/core:validateAgainstDefaultRules": true',
    to: '"@aws-cdk/core:validateAgainstDefaultRules": false',
    breaks: 'cdk synth writing a template CloudFormation refuses, its findings only warnings',
    files: ['test/infra/stack.test.ts'],
  },
];
