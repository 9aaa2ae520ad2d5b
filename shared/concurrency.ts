/** Runs `task` over `items` with at most `limit` in flight; rejects with the first failure. */
export const mapLimit = async <T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> => {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
};

/**
 * Runs tasks that share a key one after the other, tasks of different keys concurrently. A
 * failed task does not block the next of its key.
 */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<R>(key: string, task: () => Promise<R>): Promise<R> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    // Forget the key once nothing is queued behind this task, so the map stays small.
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
