/**
 * @module tree/tree-page
 * One page of a directory's children for `tree.list.result` (protocol 4): the children whose name
 * sorts after the cursor, as many of the smallest as fit one frame, and `next_after` when more
 * follow. Entries may arrive in any order and memory stays at one page: a child that sorts after
 * the page's end is counted as "more" and dropped, and an earlier one pushes the largest out. When
 * they arrive in name order (restic's own order, almost always), `done` says nothing later can
 * change the page, so a reader may stop there.
 */
import type { TreeEntry, TreeListResult } from "@fleetback/protocol";
import { MAX_FRAME_BYTES, TREE_CHILD_NAME_MAX_LENGTH } from "@fleetback/protocol";

/** Room for the envelope around `{"entries":[...],"next_after":...}`. */
export const ENTRIES_BUDGET_BYTES = MAX_FRAME_BYTES - 4 * 1024;

/** `{"entries":[]}`, and `,"next_after":` before the cursor's own JSON. */
const FRAME_BYTES = 16;
const CURSOR_KEY_BYTES = 14;

/**
 * The order of entries and cursors: JavaScript string comparison (UTF-16 code units), as entries
 * were always sorted. It differs from restic's byte order only between astral characters and
 * U+E000..U+FFFF; a page still comes out right then, only without the early stop.
 */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface TreePage {
  add(entry: TreeEntry): void;
  /** True once a child beyond the page was seen: more pages follow. */
  readonly more: boolean;
  /** True when entries arrive in name order and nothing later can join the page. */
  readonly done: boolean;
  result(): TreeListResult;
}

const sizeOf = (entry: TreeEntry) => Buffer.byteLength(JSON.stringify(entry)) + 1;
const cursorCostOf = (name: string) => CURSOR_KEY_BYTES + Buffer.byteLength(JSON.stringify(name));

export function createTreePage(after?: string, budget = ENTRIES_BUDGET_BYTES): TreePage {
  const entries: TreeEntry[] = [];
  const sizes: number[] = [];
  let bytes = FRAME_BYTES;
  /** The smallest child left out for lack of room; everything from it on belongs to later pages. */
  let cut: string | undefined;
  let inOrder = true;
  let lastSeen: string | undefined;

  const fits = () => {
    const last = entries.at(-1);
    return last === undefined || bytes + cursorCostOf(last.name) <= budget;
  };
  const leaveOut = (name: string) => {
    if (cut === undefined || compareNames(name, cut) < 0) {
      cut = name;
    }
  };

  return {
    add(entry) {
      if (lastSeen !== undefined && compareNames(entry.name, lastSeen) <= 0) {
        inOrder = false;
      }
      lastSeen = entry.name;
      if (after !== undefined && compareNames(entry.name, after) <= 0) {
        return;
      }
      if (cut !== undefined && compareNames(entry.name, cut) >= 0) {
        leaveOut(entry.name);
        return;
      }
      let low = 0;
      let high = entries.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (compareNames((entries[middle] as TreeEntry).name, entry.name) < 0) {
          low = middle + 1;
        } else {
          high = middle;
        }
      }
      const size = sizeOf(entry);
      entries.splice(low, 0, entry);
      sizes.splice(low, 0, size);
      bytes += size;
      // Always keep one entry, however long, so that every page moves the cursor on.
      while (!fits() && entries.length > 1) {
        const dropped = entries.pop() as TreeEntry;
        bytes -= sizes.pop() ?? 0;
        leaveOut(dropped.name);
      }
    },
    get more() {
      return cut !== undefined;
    },
    get done() {
      return inOrder && cut !== undefined;
    },
    result() {
      const last = entries.at(-1);
      if (cut === undefined || last === undefined) {
        return { entries: [...entries] };
      }
      // The server would drop the whole frame for a cursor longer than the contract allows.
      if (last.name.length > TREE_CHILD_NAME_MAX_LENGTH) {
        return { error: `cannot list past ${last.path}: its name is too long to page from` };
      }
      return { entries: [...entries], next_after: last.name };
    },
  };
}
