/**
 * Ingest's cold path with the TLS handshakes AWS adds, at several `WRITE_CONCURRENCY` values.
 * The deployed ingest opens a connection per order write in flight, and on AWS each is a TLS
 * handshake; the local edge speaks plain HTTP, so `measureColdStarts` leaves them out. Here the
 * same fresh processes run once against the edge and once through a TLS proxy in front of it,
 * each concurrency on each transport, alternating sample by sample.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provisionStackCopy } from '../../local/stack-copy.ts';
import {
  type ColdPath,
  DEFAULT_WARMUP_INVOCATIONS,
  type FreshRun,
  firstEvent,
  functionOf,
  medianColdPath,
  medianMs,
  runFresh,
} from './cold-start.ts';
import { unique } from './deliver.ts';
import { startTlsProxy } from './tls-proxy.ts';

export const TRANSPORTS = ['http', 'tls'] as const;
export type Transport = (typeof TRANSPORTS)[number];

export interface TlsColdStart extends ColdPath {
  readonly transport: Transport;
  readonly writeConcurrency: number;
  /** Median of init + first invocation (not the sum of the medians), ms. */
  readonly pathMs: number;
}

/** What the bench reports: the runs, or why they could not be made (no `openssl`). */
export type TlsColdStartReport =
  | { readonly runs: readonly TlsColdStart[] }
  | { readonly skipped: string };

export const measureIngestOverTls = async (options: {
  /** The local edge (plain HTTP). */
  readonly endpoint: string;
  /** A cloud assembly of the app (bundled SDK, as deployed). */
  readonly assemblyDir: string;
  readonly samples: number;
  readonly writeConcurrencies: readonly number[];
  /** Default {@link DEFAULT_WARMUP_INVOCATIONS}. */
  readonly warmupInvocations?: number;
  readonly onSample?: (done: number, total: number) => void;
}): Promise<TlsColdStart[]> => {
  const proxy = await startTlsProxy(options.endpoint);
  const work = mkdtempSync(join(tmpdir(), 'onceflow-tls-cold-'));
  try {
    const copy = await provisionStackCopy({
      assemblyDir: options.assemblyDir,
      endpoint: options.endpoint,
      name: unique('tls-cold'),
    });
    const fn = functionOf(copy, 'IngestFunctionName');
    const variants = TRANSPORTS.flatMap((transport) =>
      options.writeConcurrencies.map((writeConcurrency) => ({
        transport,
        writeConcurrency,
        environment: {
          ...copy.ingestEnvironment,
          WRITE_CONCURRENCY: String(writeConcurrency),
          ...(transport === 'tls'
            ? { AWS_ENDPOINT_URL: proxy.endpoint, NODE_EXTRA_CA_CERTS: proxy.caFile }
            : {}),
        },
        runs: [] as FreshRun[],
      })),
    );
    // Every invocation gets a batch of its own: a counter shared by all variants.
    let nextBatch = 0;
    let nextDir = 0;
    const sample = (v: (typeof variants)[number], warm: number) => {
      const dir = join(work, String(nextDir++));
      mkdirSync(dir);
      return runFresh({
        fn,
        environment: v.environment,
        event: firstEvent('IngestOrders', copy, nextBatch++),
        warmEvents: Array.from({ length: warm }, () =>
          firstEvent('IngestOrders', copy, nextBatch++),
        ),
        dir,
      });
    };
    // One discarded process per variant brings the emulators (and the proxy) to a steady state.
    for (const v of variants)
      await sample(v, options.warmupInvocations ?? DEFAULT_WARMUP_INVOCATIONS);
    const total = variants.length * options.samples;
    let done = 0;
    for (let i = 0; i < options.samples; i++) {
      for (const v of variants) {
        v.runs.push(await sample(v, 1));
        options.onSample?.(++done, total);
      }
    }
    return variants.map((v) => ({
      transport: v.transport,
      writeConcurrency: v.writeConcurrency,
      ...medianColdPath(v.runs),
      pathMs: medianMs(v.runs.map((r) => r.initMs + r.firstInvokeMs)),
    }));
  } finally {
    await proxy.stop();
    rmSync(work, { recursive: true, force: true });
  }
};
