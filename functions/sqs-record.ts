import type { SQSRecord } from 'aws-lambda';
import type { IncomingMessage } from '../shared/ingest.ts';

/** The parts of an SQS record the functions use. SentTimestamp dates a reject deterministically. */
export const toIncomingMessage = (record: SQSRecord): IncomingMessage => ({
  messageId: record.messageId,
  body: record.body,
  sentAtMs: Number(record.attributes.SentTimestamp) || 0,
});

/** Resolves a value or a factory once and keeps it (per container, like module scope). */
export const once = <T>(valueOrFactory: T | (() => T)): (() => T) => {
  let resolved: { value: T } | undefined;
  return () => {
    resolved ??= {
      value: typeof valueOrFactory === 'function' ? (valueOrFactory as () => T)() : valueOrFactory,
    };
    return resolved.value;
  };
};
