/**
 * @module tree/tree-path
 * Paths inside a snapshot are slash-rooted (also for Windows hosts). A requested path is
 * normalised lexically (`.` and `..` resolved, repeated and trailing slashes dropped) and a `..`
 * above `/` is refused rather than clamped, because it means the caller built the path wrongly.
 */
export type TreePathResult = { ok: true; path: string } | { ok: false; error: string };

export function normaliseTreePath(path: string): TreePathResult {
  if (!path.startsWith("/")) {
    return { ok: false, error: `path ${JSON.stringify(path)} is not absolute` };
  }
  if (path.includes("\u0000")) {
    return { ok: false, error: "path contains a NUL character" };
  }
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") {
      continue;
    }
    if (part === "..") {
      if (parts.length === 0) {
        return { ok: false, error: `path ${JSON.stringify(path)} leads above /` };
      }
      parts.pop();
      continue;
    }
    parts.push(part);
  }
  return { ok: true, path: `/${parts.join("/")}` };
}

/** The directory that holds `path` (`/` for top-level entries and for `/` itself). */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash <= 0 ? "/" : path.slice(0, slash);
}

export function childPath(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/** True when `path` lies strictly below `dir`. */
export function isBelow(dir: string, path: string): boolean {
  return dir === "/" ? path !== "/" && path.startsWith("/") : path.startsWith(`${dir}/`);
}
