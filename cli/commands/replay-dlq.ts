/** `onceflow replay dlq`: a DLQ moved back to its queue with message move tasks, or listed first. */
import {
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { type Command, Option } from 'commander';
import { queueDepth } from '../../adapters/sqs.ts';
import { counted } from '../../local/render.ts';
import { integer, json, progress, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';
import { dlqTable, peekDlq } from './dlq-peek.ts';

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type QueueName = 'orders' | 'aggregate';
const QUEUE_OUTPUTS: Record<QueueName, { source: string; dlq: string; dlqUrl: string }> = {
  orders: { source: 'OrdersQueueArn', dlq: 'OrdersDlqArn', dlqUrl: 'OrdersDlqUrl' },
  aggregate: { source: 'AggregateQueueArn', dlq: 'AggregateDlqArn', dlqUrl: 'AggregateDlqUrl' },
};

export interface DlqReplayOptions {
  /**
   * At most this many messages a second (SQS's `MaxNumberOfMessagesPerSecond`, up to 500), so
   * that a large DLQ redriven after an incident does not flood what the queue feeds. Default:
   * SQS's own pace, which starts slow and rises.
   */
  readonly rate?: number;
  /** How long to wait for the move, beyond the time the rate itself takes. Default 10 minutes. */
  readonly timeoutMs?: number;
  /** Messages moved so far, of those the current task set out to move. */
  readonly onProgress?: (moved: number, total: number) => void;
  /** What the replay waits for (in-flight messages to become visible again). */
  readonly onNote?: (text: string) => void;
}

/** SQS's bound on `MaxNumberOfMessagesPerSecond`. */
export const MAX_MOVE_RATE = 500;

export interface DlqReplay {
  readonly moved: number;
  readonly status: 'EMPTY' | 'COMPLETED';
  /** Messages still in the DLQ at the end, and why they could not be moved. */
  readonly remaining: {
    readonly visible: number;
    readonly inFlight: number;
    readonly delayed: number;
  };
  readonly reason?: string;
}

/**
 * Moves a DLQ's messages back to its queue with message move tasks, as many rounds as it takes.
 * A move task moves only visible messages: one that someone received (a peek with
 * receive-message) stays in flight until its visibility timeout ends, so the replay waits for
 * those, bounded by the DLQ's visibility timeout, and says how many it could not move and why.
 */
export const replayDlq = async (
  target: Target,
  queue: QueueName,
  io: DlqReplayOptions = {},
): Promise<DlqReplay> => {
  const names = QUEUE_OUTPUTS[queue];
  const dlqArn = target.output(names.dlq);
  const dlqUrl = target.output(names.dlqUrl);
  const sqs = target.clients.sqs;
  const visibilitySeconds = Number(
    (
      await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['VisibilityTimeout'] }),
      )
    ).Attributes?.VisibilityTimeout ?? 30,
  );
  let moved = 0;
  let depth = await queueDepth(sqs, dlqUrl);
  if (depth.visible + depth.inFlight + depth.delayed === 0)
    return { moved: 0, status: 'EMPTY', remaining: depth };
  // A capped rate makes the move itself take time: the wait grows with what there is to move.
  const paced = io.rate ? ((depth.visible + depth.inFlight + depth.delayed) / io.rate) * 1000 : 0;
  const timeoutMs = (io.timeoutMs ?? 600_000) + paced;
  const deadline = Date.now() + timeoutMs;
  // Bounded: a message received again and again (a consumer still polling the DLQ) is reported.
  for (let round = 0; round < 5; round++) {
    if (depth.visible === 0 && depth.inFlight + depth.delayed > 0) {
      const waitUntil = Math.min(deadline, Date.now() + (visibilitySeconds + 5) * 1000);
      io.onNote?.(
        `${depth.inFlight + depth.delayed} message(s) in flight or delayed in the ${queue} DLQ: waiting up to ${Math.ceil((waitUntil - Date.now()) / 1000)} s (its visibility timeout) for them to become visible`,
      );
      while (depth.visible === 0 && depth.inFlight + depth.delayed > 0 && Date.now() < waitUntil) {
        await delay(1000);
        depth = await queueDepth(sqs, dlqUrl);
      }
    }
    if (depth.visible === 0) break;
    await sqs.send(
      new StartMessageMoveTaskCommand({
        SourceArn: dlqArn,
        DestinationArn: target.output(names.source),
        ...(io.rate ? { MaxNumberOfMessagesPerSecond: io.rate } : {}),
      }),
    );
    moved += await awaitMoveTask(target, dlqArn, moved, deadline, timeoutMs, io);
    depth = await queueDepth(sqs, dlqUrl);
    if (depth.visible + depth.inFlight + depth.delayed === 0) break;
  }
  const left = depth.visible + depth.inFlight + depth.delayed;
  if (left === 0) return { moved, status: 'COMPLETED', remaining: depth };
  return {
    moved,
    status: 'COMPLETED',
    remaining: depth,
    reason:
      depth.inFlight > 0
        ? `${depth.inFlight} still in flight after the DLQ's visibility timeout (${visibilitySeconds} s): something keeps receiving them (a consumer or a peek); stop it and run replay dlq again`
        : `${left} arrived or stayed visible while moving; run replay dlq again`,
  };
};

/** Waits for the DLQ's current move task to end; returns how many it moved. */
const awaitMoveTask = async (
  target: Target,
  dlqArn: string,
  before: number,
  deadline: number,
  timeoutMs: number,
  io: DlqReplayOptions,
): Promise<number> => {
  for (;;) {
    const [task] =
      (
        await target.clients.sqs.send(
          new ListMessageMoveTasksCommand({ SourceArn: dlqArn, MaxResults: 1 }),
        )
      ).Results ?? [];
    const moved = Number(task?.ApproximateNumberOfMessagesMoved ?? 0);
    io.onProgress?.(
      before + moved,
      before + Number(task?.ApproximateNumberOfMessagesToMove ?? moved),
    );
    if (task?.Status === 'COMPLETED') return moved;
    if (task?.Status === 'FAILED' || task?.Status === 'CANCELLED') {
      throw new CliError(
        `the move task ended ${task.Status}${task.FailureReason ? `: ${task.FailureReason}` : ''} after moving ${before + moved}`,
      );
    }
    if (Date.now() > deadline)
      throw new CliError(
        `the move task is still running after ${Math.round(timeoutMs / 1000)} s (moved ${before + moved})`,
      );
    await delay(250);
  }
};

/** Adds `dlq` to the `replay` command. */
export const register = (replay: Command): void => {
  replay
    .command('dlq')
    .description('move the DLQ messages back to their queue (a message move task) and wait for it')
    .addOption(
      new Option('--queue <queue>', 'which DLQ').choices(['orders', 'aggregate']).default('orders'),
    )
    .option(
      '--dry-run',
      'move nothing: list the messages (left in the DLQ), the batch each carries and whether the ledger shows it applied',
    )
    .addOption(
      new Option('--limit <n>', 'with --dry-run: at most n messages')
        .argParser(integer('a count', 1, 10_000))
        .default(100),
    )
    .option('--json', 'with --dry-run: print JSON')
    .addOption(
      new Option(
        '--rate <n>',
        `at most n messages a second (1–${MAX_MOVE_RATE}), so that a large DLQ does not flood the functions it feeds; default: SQS's own pace`,
      )
        .argParser(integer('messages a second', 1, MAX_MOVE_RATE))
        .conflicts('dryRun'),
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  npx onceflow replay dlq --dry-run',
        '  npx onceflow replay dlq --queue orders && npx onceflow drain',
        '  npx onceflow replay dlq --rate 50',
      ].join('\n'),
    )
    .action(
      run(
        async (o: {
          queue: QueueName;
          dryRun?: boolean;
          limit: number;
          json?: boolean;
          rate?: number;
        }) => {
          const t = await target();
          if (o.dryRun) {
            const entries = await peekDlq(t, t.output(QUEUE_OUTPUTS[o.queue].dlqUrl), o.limit);
            if (o.json) json(entries);
            else if (entries.length === 0) console.log(`the ${o.queue} DLQ is empty`);
            else {
              console.log(dlqTable(entries));
              console.log(
                `${counted(entries.length, 'message')} read and left in the ${o.queue} DLQ; moved back, a batch the ledger shows applied changes nothing`,
              );
            }
            return 0;
          }
          if (o.rate) console.error(`moving at most ${counted(o.rate, 'message')} a second`);
          const bar = progress(`moving ${o.queue} DLQ`);
          const result = await replayDlq(t, o.queue, {
            ...(o.rate ? { rate: o.rate } : {}),
            onProgress: bar.update,
            onNote: (text) => console.error(text),
          }).finally(() => bar.stop());
          if (result.status === 'EMPTY') {
            console.log(`the ${o.queue} DLQ is empty`);
            return 0;
          }
          console.log(`moved ${counted(result.moved, 'message')} back to the ${o.queue} queue`);
          if (!result.reason) return 0;
          const { visible, inFlight, delayed } = result.remaining;
          console.error(
            `✘ ${visible + inFlight + delayed} message(s) remain in the ${o.queue} DLQ (${visible} visible, ${inFlight} in flight, ${delayed} delayed): ${result.reason}`,
          );
          return 1;
        },
      ),
    );
};
