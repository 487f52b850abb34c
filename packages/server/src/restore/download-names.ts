/**
 * @module restore/download-names
 * What a download may name and how its file is called: a path inside the snapshot's backed-up
 * paths (no `..`), the saved file's name, and the response headers that carry it safely.
 */
import type { Snapshot } from "@fleetback/db";
import type { DumpArchiveFormat } from "@fleetback/protocol";

/** Path segments of a slash-rooted snapshot path, `.` and empty ones dropped. */
function segmentsOf(path: string): string[] {
  return path.split("/").filter((part) => part !== "" && part !== ".");
}

/**
 * Why `path` cannot be downloaded from `snapshot`, or undefined. `..` is refused rather than
 * resolved; the path must lie inside one of the snapshot's backed-up paths or be a folder above
 * them (which then holds only what was backed up). Windows paths (`C:\...`) are matched as the
 * tree shows them, `/C/...`.
 */
export function downloadPathProblem(snapshot: Pick<Snapshot, "paths">, path: string): string | undefined {
  if (!path.startsWith("/")) {
    return `${JSON.stringify(path)} is not an absolute path`;
  }
  if (path.includes("\u0000")) {
    return "the path contains a NUL character";
  }
  const parts = path.split("/");
  if (parts.includes("..")) {
    return `${JSON.stringify(path)} contains "..": name the file or folder itself`;
  }
  const wanted = segmentsOf(path);
  const inside = snapshot.paths.some((backedUp) => {
    const root = segmentsOf(backedUp.replaceAll("\\", "/").replace(/^([A-Za-z]):/, "/$1"));
    const common = Math.min(root.length, wanted.length);
    return root.slice(0, common).every((part, i) => part === wanted[i]);
  });
  return inside ? undefined : `${JSON.stringify(path)} is not inside this snapshot's backed-up paths`;
}

/** A name for the saved file: the last path segment, plus `.tar` / `.zip` for a folder. */
export function downloadFilename(snapshot: Pick<Snapshot, "id">, path: string, archive?: DumpArchiveFormat) {
  const base = segmentsOf(path).pop() ?? `snapshot-${snapshot.id.slice(0, 8)}`;
  return archive === undefined ? base : `${base}.${archive}`;
}

/** `attachment` with an ASCII fallback and the UTF-8 name (RFC 6266 / 5987); no quote or CR/LF gets through. */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^A-Za-z0-9._ -]/g, "_").replace(/^\.+/, "_") || "download";
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export function contentTypeOf(archive: DumpArchiveFormat | undefined): string {
  return archive === "zip"
    ? "application/zip"
    : archive === "tar"
      ? "application/x-tar"
      : "application/octet-stream";
}
