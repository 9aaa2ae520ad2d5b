/** What the pending-batch watcher reports: how many batches are in progress, and for how long. */

export interface PendingEntry {
  readonly batchId: string;
  readonly receivedAtMs: number;
}

export interface PendingReport {
  readonly pending: number;
  /** Age of the oldest batch in progress, in whole seconds; 0 when none is. */
  readonly oldestAgeSeconds: number;
  /** The oldest few, for the log line that names them. */
  readonly oldest: readonly PendingEntry[];
}

export const pendingReport = (
  entries: readonly PendingEntry[],
  nowMs: number,
  named = 5,
): PendingReport => {
  // Ties (batches received in the same millisecond) by batch id: the same report whatever order
  // the index returns them in.
  const sorted = [...entries].sort(
    (a, b) =>
      a.receivedAtMs - b.receivedAtMs ||
      (a.batchId < b.batchId ? -1 : a.batchId > b.batchId ? 1 : 0),
  );
  const first = sorted[0];
  return {
    pending: sorted.length,
    oldestAgeSeconds: first ? Math.max(0, Math.floor((nowMs - first.receivedAtMs) / 1000)) : 0,
    oldest: sorted.slice(0, named),
  };
};
