/**
 * @module argon2-pool
 * Runs argon2id in a small pool of worker threads. One hash at our parameters is a second or more of
 * WebAssembly that never yields, so on the main thread every login would stall health checks, agent
 * sockets and all other requests; in a worker it only costs that worker.
 *
 * The pool is small on purpose: each worker holds up to one hash's memory (64 MiB at our
 * parameters), so concurrent logins queue instead of multiplying memory. Workers start on first
 * use, are referenced only while they hash (an idle pool never keeps the process alive), and a
 * worker that dies fails its hash and is replaced by the next one.
 *
 * A worker idle for `idleMs` is stopped: WebAssembly memory is never given back while its
 * instance lives, so one login used to leave the server 64 MiB (and a worker's isolate) larger for
 * good, up to four times over (issue 19, B2 and B8). Starting a worker again costs tens of
 * milliseconds against the second a hash takes.
 */
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";

export interface Argon2Input {
  password: string;
  salt: Uint8Array;
  memorySize: number;
  iterations: number;
  parallelism: number;
  hashLength: number;
}

// An eval'd CommonJS script that loads hash-wasm by absolute path: the same code then runs from the
// built package and from TypeScript sources under a test runner (a worker cannot load a .ts file).
// Errors carry only the library's message: never the password.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { argon2id } = require(workerData.hashWasm);
parentPort.on("message", async ({ id, input }) => {
  try {
    const hash = await argon2id({ ...input, outputType: "binary" });
    parentPort.postMessage({ id, hash });
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : "argon2 failed" });
  }
});
`;

interface Task {
  id: number;
  input: Argon2Input;
  resolve: (hash: Uint8Array) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  task: Task | undefined;
  idleTimer: NodeJS.Timeout | undefined;
}

/** How long a worker waits for its next hash before it is stopped. */
export const ARGON2_WORKER_IDLE_MS = 10_000;

export interface Argon2Pool {
  hash(input: Argon2Input): Promise<Uint8Array>;
  /** Workers alive now, busy or waiting out their idle time. */
  workers(): number;
  /** Stops every worker; queued and running hashes fail. */
  close(): Promise<void>;
}

export function defaultPoolSize(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

export function createArgon2Pool(
  size: number = defaultPoolSize(),
  options: { idleMs?: number } = {},
): Argon2Pool {
  const idleMs = options.idleMs ?? ARGON2_WORKER_IDLE_MS;
  const hashWasm = createRequire(import.meta.url).resolve("hash-wasm");
  const slots = new Set<Slot>();
  const queue: Task[] = [];
  let nextId = 1;

  function fail(slot: Slot, err: Error): void {
    if (!slots.delete(slot)) {
      return;
    }
    clearTimeout(slot.idleTimer);
    slot.task?.reject(err);
    slot.task = undefined;
    pump();
  }

  function spawn(): Slot {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { hashWasm } });
    const slot: Slot = { worker, task: undefined, idleTimer: undefined };
    worker.unref();
    worker.on("message", (message: { id: number; hash?: Uint8Array; error?: string }) => {
      const task = slot.task;
      if (!task || task.id !== message.id) {
        return;
      }
      slot.task = undefined;
      worker.unref();
      if (message.hash) {
        task.resolve(message.hash);
      } else {
        task.reject(new Error(`argon2id: ${message.error ?? "no result"}`));
      }
      pump();
      if (slot.task === undefined) {
        retireWhenIdle(slot);
      }
    });
    worker.on("error", (err) => fail(slot, err));
    worker.on("exit", (code) => fail(slot, new Error(`argon2 worker exited with code ${code}`)));
    slots.add(slot);
    return slot;
  }

  function retireWhenIdle(slot: Slot): void {
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      slot.idleTimer = undefined;
      if (slot.task === undefined && slots.delete(slot)) {
        void slot.worker.terminate();
      }
    }, idleMs);
    slot.idleTimer.unref();
  }

  function pump(): void {
    while (queue.length > 0) {
      let slot = [...slots].find((candidate) => candidate.task === undefined);
      if (!slot && slots.size < size) {
        slot = spawn();
      }
      if (!slot) {
        return;
      }
      const task = queue.shift() as Task;
      clearTimeout(slot.idleTimer);
      slot.idleTimer = undefined;
      slot.task = task;
      // Referenced while busy: a caller awaiting the hash must not see the process exit under it.
      slot.worker.ref();
      slot.worker.postMessage({ id: task.id, input: task.input });
    }
  }

  return {
    hash(input) {
      return new Promise<Uint8Array>((resolve, reject) => {
        queue.push({ id: nextId++, input, resolve, reject });
        pump();
      });
    },
    workers: () => slots.size,
    async close() {
      const closing = new Error("argon2 pool closed");
      for (const task of queue.splice(0)) {
        task.reject(closing);
      }
      const workers = [...slots].map((slot) => slot.worker);
      for (const slot of [...slots]) {
        fail(slot, closing);
      }
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}
