/**
 * @module testing/eventually
 * Waits for a condition that another party (a socket, a queue) makes true "soon": polls every
 * few milliseconds and fails with the last value seen, never a fixed sleep.
 */
import { sleep, systemClock, systemTimers } from "@fleetback/protocol";

export async function eventually<T>(
  read: () => Promise<T> | T,
  accept: (value: T) => boolean,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = systemClock.now().getTime() + (options.timeoutMs ?? 5_000);
  let last: T;
  for (;;) {
    last = await read();
    if (accept(last)) {
      return last;
    }
    if (systemClock.now().getTime() > deadline) {
      throw new Error(`${options.what ?? "condition"} not met in time; last value: ${JSON.stringify(last)}`);
    }
    await sleep(systemTimers, 5);
  }
}
