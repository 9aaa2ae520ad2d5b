/** The tables `npm run bench` prints, from the figures it writes to bench/results.json. */
import Table from 'cli-table3';
import { type FunctionColdStart, SDK_VARIANTS, type SdkVariant } from './cold-start.ts';
import type { FreshnessRun } from './freshness.ts';
import type { MemoryUse } from './memory.ts';
import { PRICES } from './prices.ts';
import type { TlsColdStartReport } from './tls-cold-start.ts';

type Row = {
  writeUnitsPerEvent: number;
  readUnitsPerEvent: number;
  eventsPerSecond: number;
  writeUnitsPerRedeliveredBatch: number;
  writeUnitsPerResentEvent: number;
  passes: Record<
    string,
    {
      exact: boolean;
      doubleCountedEvents: number;
      staleOrders: number;
      conflictsReported?: number;
      watermarkWriteUnitsPerEvent?: number;
      dollarsPerMillionEvents: {
        dynamodb: number;
        s3: number;
        sqs: number;
        lambda: number;
        total: number;
      };
    }
  >;
};

export interface Report {
  readonly results: Record<string, unknown>;
  /** Conflicting re-sent events in the re-batch pass (what every approach should report). */
  readonly conflicts: number;
  readonly coldStarts: Record<string, FunctionColdStart>;
  /** Ingest's cold path through a TLS proxy, or why it was not measured. */
  readonly overTls: TlsColdStartReport | undefined;
  readonly defaultSdk: SdkVariant;
  readonly memory: Record<string, MemoryUse>;
  readonly freshnessBefore: FreshnessRun | undefined;
  readonly freshness:
    | (FreshnessRun & { sustainedEventsPerSec: number; atSustained: FreshnessRun })
    | undefined;
}

export const printReport = (report: Report): void => {
  const rows = report.results as Record<string, Row>;
  const ratio = (a: number, b: number | undefined) => (b ? `${(a / b).toFixed(2)}×` : '—');
  const table = new Table({
    head: [
      '',
      'WCU/event',
      'RCU/event',
      'events/s',
      'WCU/redelivered batch',
      'WCU/re-sent event',
      'exact: clean / duplicates / crash / re-batch',
      'conflicts reported',
    ],
    style: { head: [], border: [], compact: true },
  });
  for (const [name, r] of Object.entries(rows)) {
    const passes = ['clean', 'duplicates', 'crash', 'rebatch'].map((p) => {
      const c = r.passes[p];
      return c?.exact
        ? 'yes'
        : `NO (${c?.doubleCountedEvents ?? 0} double-counted, ${c?.staleOrders ?? 0} stale orders)`;
    });
    const reported = r.passes.rebatch?.conflictsReported;
    table.push([
      name,
      String(r.writeUnitsPerEvent),
      String(r.readUnitsPerEvent),
      String(r.eventsPerSecond),
      String(r.writeUnitsPerRedeliveredBatch),
      String(r.writeUnitsPerResentEvent),
      passes.join(' / '),
      reported === undefined ? 'no' : `${reported} of ${report.conflicts}`,
    ]);
  }
  console.log(table.toString());
  const once = rows.onceflow;
  if (once) {
    console.log(
      `onceflow write units per event: ${ratio(once.writeUnitsPerEvent, rows.naive?.writeUnitsPerEvent)} naive, ` +
        `${ratio(once.writeUnitsPerEvent, rows.powertools?.writeUnitsPerEvent)} Powertools per message, ` +
        `${ratio(once.writeUnitsPerEvent, rows['powertools-per-event']?.writeUnitsPerEvent)} Powertools per event`,
    );
    const watermark = once.passes.clean?.watermarkWriteUnitsPerEvent;
    if (watermark !== undefined)
      console.log(`of which the watermark: ${watermark} write units per event (clean pass)`);
  }
  const fnTable = new Table({
    head: [
      'cold start (median)',
      'SDK',
      'bundle',
      'init',
      'first invocation',
      'init + first',
      'warm invocation',
      'cold overhead (init + first − warm)',
      'bundled / external (path, overhead)',
    ],
    style: { head: [], border: [], compact: true },
  });
  for (const [name, c] of Object.entries(report.coldStarts)) {
    for (const variant of SDK_VARIANTS) {
      const v = c[variant];
      fnTable.push([
        name,
        `${variant}${variant === report.defaultSdk ? ' (default)' : ''}`,
        `${(v.bundleBytes / 1024).toFixed(1)} KiB`,
        `${v.initMs} ms`,
        `${v.firstInvokeMs} ms`,
        `${(v.initMs + v.firstInvokeMs).toFixed(1)} ms`,
        `${v.warmInvokeMs} ms`,
        `${Math.max(0, v.initMs + v.firstInvokeMs - v.warmInvokeMs).toFixed(1)} ms`,
        variant === 'bundled'
          ? `${c.bundledOverExternal.toFixed(2)}×, ${c.bundledOverExternalColdOverhead.toFixed(2)}×`
          : '',
      ]);
    }
  }
  console.log(fnTable.toString());
  if (report.overTls && 'skipped' in report.overTls) {
    console.log(`ingest cold start through TLS: not measured (${report.overTls.skipped})`);
  } else if (report.overTls) {
    const tlsTable = new Table({
      head: [
        'ingest cold start (median)',
        'writes in flight',
        'init',
        'first invocation',
        'init + first',
        'warm invocation',
      ],
      style: { head: [], border: [], compact: true },
    });
    for (const r of report.overTls.runs)
      tlsTable.push([
        r.transport === 'tls' ? 'through TLS (as on AWS)' : 'plain HTTP (the local edge)',
        r.writeConcurrency,
        `${r.initMs} ms`,
        `${r.firstInvokeMs} ms`,
        `${r.pathMs} ms`,
        `${r.warmInvokeMs} ms`,
      ]);
    console.log(tlsTable.toString());
  }
  const memoryTable = new Table({
    head: ['memory (largest valid input)', 'configured', 'peak RSS', 'headroom'],
    style: { head: [], border: [], compact: true },
  });
  for (const [name, m] of Object.entries(report.memory))
    memoryTable.push([name, `${m.configuredMb} MB`, `${m.peakRssMb} MB`, `${m.headroom}×`]);
  console.log(memoryTable.toString());
  const freshTable = new Table({
    head: [
      'freshness: send → hour object',
      'coalescing',
      'rate',
      'p50',
      'p95',
      'p99',
      'PUTs / hour object / min',
      'PUTs / hour object / window (mean, max)',
      'sustained',
    ],
    style: { head: [], border: [], compact: true },
  });
  for (const [label, f] of [
    ['before (no coalescing)', report.freshnessBefore],
    ['now', report.freshness],
  ] as const) {
    if (!f) continue;
    freshTable.push([
      label,
      f.coalesceWindowSeconds ? `${f.coalesceWindowSeconds} s window` : 'none',
      `${f.rateEventsPerSec} events/s for ${f.seconds} s (after ${f.warmupSeconds} s of warm-up)`,
      `${f.p50Ms} ms`,
      `${f.p95Ms} ms`,
      `${f.p99Ms} ms`,
      String(f.putsPerHourObjectPerMinute),
      `${f.putsPerHourObjectPerWindow}, ${f.maxPutsPerHourObjectPerWindow} (${f.perWindowSeconds} s)`,
      'sustainedEventsPerSec' in f
        ? `${f.sustainedEventsPerSec} events/s for ${f.atSustained.seconds} s (p50 ${f.atSustained.p50Ms} / p95 ${f.atSustained.p95Ms} / p99 ${f.atSustained.p99Ms} ms)`
        : '',
    ]);
  }
  console.log(freshTable.toString());
  const dollarTable = new Table({
    head: [
      `USD per million events (prices of ${PRICES.readOn})`,
      'clean',
      'duplicates',
      'crash',
      're-batch',
      'clean: DynamoDB / S3 / SQS / Lambda',
    ],
    style: { head: [], border: [], compact: true },
  });
  for (const [name, r] of Object.entries(rows)) {
    const usd = (pass: string) =>
      `$${(r.passes[pass]?.dollarsPerMillionEvents.total ?? 0).toFixed(2)}`;
    const clean = r.passes.clean?.dollarsPerMillionEvents;
    dollarTable.push([
      name,
      usd('clean'),
      usd('duplicates'),
      usd('crash'),
      usd('rebatch'),
      clean
        ? [clean.dynamodb, clean.s3, clean.sqs, clean.lambda]
            .map((d) => `$${d.toFixed(2)}`)
            .join(' / ')
        : '',
    ]);
  }
  console.log(dollarTable.toString());
};
