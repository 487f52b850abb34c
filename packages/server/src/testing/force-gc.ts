/**
 * @module testing/force-gc
 * A full garbage collection in a test worker that was not started with `--expose-gc`, so that a
 * memory bound measures what is retained, not garbage waiting for the collector (a bound read
 * without it failed under the load of a parallel CI run).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export function forceGc(): void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  gc();
  gc();
}
