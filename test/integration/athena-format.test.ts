import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { loadStack } from '../../local/template.ts';
import { AGGREGATE_PREFIX, hourOfObjectKey } from '../../shared/keys.ts';
import { JsonObjectSchema, parseJson } from '../support/json.ts';
import { createPipeline } from '../support/pipeline.ts';

/** A Hive type, as the Glue table declares its columns. */
type HiveType =
  | { kind: 'primitive'; name: string }
  | { kind: 'map'; key: HiveType; value: HiveType }
  | { kind: 'struct'; fields: Map<string, HiveType> };

/** Parses `map<string,struct<events:bigint,amounts:map<string,string>>>` and the like. */
const parseHiveType = (text: string): HiveType => {
  let i = 0;
  const name = () => {
    const m = /^[a-z_][a-z0-9_]*/.exec(text.slice(i));
    if (!m) throw new Error(`bad Hive type at ${i}: ${text}`);
    i += m[0].length;
    return m[0];
  };
  const expect = (c: string) => {
    if (text[i] !== c) throw new Error(`expected ${c} at ${i}: ${text}`);
    i++;
  };
  const type = (): HiveType => {
    const n = name();
    if (n === 'map') {
      expect('<');
      const key = type();
      expect(',');
      const value = type();
      expect('>');
      return { kind: 'map', key, value };
    }
    if (n === 'struct') {
      expect('<');
      const fields = new Map<string, HiveType>();
      do {
        if (text[i] === ',') i++;
        const field = name();
        expect(':');
        fields.set(field, type());
      } while (text[i] === ',');
      expect('>');
      return { kind: 'struct', fields };
    }
    return { kind: 'primitive', name: n };
  };
  const parsed = type();
  if (i !== text.length) throw new Error(`trailing text in Hive type: ${text}`);
  return parsed;
};

/** The mismatches of a JSON value against a Hive type (keys matched without case, as the SerDe does). */
const mismatches = (value: unknown, type: HiveType, path: string): string[] => {
  if (value === null || value === undefined) return [];
  if (type.kind === 'primitive') {
    const ok =
      type.name === 'string'
        ? typeof value === 'string'
        : type.name === 'boolean'
          ? typeof value === 'boolean'
          : type.name === 'bigint'
            ? Number.isSafeInteger(value)
            : type.name === 'int'
              ? Number.isInteger(value) && Math.abs(value as number) < 2 ** 31
              : false;
    return ok ? [] : [`${path}: ${JSON.stringify(value)} is not ${type.name}`];
  }
  if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: not an object`];
  const entries = Object.entries(value as Record<string, unknown>);
  if (type.kind === 'map')
    return entries.flatMap(([k, v]) => [
      ...mismatches(k, type.key, `${path} key`),
      ...mismatches(v, type.value, `${path}.${k}`),
    ]);
  return entries.flatMap(([k, v]) => {
    const field = type.fields.get(k.toLowerCase());
    return field ? mismatches(v, field, `${path}.${k}`) : [`${path}.${k}: no such field`];
  });
};

const batch = (events: [time: string, status: string, amount: string, currency: string][]) => {
  const batchId = `b-${randomUUID()}`;
  return JSON.stringify({
    batchId,
    events: events.map(([time, status, amount, currency], i) => ({
      eventId: `${batchId}-${i}`,
      orderId: `o-${batchId}-${i}`,
      customerId: 'c-1',
      status,
      amount,
      currency,
      eventTime: `2026-10-01T${time}:00Z`,
    })),
  });
};

describe('the hour objects as Athena reads them', () => {
  it('holds one JSON document per object, on one line, whose every field has its column’s type, open, final and amended alike', async () => {
    const { template } = loadStack(inject('assembly').assemblyDir);
    const table = Object.values(template.Resources).find((r) => r.Type === 'AWS::Glue::Table');
    const input = table?.Properties?.TableInput as {
      StorageDescriptor: { Columns: { Name: string; Type: string }[] };
      PartitionKeys: { Name: string }[];
    };
    const columns = new Map(
      input.StorageDescriptor.Columns.map((c) => [c.Name, parseHiveType(c.Type)]),
    );
    expect(input.PartitionKeys.map((k) => k.Name)).toEqual(['date']);

    const p = await createPipeline();
    await p.deliverUntilDone([
      batch([
        ['09:10', 'placed', '25.50', 'USD'],
        ['09:20', 'paid', '1500', 'JPY'],
        ['09:30', 'cancelled', '0.125', 'BHD'],
        ['10:05', 'placed', '2.00', 'USD'],
      ]),
      batch([['13:40', 'placed', '3.00', 'EUR']]),
    ]);
    await p.drainAggregates();
    await p.finalize();
    await p.deliverUntilDone([batch([['09:50', 'shipped', '7.00', 'USD']])]);
    await p.drainAggregates();

    const keys = (await p.listKeys(AGGREGATE_PREFIX)).filter((k) => hourOfObjectKey(k));
    expect(keys.length).toBeGreaterThanOrEqual(2);
    const seen = new Set<string>();
    for (const key of keys) {
      const text = (await p.readText(key)) ?? '';
      // The JSON SerDe reads one record per line: the object is exactly one line.
      expect(text.split('\n')).toHaveLength(1);
      const record = parseJson(JsonObjectSchema, text);
      expect(Object.keys(record).length).toBeGreaterThan(0);
      for (const [field, value] of Object.entries(record)) {
        const column = columns.get(field.toLowerCase());
        expect(column, `${key}: ${field} has no column`).toBeDefined();
        if (column) expect(mismatches(value, column, field)).toEqual([]);
      }
      // The partition the path template gives is the hour's date.
      expect(key).toContain(`date=${String(record.hour).slice(0, 10)}/`);
      seen.add(record.final ? (record.amendments ? 'amended' : 'final') : 'open');
    }
    // 09:00 amended by its late event, 10:00 final, 13:00 open (the watermark is 11:30).
    expect([...seen].sort()).toEqual(['amended', 'final', 'open']);
  });
});
