/**
 * @module testing/eventually
 * Waits for a condition that another party (a socket, a queue) makes true "soon": polls every
 * few milliseconds and fails with the last value seen, never a fixed sleep.
 */

export async function eventually<T>(
  read: () => Promise<T> | T,
  accept: (value: T) => boolean,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
  let last: T;
  for (;;) {
    last = await read();
    if (accept(last)) {
      return last;
    }
    if (Date.now() > deadline) {
      throw new Error(`${options.what ?? "condition"} not met in time; last value: ${JSON.stringify(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
