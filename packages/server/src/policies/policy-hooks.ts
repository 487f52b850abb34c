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
import type { Change } from "./spec-diff.js";

export const POLICY_HOOK_FIELDS = ["pre_hook", "post_hook"] as const;
export type PolicyHookField = (typeof POLICY_HOOK_FIELDS)[number];

const SEALED: Record<PolicyHookField, string> = {
  pre_hook: "pre_hook_sealed",
  post_hook: "post_hook_sealed",
};
const FLAG: Record<PolicyHookField, string> = { pre_hook: "has_pre_hook", post_hook: "has_post_hook" };

type Group = Record<string, unknown> & { name: string };

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
 * text: "(set)", "(removed)" or "(changed)" at `spec.groups.N.pre_hook` (N: the group's index
 * in `after`, or in `before` for a group that went).
 */
export function hookChanges(
  key: Uint8Array,
  policyId: string,
  before: readonly Group[],
  after: readonly Group[],
  prefix = "spec.groups",
): Change[] {
  const out: Change[] = [];
  const old = new Map(before.map((group, i) => [group.name, { group, i }]));
  const seen = new Set<string>();
  const compare = (at: number, a: Group | undefined, b: Group | undefined) => {
    for (const field of POLICY_HOOK_FIELDS) {
      const was = openPolicyHook(key, policyId, a, field);
      const is = openPolicyHook(key, policyId, b, field);
      if (was === is) {
        continue;
      }
      out.push({
        path: `${prefix}.${at}.${field}`,
        before: was === undefined ? null : "(set)",
        after: is === undefined ? "(removed)" : was === undefined ? "(set)" : "(changed)",
      });
    }
  };
  after.forEach((group, i) => {
    seen.add(group.name);
    compare(i, old.get(group.name)?.group, group);
  });
  for (const [name, { group, i }] of old) {
    if (!seen.has(name)) {
      compare(i, group, undefined);
    }
  }
  return out;
}
