/**
 * JSON a test reads, validated instead of cast: when a shape drifts, the test fails where it reads
 * the value, naming the field, rather than later on an `undefined`.
 */
import * as v from 'valibot';
import { ExpectedOrdersSchema } from '../../local/demo.ts';

export const parseJson = <const S extends v.GenericSchema>(
  schema: S,
  text: string,
): v.InferOutput<S> => v.parse(schema, JSON.parse(text));

/** Any JSON object: for tests that look at its fields one by one. */
export const JsonObjectSchema = v.record(v.string(), v.unknown());

/**
 * An order event as producers send it (the fields as text, before any validation): its id and
 * the fields an order shows, which are its newest event's.
 */
export const WireEventSchema = v.object({
  eventId: v.string(),
  ...ExpectedOrdersSchema.item.entries,
});

/** A batch body as producers send it; other fields are kept, so it can be rewritten and sent. */
export const WireBatchSchema = v.looseObject({
  batchId: v.string(),
  events: v.array(WireEventSchema),
});

export const parseBatch = (body: string) => parseJson(WireBatchSchema, body);
