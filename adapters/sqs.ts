import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { HourNotifier } from '../shared/ingest.ts';

const SQS_BATCH = 10;

/** Asks the aggregator to recompute hours: one message per hour, duplicates are harmless. */
export class SqsHourNotifier implements HourNotifier {
  readonly #client: SQSClient;
  readonly #queueUrl: string;

  constructor(client: SQSClient, queueUrl: string) {
    this.#client = client;
    this.#queueUrl = queueUrl;
  }

  async notifyHours(hours: readonly string[]): Promise<void> {
    for (let i = 0; i < hours.length; i += SQS_BATCH) {
      const chunk = hours.slice(i, i + SQS_BATCH);
      const out = await this.#client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.#queueUrl,
          Entries: chunk.map((hour, j) => ({ Id: `h${j}`, MessageBody: JSON.stringify({ hour }) })),
        }),
      );
      if (out.Failed?.length) {
        // The batch is already committed; failing the message makes SQS redeliver it, and the
        // redelivery (a duplicate for the ledger) notifies again.
        throw new Error(
          `could not notify hours: ${out.Failed.map((f) => `${f.Code} ${f.Message ?? ''}`).join('; ')}`,
        );
      }
    }
  }
}
