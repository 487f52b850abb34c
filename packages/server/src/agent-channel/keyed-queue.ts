/**
 * @module agent-channel/keyed-queue
 * Runs tasks one at a time per key (a host id), in the order they were queued. Everything the
 * channel does for one host (its hello, each of its messages, the offline mark of a closed
 * socket) goes through the host's queue, so that a heartbeat's reconciliation can never overtake
 * the job.finished sent before it, and a closing socket's "offline" can never land after the
 * "online" of the connection that replaced it.
 */

export interface KeyedQueue {
  /** Queues `task` behind every earlier task of `key`; resolves or rejects with its outcome. */
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** Resolves once every task queued so far, for every key, has settled. */
  idle(): Promise<void>;
}

export function createKeyedQueue(): KeyedQueue {
  const tails = new Map<string, Promise<unknown>>();

  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve();
      const result = previous.then(task, task);
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      // Forget an idle key, so the map only holds hosts with work in flight.
      void tail.then(() => {
        if (tails.get(key) === tail) {
          tails.delete(key);
        }
      });
      return result;
    },
    async idle() {
      while (tails.size > 0) {
        await Promise.all(tails.values());
      }
    },
  };
}
