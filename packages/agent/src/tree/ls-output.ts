/**
 * @module tree/ls-output
 * Reads `restic ls --json` lines (testdata/restic `ls-*`): first the snapshot (`struct_type`
 * "snapshot"), then one node per line with `name`, `type`, absolute `path`, `size` (files only) and
 * `mtime` (RFC 3339, possibly with a local offset and nanoseconds). Nodes become wire tree entries:
 * the type is folded to dir/file/symlink/other and the time to UTC.
 */
import type { TreeEntry, TreeEntryType } from "@fleetback/protocol";
import { count, parseJsonObject } from "../restic/backup-output.js";

export type LsLine =
  | { kind: "snapshot"; id: string }
  | { kind: "node"; entry: TreeEntry }
  | { kind: "other" };

const EPOCH = "1970-01-01T00:00:00.000Z";

export function entryType(type: unknown): TreeEntryType {
  return type === "dir" || type === "file" || type === "symlink" ? type : "other";
}

/** An RFC 3339 UTC timestamp with millisecond precision; the epoch when restic's value is unusable. */
export function utcTime(value: unknown): string {
  if (typeof value !== "string") {
    return EPOCH;
  }
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) {
    return EPOCH;
  }
  const iso = time.toISOString();
  // Years before 0 or after 9999 come out as ±YYYYYY, which is not RFC 3339.
  return /^\d{4}-/.test(iso) ? iso : EPOCH;
}

export function parseLsLine(text: string): LsLine {
  const parsed = parseJsonObject(text);
  if (parsed === undefined) {
    return { kind: "other" };
  }
  if (parsed.struct_type === "snapshot" || parsed.message_type === "snapshot") {
    return { kind: "snapshot", id: typeof parsed.id === "string" ? parsed.id : "" };
  }
  const isNode = parsed.struct_type === "node" || parsed.message_type === "node";
  if (
    !isNode ||
    typeof parsed.name !== "string" ||
    typeof parsed.path !== "string" ||
    !parsed.path.startsWith("/")
  ) {
    return { kind: "other" };
  }
  return {
    kind: "node",
    entry: {
      name: parsed.name,
      path: parsed.path,
      type: entryType(parsed.type),
      size: count(parsed.size) ?? 0,
      mtime: utcTime(parsed.mtime),
    },
  };
}
