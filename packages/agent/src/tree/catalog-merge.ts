/**
 * @module tree/catalog-merge
 * The file catalogue's delta as a streaming merge of two sorted listings: the base (catalog-state.ts,
 * written in its snapshot's index order) and the new snapshot's index (catalog-listing.ts). Two maps
 * of every path cost ~230 bytes of heap a path, ~90 MB for a 200,000-file host, and V8 keeps the
 * heap it grew; a merge holds a read chunk of each side and nothing else, whatever the host's size.
 *
 * Both listings come in restic's order: depth-first, each directory's children by name. That is the
 * paths' order when compared with `/` below every other character (`comparePaths`), so one pass
 * over both sides pairs each path with itself. restic orders names by bytes and this by UTF-16
 * units, which differ for a few rare characters; a side found out of order (or holding a path
 * twice) throws CatalogOrderError, and the caller falls back to the maps (catalog-sender.ts).
 */
import type { CatalogDelta, CatalogEntry } from "@fleetback/protocol";
import {
  type CatalogHeader,
  type CatalogLine,
  cutParts,
  DEFAULT_PART_LIMITS,
  entryOfVersion,
  type PartLimits,
} from "./catalog-delta.js";

const SLASH = 47;

/** restic's listing order: `/` ends a name, so it sorts below every character of one. */
export function comparePaths(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let at = 0; at < length; at += 1) {
    const x = a.charCodeAt(at);
    const y = b.charCodeAt(at);
    if (x !== y) {
      return x === SLASH ? -1 : y === SLASH ? 1 : x - y;
    }
  }
  return a.length - b.length;
}

/** A listing is not in `comparePaths` order: the merge would pair paths wrongly. */
export class CatalogOrderError extends Error {}

/** A changed entry of the new snapshot, or a removed path of the base. */
export type CatalogChange = CatalogEntry | string;

interface Side {
  source: AsyncIterator<readonly CatalogLine[]>;
  batch: readonly CatalogLine[];
  at: number;
  ended: boolean;
  last: string | undefined;
  name: string;
}

function side(lines: AsyncIterable<readonly CatalogLine[]> | undefined, name: string): Side {
  const ended = lines === undefined;
  const source = lines?.[Symbol.asyncIterator]() ?? {
    next: async () => ({ done: true as const, value: undefined }),
  };
  return { source, batch: [], at: 0, ended, last: undefined, name };
}

/** Reads on until `s` has a line at hand or has ended. */
async function fill(s: Side): Promise<void> {
  while (!s.ended && s.at >= s.batch.length) {
    const next = await s.source.next();
    if (next.done) {
      s.ended = true;
    } else {
      s.batch = next.value;
      s.at = 0;
    }
  }
}

/** The line at hand, checked to come after the one before. */
function take(s: Side): CatalogLine {
  const line = s.batch[s.at] as CatalogLine;
  s.at += 1;
  if (s.last !== undefined && comparePaths(s.last, line[0]) >= 0) {
    throw new CatalogOrderError(`the ${s.name} listing is not in order`);
  }
  s.last = line[0];
  return line;
}

/** The changed entry for `line`; undefined when its version is no entry (never sent). */
function changedOf([path, version]: CatalogLine): CatalogEntry | undefined {
  return entryOfVersion(path, version);
}

/**
 * What changed from `base` to `current`, both in `comparePaths` order, in that order, a batch per
 * read chunk of either side: paths of `current` that `base` lacks or holds in another version
 * (entries), and paths of `base` that `current` lacks (strings). No base: every path is changed.
 * Throws CatalogOrderError on a side out of order, and whatever a side throws.
 */
export async function* mergeChanges(
  base: AsyncIterable<readonly CatalogLine[]> | undefined,
  current: AsyncIterable<readonly CatalogLine[]>,
): AsyncGenerator<CatalogChange[]> {
  const old = side(base, "base");
  const now = side(current, "new");
  try {
    for (;;) {
      await fill(old);
      await fill(now);
      const out: CatalogChange[] = [];
      // Synchronously until a side needs its next chunk: one chunk's work a turn of the event loop.
      for (;;) {
        const oldReady = old.at < old.batch.length;
        const nowReady = now.at < now.batch.length;
        if ((!oldReady && !old.ended) || (!nowReady && !now.ended)) {
          break;
        }
        if (!oldReady && !nowReady) {
          if (out.length > 0) {
            yield out;
          }
          return;
        }
        const order = !oldReady
          ? 1
          : !nowReady
            ? -1
            : comparePaths((old.batch[old.at] as CatalogLine)[0], (now.batch[now.at] as CatalogLine)[0]);
        if (order < 0) {
          out.push(take(old)[0]);
          continue;
        }
        if (order === 0 && take(old)[1] === (now.batch[now.at] as CatalogLine)[1]) {
          take(now);
          continue;
        }
        const entry = changedOf(take(now));
        if (entry !== undefined) {
          out.push(entry);
        }
      }
      if (out.length > 0) {
        yield out;
      }
    }
  } finally {
    // Stopped early (a part refused, the job's signal): the files are closed now, not at exit.
    await Promise.all([old.source.return?.(), now.source.return?.()]);
  }
}

/** `lines` as they are, and what they throw told to `note` first (which side failed). */
export async function* noting<T>(lines: AsyncIterable<T>, note: (cause: unknown) => void): AsyncGenerator<T> {
  try {
    yield* lines;
  } catch (cause) {
    note(cause);
    throw cause;
  }
}

/** A listing to stream, as often as asked: each call reads it from the start. */
export type Listing = () => AsyncIterable<readonly CatalogLine[]>;

/**
 * A delta counted, not built: where its parts start, and how many changes of each kind. `single`:
 * the changes themselves when they fit one part (a part's worth at most is kept while counting), so
 * that the usual small delta needs no second pass.
 */
export interface DeltaPlan {
  starts: readonly number[];
  changed: number;
  removed: number;
  single?: CatalogChange[];
}

/**
 * The first pass: the delta's parts cut as its changes stream by; nothing of them held. With more
 * than one `limits`, the parts are cut for each at once and the first that needs no more than its
 * most parts wins (smaller parts first: see PREFERRED_PART_LIMITS); none does, the last one's.
 */
export async function planDelta(
  base: Listing | undefined,
  current: Listing,
  limits: PartLimits | readonly PartLimits[] = DEFAULT_PART_LIMITS,
): Promise<DeltaPlan> {
  const choices = Array.isArray(limits) ? limits : [limits as PartLimits];
  const cutsOf = choices.map((choice) => cutParts(choice));
  let removed = 0;
  let single: CatalogChange[] | undefined = [];
  for await (const batch of mergeChanges(base?.(), current())) {
    for (const change of batch) {
      for (const cuts of cutsOf) {
        cuts.add(change);
      }
      if (typeof change === "string") {
        removed += 1;
      }
      // One part of the smallest: one of every other too.
      if ((cutsOf[0]?.starts.length ?? 0) > 1) {
        single = undefined;
      } else {
        single?.push(change);
      }
    }
  }
  const at = choices.findIndex((choice, index) => (cutsOf[index]?.starts.length ?? 0) <= choice.parts);
  const cuts = cutsOf[at === -1 ? cutsOf.length - 1 : at] ?? cutParts();
  const counts = { starts: cuts.starts, changed: cuts.items - removed, removed };
  return single === undefined ? counts : { ...counts, single };
}

/**
 * The second pass: the same merge again (unless the plan kept its one part's changes), a part
 * handed out as soon as it is full, cut where the plan says (every part names how many there are,
 * so they are counted first). A part holds its
 * changed entries and removed paths in listing order: the server applies each part whole, and no
 * path is both. Throws when the listings no longer give what was planned.
 */
export async function* deltaParts(
  header: CatalogHeader,
  plan: DeltaPlan,
  base: Listing | undefined,
  current: Listing,
): AsyncGenerator<CatalogDelta> {
  const parts = plan.starts.length;
  const total = plan.changed + plan.removed;
  let part = 0;
  let index = 0;
  let changed: CatalogEntry[] = [];
  let removed: string[] = [];
  const made = (): CatalogDelta => ({ ...header, part, parts, changed, removed });
  const batches = plan.single === undefined ? mergeChanges(base?.(), current()) : [plan.single];
  for await (const batch of batches) {
    for (const change of batch) {
      if (index >= total) {
        throw new Error("the listings changed between counting the delta and sending it");
      }
      if (index === plan.starts[part + 1]) {
        yield made();
        part += 1;
        changed = [];
        removed = [];
      }
      if (typeof change === "string") {
        removed.push(change);
      } else {
        changed.push(change);
      }
      index += 1;
    }
  }
  if (index !== total || part !== parts - 1) {
    throw new Error("the listings changed between counting the delta and sending it");
  }
  yield made();
}
