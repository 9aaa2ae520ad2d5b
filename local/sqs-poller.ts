/**
 * What Lambda's SQS event source mapping does, locally: long polling, batch size and batching
 * window, at most `maxConcurrency` invocations at once (one environment each), the queue's own
 * visibility timeout, and partial batch responses read exactly as Lambda reads them. Failed
 * messages simply stay on the queue; the queue's redrive policy moves them to the DLQ after
 * `maxReceiveCount` receives.
 *
 * The one delivery loop of the project: the local runtime polls in the background with it
 * (`start`/`stop`), and tests, chaos and the bench run it in the foreground until the queue is
 * drained (`drain`), with their handlers and faults behind `invoke`.
 */
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { deleteReceived, queueDepth, setVisibility } from '../adapters/sqs.ts';
import { bodyPasses } from './event-filter.ts';
import type {
  DrainOptions,
  MappingSettings,
  MappingState,
  PollerOptions,
} from './poller-options.ts';
import { eventsWithinPayload, failedIdsOf, toSqsEvent, toSqsRecord } from './sqs-event.ts';

export type {
  BatchReport,
  DrainOptions,
  MappingSettings,
  MappingState,
  PollerOptions,
} from './poller-options.ts';

const handlesOf = (messages: readonly Message[]) => messages.map((m) => m.ReceiptHandle ?? '');

/** A receive waits at most this long for a first message (SQS's maximum). */
const LONG_POLL_SECONDS = 20;
/** A drain's pauses between receives while messages are delayed or in flight. */
const DRAIN_PAUSE_MS = { first: 10, most: 200 } as const;

export class SqsPoller {
  readonly #o: PollerOptions;
  #running = false;
  #draining = false;
  /** While paused, resolved by resume(): the loops wait on it. */
  #resumed: Promise<void> | undefined;
  #resume: (() => void) | undefined;
  readonly #held: Message[] = [];
  #loops: Promise<void>[] = [];
  /** Slots whose background loop runs. */
  readonly #slots = new Set<number>();
  #settings: MappingSettings;
  /** Batches being invoked and settled by the background loops. */
  #processing = 0;
  #disabledAt: number | undefined;
  readonly #aborts = new Set<AbortController>();
  /** Invocations running now, and the most seen at once. */
  inFlight = 0;
  peakInFlight = 0;
  invocations = 0;

  constructor(options: PollerOptions) {
    this.#o = options;
    const { batchSize, batchingWindowSeconds, maxConcurrency, reportBatchItemFailures, filters } =
      options;
    this.#settings = {
      batchSize,
      batchingWindowSeconds,
      maxConcurrency,
      reportBatchItemFailures,
      filters: filters ?? [],
    };
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#startSlots();
  }

  /** What it polls with now. */
  get settings(): MappingSettings {
    return { ...this.#settings };
  }

  /**
   * New settings, as `UpdateEventSourceMapping` gives them: the next receive takes them; a batch
   * being gathered keeps its own. A lower concurrency retires slots as their batch ends.
   */
  configure(update: Partial<MappingSettings>): void {
    this.#settings = { ...this.#settings, ...update };
    if (this.#running && !this.#draining) this.#startSlots();
  }

  #startSlots(): void {
    for (let slot = 0; slot < this.#settings.maxConcurrency; slot++) {
      if (this.#slots.has(slot)) continue;
      this.#slots.add(slot);
      this.#loops.push(this.#loop(slot));
    }
  }

  /**
   * Runs the mapping in the foreground until the queue holds nothing (visible, in flight or
   * delayed) and no invocation runs, then stops. Receives do not long-poll here, so an empty
   * queue is noticed at once; failed messages come back after `retryDelaySeconds` (set it to 0
   * for tests). Resolves with the number of invocations.
   */
  async drain(options: DrainOptions = {}): Promise<{ invocations: number }> {
    if (this.#running) throw new Error('the poller already runs in the background');
    const before = this.invocations;
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    this.#running = true;
    this.#draining = true;
    let idle = 0;
    const settled = async () => {
      if (this.inFlight > 0) return false;
      const depth = await queueDepth(this.#o.sqs, this.#o.queueUrl);
      return depth.visible + depth.inFlight + depth.delayed === 0 && this.inFlight === 0;
    };
    const loop = async (slot: number) => {
      let pause: number = DRAIN_PAUSE_MS.first;
      while (this.#running) {
        if (Date.now() > deadline) throw new Error(`${this.#o.queueUrl} did not drain in time`);
        const messages = await this.#receive(this.#batchSize(), 0);
        if (messages.length > 0) {
          idle = 0;
          pause = DRAIN_PAUSE_MS.first;
          // A failed delete leaves the messages to reappear: at-least-once, as on AWS.
          await this.#process(slot, messages).catch(() => undefined);
        } else if (await settled()) {
          // Approximate counts: two readings in a row, from any slot, before stopping.
          if (++idle >= 2) this.#running = false;
        } else {
          // Messages delayed or in flight: ask again less and less often, not every few
          // milliseconds (that busy loop took the emulators' CPU from the work itself). Not a
          // long poll: one abandoned at the end would take the next drain's first messages.
          await new Promise((r) => setTimeout(r, pause));
          pause = Math.min(pause * 2, DRAIN_PAUSE_MS.most);
        }
      }
    };
    try {
      await Promise.all(
        Array.from({ length: this.#settings.maxConcurrency }, (_, slot) => loop(slot)),
      );
    } finally {
      this.#running = false;
      this.#draining = false;
    }
    return { invocations: this.invocations - before };
  }

  #batchSize(): number {
    return this.#o.receiveSize?.() ?? this.#settings.batchSize;
  }

  /** Whether the mapping is paused (disabled, as `UpdateEventSourceMapping` does on AWS). */
  get paused(): boolean {
    return this.#resumed !== undefined;
  }

  /** Whether it polls, in the background or draining: false once stop() has begun. */
  get running(): boolean {
    return this.#running;
  }

  /**
   * When the last batch running at a pause finished (Date.now()), which is when the mapping
   * turned Disabled; undefined until a pause has waited for one.
   */
  get disabledAt(): number | undefined {
    return this.#disabledAt;
  }

  /** Disabled once paused and no batch received before the pause is still running. */
  get state(): MappingState {
    if (!this.paused) return 'Enabled';
    return this.#processing > 0 ? 'Disabling' : 'Disabled';
  }

  /**
   * Stops invoking: batches already running finish (the state reads Disabling until they have),
   * receives already waiting finish, and what they bring back is held back (see #release) rather
   * than processed. Unlike stop(), no receive is abandoned, so no message goes to a caller that
   * no longer listens.
   */
  pause(): void {
    if (this.#resumed) return;
    this.#resumed = new Promise((resolve) => {
      this.#resume = resolve;
    });
  }

  resume(): void {
    this.#resume?.();
    this.#resumed = undefined;
    this.#resume = undefined;
    // What was held back while pausing is visible again at once.
    const held = this.#held.splice(0);
    void this.#setVisibility(held, 0).catch(() => undefined);
  }

  /** Stops polling and waits for running invocations to finish. */
  async stop(): Promise<void> {
    this.resume();
    this.#running = false;
    for (const abort of this.#aborts) abort.abort();
    await Promise.allSettled(this.#loops);
  }

  async #receive(max: number, waitSeconds: number): Promise<Message[]> {
    const abort = new AbortController();
    this.#aborts.add(abort);
    try {
      const out = await this.#o.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: this.#o.queueUrl,
          MaxNumberOfMessages: Math.min(10, max),
          WaitTimeSeconds: waitSeconds,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
        { abortSignal: abort.signal },
      );
      return out.Messages ?? [];
    } catch (error) {
      if (!this.#running && !this.#draining) return [];
      throw error;
    } finally {
      this.#aborts.delete(abort);
    }
  }

  /** Long-polls for a first message, then fills the batch until it is full or the window closes. */
  async #gather(): Promise<{ batch: Message[]; receivedAtMs: number }> {
    const batch = await this.#receive(this.#batchSize(), LONG_POLL_SECONDS);
    const receivedAtMs = Date.now();
    const { batchSize, batchingWindowSeconds } = this.#settings;
    if (batch.length === 0 || batchingWindowSeconds === 0) return { batch, receivedAtMs };
    const deadline = Date.now() + batchingWindowSeconds * 1000;
    while (this.#running && batch.length < batchSize && Date.now() < deadline) {
      const wait = Math.max(0, Math.min(20, Math.floor((deadline - Date.now()) / 1000)));
      batch.push(...(await this.#receive(batchSize - batch.length, wait)));
      if (wait === 0) break;
    }
    return { batch, receivedAtMs };
  }

  async #loop(slot: number): Promise<void> {
    try {
      await this.#poll(slot);
    } finally {
      this.#slots.delete(slot);
    }
  }

  async #poll(slot: number): Promise<void> {
    while (this.#running && slot < this.#settings.maxConcurrency) {
      if (this.#resumed) {
        await this.#resumed;
        continue;
      }
      let messages: Message[];
      let receivedAtMs: number;
      try {
        ({ batch: messages, receivedAtMs } = await this.#gather());
      } catch {
        // Like Lambda's pollers: a failed receive is retried, never fatal.
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (messages.length === 0) continue;
      if (this.#resumed) {
        await this.#release(messages);
        continue;
      }
      this.#processing++;
      try {
        await this.#process(slot, messages, receivedAtMs);
      } catch {
        // A failed delete leaves the messages to reappear: at-least-once, as on AWS.
      } finally {
        this.#processing--;
        if (this.#processing === 0 && this.paused) this.#disabledAt = Date.now();
      }
    }
  }

  /**
   * Messages received while pausing are held back: hidden for the longest receive wait, so that
   * the other slots' receives, still waiting when the pause began, do not pass them around (each
   * pass would count as a receive towards the DLQ), and made visible again on resume.
   */
  async #release(messages: Message[]): Promise<void> {
    this.#held.push(...messages);
    await this.#setVisibility(messages, LONG_POLL_SECONDS);
  }

  #setVisibility(messages: readonly Message[], seconds: number): Promise<void> {
    return setVisibility(this.#o.sqs, this.#o.queueUrl, handlesOf(messages), seconds);
  }

  /**
   * One received batch: invoked as one event, or as several in turn when it exceeds Lambda's
   * payload limit. On a FIFO queue, a message whose group failed in an earlier part is returned
   * uninvoked, so that none runs ahead of a message of its group that failed.
   */
  async #process(slot: number, received: Message[], receivedAtMs = Date.now()): Promise<void> {
    const filters = this.#settings.filters ?? [];
    const messages = received.filter((m) => bodyPasses(filters, m.Body ?? ''));
    await this.#delete(received.filter((m) => !messages.includes(m)));
    if (messages.length === 0) return;
    const byId = new Map(messages.map((m) => [m.MessageId ?? '', m]));
    const records = messages.map((m) => toSqsRecord(m, this.#o.queueArn, this.#o.region));
    const groupOf = (r: SQSRecord) => r.attributes.MessageGroupId;
    const failedGroups = new Set<string>();
    for (const { Records: part } of eventsWithinPayload(records)) {
      const held = part.filter((r) => failedGroups.has(groupOf(r) ?? ''));
      const invoked = part.filter((r) => !held.includes(r));
      const messagesOf = (rs: SQSRecord[]) => rs.flatMap((r) => byId.get(r.messageId) ?? []);
      if (held.length > 0)
        await this.#settle(messagesOf(held), {
          failed: held.map((r) => r.messageId),
          error: 'not invoked: an earlier message of its group failed in the same receive',
        });
      if (invoked.length === 0) continue;
      const outcome = await this.#invoke(
        slot,
        toSqsEvent(invoked),
        messagesOf(invoked),
        receivedAtMs,
      );
      await this.#settle(messagesOf(invoked), outcome);
      for (const r of invoked) {
        const group = groupOf(r);
        if (group !== undefined && outcome.failed.includes(r.messageId)) failedGroups.add(group);
      }
    }
  }

  async #invoke(
    slot: number,
    event: ReturnType<typeof toSqsEvent>,
    messages: readonly Message[],
    receivedAtMs: number,
  ): Promise<{ failed: string[]; error?: string }> {
    const ids = messages.map((m) => m.MessageId ?? '');
    this.inFlight++;
    this.invocations++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    try {
      const response = await this.#o.invoke(slot, event, { receivedAtMs });
      // Without ReportBatchItemFailures Lambda ignores what the function returns: a batch that
      // did not throw succeeded whole, and its messages are deleted.
      if (!this.#settings.reportBatchItemFailures) return { failed: [] };
      const result = failedIdsOf(response, ids);
      return {
        failed: result.ids,
        ...(result.invalid === undefined ? {} : { error: result.invalid }),
      };
    } catch (e) {
      return { failed: ids, error: (e as Error).message };
    } finally {
      this.inFlight--;
    }
  }

  #delete(messages: readonly Message[]): Promise<void> {
    return deleteReceived(this.#o.sqs, this.#o.queueUrl, handlesOf(messages));
  }

  /** Deletes what succeeded, returns what failed, and reports the invocation. */
  async #settle(
    messages: readonly Message[],
    { failed, error }: { failed: readonly string[]; error?: string },
  ): Promise<void> {
    const done = messages.filter((m) => !failed.includes(m.MessageId ?? ''));
    const retry = messages.filter((m) => failed.includes(m.MessageId ?? ''));
    await this.#delete(done);
    const delay = this.#o.retryDelaySeconds;
    if (delay !== undefined) await this.#setVisibility(retry, delay);
    await this.#o.onBatch?.({
      messageIds: messages.map((m) => m.MessageId ?? ''),
      failedIds: failed,
      ...(error === undefined ? {} : { error }),
    });
  }
}
