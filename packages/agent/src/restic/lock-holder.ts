/**
 * @module restic/lock-holder
 * Who holds the lock that refused a restic command, read from restic's own message (testdata/restic
 * `err-locked-*`, the same words in 0.14 and 0.18; 0.18 with --json puts them, joined by `\n`, in
 * an `exit_error`):
 *
 *     unable to create lock in backend: repository is already locked by PID 17541 on vm by root (UID 0, GID 0)
 *     lock was created at 2026-11-27 18:44:07 (52.062416064s ago)
 */

export interface LockHolder {
  pid: number;
  host: string;
  user: string;
  /** A prune's or check's lock; a backup's is shared. */
  exclusive: boolean;
  /** As restic prints it, in the holder's local time. */
  createdAt?: string;
  /** Rounded to the second: "1m14s". */
  age?: string;
}

const LOCKED = /repository is already locked (exclusively )?by PID (\d+) on (\S+) by (\S+)/;
const CREATED = /lock was created at (.+?) \(([^()]+?) ago\)/;

/** Go's duration text ("1m14.275917723s", "962.549076ms") to whole seconds ("1m14s", "0s"). */
export function roundGoDuration(text: string): string {
  const seconds = /^(.*?)(\d+(?:\.\d+)?)s$/.exec(text);
  if (seconds !== null && !text.endsWith("ms")) {
    return `${seconds[1]}${Math.floor(Number(seconds[2]))}s`;
  }
  return /^\d+(?:\.\d+)?[mµun]s$/.test(text) ? "0s" : text;
}

export interface LockReader {
  /** One stderr line (a JSON `exit_error` included). */
  observe(text: string): void;
  holder(): LockHolder | undefined;
}

export function createLockReader(): LockReader {
  let holder: LockHolder | undefined;
  return {
    observe(text) {
      const locked = LOCKED.exec(text);
      if (locked !== null) {
        holder = {
          pid: Number(locked[2]),
          host: locked[3] ?? "",
          user: locked[4] ?? "",
          exclusive: locked[1] !== undefined,
        };
      }
      const created = CREATED.exec(text);
      if (created !== null && holder !== undefined) {
        holder.createdAt = created[1];
        holder.age = roundGoDuration(created[2] ?? "");
      }
    },
    holder: () => (holder === undefined ? undefined : { ...holder }),
  };
}
