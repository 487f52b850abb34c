/**
 * @module policies/policy-hooks
 * Hooks in a policy's groups (issue 37). A hook is shell text run as root on every host the
 * policy covers, so it is a secret like a channel's: the stored spec (policies.spec and each
 * policy_versions.spec) holds it only sealed, with the policy as additional data, so a sealed
 * hook cannot be moved to another policy or a host row and opened there. Because each version
 * keeps its own sealed copy, a rollback carries the hooks of the version it goes back to.
 * What leaves the server says only whether a group has a hook; a body that leaves a hook's key
 * out keeps the one the current version has for the group of that name (write-only, like a
 * channel's secrets), `null` or "" removes it.
 */
import { createHmac } from "node:crypto";
import { openString, sealString } from "@fleetback/crypto";
import { HOOK_FIELDS } from "../sources/source-group-schema.js";

export const POLICY_HOOK_FIELDS = HOOK_FIELDS;
export type PolicyHookField = (typeof POLICY_HOOK_FIELDS)[number];

const SEALED: Record<PolicyHookField, string> = {
  pre_hook: "pre_hook_sealed",
  post_hook: "post_hook_sealed",
};
const FLAG: Record<PolicyHookField, string> = { pre_hook: "has_pre_hook", post_hook: "has_post_hook" };

export type Group = Record<string, unknown> & { name: string };

/** A change at a path, as spec-diff.ts says one (it imports this module, so not its type). */
interface HookChange {
  path: string;
  before: unknown;
  after: unknown;
}

export function policyHookAad(policyId: string): string {
  return `policy:${policyId}`;
}

function sealedOf(group: Group | undefined, field: PolicyHookField): string | undefined {
  const value = group?.[SEALED[field]];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The hook's text from a stored group; undefined when it has none or it cannot be opened. */
export function openPolicyHook(
  key: Uint8Array,
  policyId: string,
  group: Group | undefined,
  field: PolicyHookField,
): string | undefined {
  const sealed = sealedOf(group, field);
  if (sealed === undefined) {
    return undefined;
  }
  const opened = openString(key, Buffer.from(sealed, "base64"), policyHookAad(policyId));
  return opened.ok ? opened.plaintext : undefined;
}

/**
 * The groups as stored: each given hook sealed, each left-out one carried from the current
 * version's group of the same name, no plaintext anywhere. A text equal to the stored one keeps
 * its sealed bytes, so re-sending the same hook is no change.
 */
export function sealPolicyHooks(
  key: Uint8Array,
  policyId: string,
  groups: readonly Group[],
  current: readonly Group[] = [],
): Group[] {
  const before = new Map(current.map((group) => [group.name, group]));
  return groups.map((group) => {
    const previous = before.get(group.name);
    const stored: Group = { ...group };
    for (const field of POLICY_HOOK_FIELDS) {
      delete stored[field];
      delete stored[SEALED[field]];
      delete stored[FLAG[field]];
      const given = Object.hasOwn(group, field) ? group[field] : undefined;
      let sealed: string | undefined;
      if (!Object.hasOwn(group, field)) {
        sealed = sealedOf(previous, field);
      } else if (typeof given === "string" && given !== "") {
        sealed =
          openPolicyHook(key, policyId, previous, field) === given
            ? sealedOf(previous, field)
            : Buffer.from(sealString(key, given, policyHookAad(policyId))).toString("base64");
      }
      if (sealed !== undefined) {
        stored[SEALED[field]] = sealed;
      }
    }
    return stored;
  });
}

/** A stored group as the API and the page show it: whether each hook is set, never its text. */
export function shownGroup(group: Group): Group {
  const shown = exportedGroup(group);
  for (const field of POLICY_HOOK_FIELDS) {
    shown[FLAG[field]] = sealedOf(group, field) !== undefined;
  }
  return shown;
}

/**
 * A stored group as the fleet document exports it: hooks left out, as channel secrets are, so
 * applying the export back keeps them and changes nothing.
 */
export function exportedGroup(group: Group): Group {
  const out: Group = { ...group };
  for (const field of POLICY_HOOK_FIELDS) {
    delete out[field];
    delete out[SEALED[field]];
    delete out[FLAG[field]];
  }
  return out;
}

/**
 * A keyed digest of a hook's text, for comparing hooks where the text must not be kept: a plain
 * hash of a short script could be found by guessing, this one not without the server's key.
 */
export function hookDigest(key: Uint8Array, text: string | undefined): string | null {
  return text === undefined
    ? null
    : createHmac("sha256", key).update("policy-hook\0").update(text).digest("hex");
}

/**
 * How the hooks changed between two stored versions of a policy's groups, said without the
 * text: "(set)", "(removed)" or "(changed)" at `spec.groups["name"].pre_hook`, the path
 * spec-diff.ts gives the group's other fields.
 */
export function hookChanges(
  key: Uint8Array,
  policyId: string,
  before: readonly Group[],
  after: readonly Group[],
  prefix = "spec.groups",
): HookChange[] {
  const out: HookChange[] = [];
  const old = new Map(before.map((group) => [group.name, group]));
  const seen = new Set<string>();
  const compare = (name: string, a: Group | undefined, b: Group | undefined) => {
    for (const field of POLICY_HOOK_FIELDS) {
      const was = openPolicyHook(key, policyId, a, field);
      const is = openPolicyHook(key, policyId, b, field);
      if (was === is) {
        continue;
      }
      out.push({
        path: `${prefix}[${JSON.stringify(name)}].${field}`,
        before: was === undefined ? null : "(set)",
        after: is === undefined ? "(removed)" : was === undefined ? "(set)" : "(changed)",
      });
    }
  };
  for (const group of after) {
    seen.add(group.name);
    compare(group.name, old.get(group.name), group);
  }
  for (const [name, group] of old) {
    if (!seen.has(name)) {
      compare(name, group, undefined);
    }
  }
  return out;
}

/** A policy content (or a spec: anything with `spec.groups` or `groups`) with `map` over its groups. */
function mapGroups<T extends Record<string, unknown>>(content: T, map: (group: Group) => Group): T {
  const spec = content.spec as { groups?: Group[] } | undefined;
  if (spec?.groups !== undefined) {
    return { ...content, spec: { ...spec, groups: spec.groups.map(map) } };
  }
  const groups = content.groups as Group[] | undefined;
  return groups === undefined ? content : { ...content, groups: groups.map(map) };
}

/** A stored content or spec as the API shows it: has_ flags for the hooks. */
export function shownContent<T extends Record<string, unknown>>(content: T): T {
  return mapGroups(content, shownGroup);
}

/** A stored content or spec as a fleet document and the edit form hold it: no hooks at all. */
export function exportedContent<T extends Record<string, unknown>>(content: T): T {
  return mapGroups(content, exportedGroup);
}

/**
 * A stored version's groups with their hooks opened (null: none), as a body that writes exactly
 * them again: a rollback carries the hooks of the version it goes back to.
 */
export function openedGroups(key: Uint8Array, policyId: string, groups: readonly Group[]): Group[] {
  return groups.map((group) => {
    const opened: Group = exportedGroup(group);
    for (const field of POLICY_HOOK_FIELDS) {
      opened[field] = openPolicyHook(key, policyId, group, field) ?? null;
    }
    return opened;
  });
}

/**
 * Hooks as one planning run compares them: each text by its keyed digest (hookDigest), which
 * stands for the text in the effective configuration, and the text back from the digest when a
 * host's row is written. Lives as long as the run; holds no more than the hooks it read.
 */
export interface HookBook {
  readonly key: Uint8Array;
  digest(text: string | undefined): string | null;
  text(digest: string): string | undefined;
}

export function hookBook(key: Uint8Array): HookBook {
  const texts = new Map<string, string>();
  const digests = new Map<string, string>();
  return {
    key,
    digest(text) {
      if (text === undefined) {
        return null;
      }
      let digest = digests.get(text);
      if (digest === undefined) {
        digest = hookDigest(key, text) as string;
        digests.set(text, digest);
        texts.set(digest, text);
      }
      return digest;
    },
    text: (digest) => texts.get(digest),
  };
}

/**
 * A stored policy's groups as planning reads them: the sealed hooks replaced by their digests
 * under `pre_hook` / `post_hook` (absent: no hook), so two policies giving the same hook agree
 * and a changed hook is a changed setting.
 */
export function plannedGroups(book: HookBook, policyId: string, groups: readonly Group[]): Group[] {
  return groups.map((group) => {
    const planned = exportedGroup(group);
    for (const field of POLICY_HOOK_FIELDS) {
      const digest = book.digest(openPolicyHook(book.key, policyId, group, field));
      if (digest !== null) {
        planned[field] = digest;
      }
    }
    return planned;
  });
}
