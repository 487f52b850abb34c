/**
 * @module policies/spec-diff
 * What changed between two versions of a policy, as paths into the document (`spec.groups[0].
 * includes`): a group or schedule is matched by its name, not its index, so moving one is no change.
 */
import { canonical } from "./effective-config.js";
import { exportedContent, type Group, hookChanges } from "./policy-hooks.js";

export interface Change {
  path: string;
  before: unknown;
  after: unknown;
}

type Json = unknown;

function isObject(value: Json): value is Record<string, Json> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function named(list: Json[]): Map<string, Json> | undefined {
  const map = new Map<string, Json>();
  for (const item of list) {
    if (!isObject(item) || typeof item.name !== "string" || map.has(item.name)) {
      return undefined;
    }
    map.set(item.name, item);
  }
  return map;
}

function walk(path: string, before: Json, after: Json, out: Change[]): void {
  if (canonical(before) === canonical(after)) {
    return;
  }
  if (isObject(before) && isObject(after)) {
    for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
      walk(path === "" ? key : `${path}.${key}`, before[key], after[key], out);
    }
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const a = named(before);
    const b = named(after);
    if (a && b) {
      for (const name of [...new Set([...a.keys(), ...b.keys()])]) {
        walk(`${path}[${JSON.stringify(name)}]`, a.get(name), b.get(name), out);
      }
      return;
    }
  }
  out.push({ path, before: before ?? null, after: after ?? null });
}

export function specDiff(before: Json, after: Json): Change[] {
  const out: Change[] = [];
  walk("", before, after, out);
  return out;
}

/**
 * What changed between two stored policy contents (name, selector, priority, spec), as the
 * versions list and a fleet document's dry run say it: the diff above over the contents without
 * their sealed hooks, and the hooks' changes said without their text.
 */
export function contentChanges(
  key: Uint8Array,
  policyId: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): Change[] {
  const groupsOf = (content: Record<string, unknown>) =>
    ((content.spec as { groups?: Group[] } | undefined)?.groups ?? []) as Group[];
  return [
    ...specDiff(exportedContent(before), exportedContent(after)),
    ...hookChanges(key, policyId, groupsOf(before), groupsOf(after)),
  ];
}

/** What a stored version changed from the one before it (rows as policy_versions holds them). */
export function versionChanges(
  key: Uint8Array,
  policyId: string,
  before: VersionContent,
  after: VersionContent,
): Change[] {
  const content = (v: VersionContent) => ({
    name: v.name,
    selector: v.selector,
    priority: v.priority,
    spec: v.spec as Record<string, unknown>,
  });
  return contentChanges(key, policyId, content(before), content(after));
}

interface VersionContent {
  name: string;
  selector: string;
  priority: number;
  spec: unknown;
}
