/**
 * @module jobs/in-process-job-events
 * The job-events port within one server process: listeners are called synchronously by emit.
 * Created once per server (main and the test server) and carried in ServerDeps, never at module
 * load, so two servers in one process (tests) never hear each other's jobs.
 */
import type { JobEventListener, JobEventName, JobEvents } from "./job-events.js";

export function createInProcessJobEvents(): JobEvents {
  const listeners = new Map<JobEventName, Set<(event: never) => void>>();
  return {
    on(name, listener) {
      const set = listeners.get(name) ?? new Set();
      listeners.set(name, set);
      set.add(listener);
      return () => {
        set.delete(listener);
      };
    },
    emit(name, event) {
      const errors: unknown[] = [];
      for (const listener of [...(listeners.get(name) ?? [])]) {
        try {
          (listener as JobEventListener<typeof name>)(event);
        } catch (error) {
          errors.push(error);
        }
      }
      return errors;
    },
    listenerCount(name) {
      return listeners.get(name)?.size ?? 0;
    },
  };
}
