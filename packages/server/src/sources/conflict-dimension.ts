/**
 * @module sources/conflict-dimension
 * A group's conflict dimension: the first include path of a group that it shares with another group
 * of the same host (equal, or one contains the other), else null. The page uses it to warn that
 * the same data is kept under two retention policies.
 */

function normalise(path: string): string {
  const unified = path.replaceAll("\\", "/");
  return unified.length > 1 ? unified.replace(/\/+$/, "") || "/" : unified;
}

/** True when the paths are equal or one lies inside the other. */
export function pathsOverlap(a: string, b: string): boolean {
  const x = normalise(a);
  const y = normalise(b);
  if (x === y) {
    return true;
  }
  const inside = (inner: string, outer: string) =>
    outer === "/" ? inner.startsWith("/") : inner.startsWith(`${outer}/`);
  return inside(x, y) || inside(y, x);
}

export interface GroupIncludes {
  id: string;
  includes: readonly string[];
}

/** The conflict dimension of every group, by id. */
export function computeConflictDimensions(groups: readonly GroupIncludes[]): Map<string, string | null> {
  const result = new Map<string, string | null>();
  for (const group of groups) {
    const others = groups.filter((other) => other.id !== group.id);
    const shared = group.includes.find((path) =>
      others.some((other) => other.includes.some((theirs) => pathsOverlap(path, theirs))),
    );
    result.set(group.id, shared ?? null);
  }
  return result;
}

/**
 * The marks of one host's groups that differ from what they hold (`current`), in the order the
 * groups were created, which decides which of two overlapping groups names the path.
 */
export function changedConflictMarks(
  groups: ReadonlyArray<GroupIncludes & { createdAt: Date; current: string | null }>,
): Array<{ id: string; dimension: string | null }> {
  const ordered = [...groups].sort(
    (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const dims = computeConflictDimensions(ordered);
  return ordered
    .map((group) => ({ id: group.id, dimension: dims.get(group.id) ?? null, current: group.current }))
    .filter((mark) => mark.dimension !== mark.current)
    .map(({ id, dimension }) => ({ id, dimension }));
}
