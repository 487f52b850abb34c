import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  exportedGroup,
  hookChanges,
  hookDigest,
  openPolicyHook,
  sealPolicyHooks,
  shownGroup,
} from "./policy-hooks.js";

const key = new Uint8Array(randomBytes(32));
const CANARY = "echo canary-7f3a1 && pg_dump -U app > /var/backups/app.sql";

function noText(value: unknown): void {
  expect(JSON.stringify(value)).not.toContain("canary-7f3a1");
}

describe("hooks in a policy's groups", () => {
  it("stores a given hook sealed, never as text, and opens it only under its own policy", () => {
    const [stored] = sealPolicyHooks(key, "p1", [{ name: "db", includes: ["/srv"], pre_hook: CANARY }]);
    noText(stored);
    expect(stored).not.toHaveProperty("pre_hook");
    expect(typeof stored?.pre_hook_sealed).toBe("string");
    expect(stored).not.toHaveProperty("post_hook_sealed");
    expect(openPolicyHook(key, "p1", stored, "pre_hook")).toBe(CANARY);
    expect(openPolicyHook(key, "p2", stored, "pre_hook")).toBeUndefined();
    expect(openPolicyHook(new Uint8Array(randomBytes(32)), "p1", stored, "pre_hook")).toBeUndefined();
  });

  it("keeps the current hook when the key is left out, removes it on null or empty, re-seals nothing unchanged", () => {
    const v1 = sealPolicyHooks(key, "p1", [
      { name: "db", pre_hook: CANARY, post_hook: "echo done" },
      { name: "etc" },
    ]);
    const kept = sealPolicyHooks(key, "p1", [{ name: "db" }, { name: "etc" }], v1);
    expect(kept[0]?.pre_hook_sealed).toBe(v1[0]?.pre_hook_sealed);
    expect(openPolicyHook(key, "p1", kept[0], "post_hook")).toBe("echo done");

    const same = sealPolicyHooks(key, "p1", [{ name: "db", pre_hook: CANARY }, { name: "etc" }], v1);
    expect(same[0]?.pre_hook_sealed).toBe(v1[0]?.pre_hook_sealed);

    const removed = sealPolicyHooks(key, "p1", [{ name: "db", pre_hook: null, post_hook: "" }], v1);
    expect(removed[0]).toEqual({ name: "db" });

    // Only a group of the same name carries a hook over.
    const renamed = sealPolicyHooks(key, "p1", [{ name: "database" }], v1);
    expect(renamed[0]).toEqual({ name: "database" });
    // A flag sent back from a GET is not taken for a hook.
    const flagged = sealPolicyHooks(key, "p1", [{ name: "etc", has_pre_hook: true }], v1);
    expect(flagged[0]).toEqual({ name: "etc" });
  });

  it("shows whether a group has each hook and exports neither text nor flag", () => {
    const [stored] = sealPolicyHooks(key, "p1", [{ name: "db", includes: ["/srv"], pre_hook: CANARY }]);
    if (!stored) {
      throw new Error("no group");
    }
    expect(shownGroup(stored)).toEqual({
      name: "db",
      includes: ["/srv"],
      has_pre_hook: true,
      has_post_hook: false,
    });
    expect(exportedGroup(stored)).toEqual({ name: "db", includes: ["/srv"] });
    // The export applied back keeps the hook: nothing changes.
    const again = sealPolicyHooks(key, "p1", [exportedGroup(stored)], [stored]);
    expect(hookChanges(key, "p1", [stored], again)).toEqual([]);
  });

  it("says a hook's change without its text", () => {
    const v1 = sealPolicyHooks(key, "p1", [{ name: "etc" }, { name: "db", pre_hook: CANARY }]);
    const v2 = sealPolicyHooks(
      key,
      "p1",
      [
        { name: "etc", post_hook: "echo canary-7f3a1 after" },
        { name: "db", pre_hook: `${CANARY} --again` },
      ],
      v1,
    );
    const changes = hookChanges(key, "p1", v1, v2);
    noText(changes);
    expect(changes).toEqual([
      { path: 'spec.groups["etc"].post_hook', before: null, after: "(set)" },
      { path: 'spec.groups["db"].pre_hook', before: "(set)", after: "(changed)" },
    ]);
    const v3 = sealPolicyHooks(key, "p1", [{ name: "etc" }], v2);
    expect(hookChanges(key, "p1", v2, v3)).toEqual([
      { path: 'spec.groups["db"].pre_hook', before: "(set)", after: "(removed)" },
    ]);
  });

  it("digests a hook with the server key: equal texts match, the digest is no plain hash", () => {
    const a = hookDigest(key, CANARY);
    expect(a).toBe(hookDigest(key, CANARY));
    expect(a).not.toBe(hookDigest(key, `${CANARY} `));
    expect(a).not.toBe(hookDigest(new Uint8Array(randomBytes(32)), CANARY));
    expect(hookDigest(key, undefined)).toBeNull();
  });
});
