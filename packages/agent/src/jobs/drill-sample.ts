/**
 * @module jobs/drill-sample
 * A uniform random sample of a snapshot's regular files, drawn from the `restic ls --json` stream
 * while it passes (reservoir sampling, Algorithm R): memory holds at most `size` entries however
 * many millions of nodes the snapshot lists, and every file has the same chance to be drawn.
 */

export interface SampledFile {
  path: string;
  /** The size `restic ls` records. */
  size: number;
}

export interface FileSample {
  offer(file: SampledFile): void;
  /** Regular files offered so far: the population the sample is drawn from. */
  readonly seen: number;
  /** The sample, in snapshot order (restic lists depth-first in name order). */
  files(): SampledFile[];
}

/** `random` returns [0, 1) like Math.random; injected so tests can pin the draw. */
export function createFileSample(size: number, random: () => number): FileSample {
  const kept: Array<SampledFile & { order: number }> = [];
  let seen = 0;
  return {
    offer(file) {
      const order = seen;
      seen += 1;
      if (kept.length < size) {
        kept.push({ ...file, order });
        return;
      }
      const slot = Math.floor(random() * seen);
      if (slot < size) {
        kept[slot] = { ...file, order };
      }
    },
    get seen() {
      return seen;
    },
    files() {
      return [...kept]
        .sort((a, b) => a.order - b.order)
        .map(({ path, size: bytes }) => ({ path, size: bytes }));
    },
  };
}
