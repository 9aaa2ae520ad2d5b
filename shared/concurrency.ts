/**
 * Runs `task` over `items` with at most `limit` in flight. After a failure no further item
 * starts, and it rejects with the first failure once the tasks in flight have settled: nothing
 * it started is still running when it returns.
 */
export const mapLimit = async <T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> => {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length && !failure) {
      const index = next++;
      try {
        results[index] = await task(items[index] as T);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
  return results;
};

/**
 * Awaits every task, then rejects with the first failure in the order given, if any. Unlike
 * `Promise.all`, nothing is left running when it rejects.
 */
export const allSettledOrThrow = async <T extends readonly unknown[]>(
  ...tasks: { readonly [K in keyof T]: Promise<T[K]> }
): Promise<T> => {
  const settled = await Promise.allSettled(tasks);
  const values: unknown[] = [];
  for (const outcome of settled) {
    if (outcome.status === 'rejected') throw outcome.reason;
    values.push(outcome.value);
  }
  return values as unknown as T;
};

/**
 * Runs tasks that share a key one after the other, tasks of different keys concurrently. A
 * failed task does not block the next of its key.
 */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<R>(key: string, task: () => Promise<R>): Promise<R> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    // The tail never rejects, so a failed task does not block the next of its key.
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    // Forget the key once nothing is queued behind this task, so the map stays small.
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
