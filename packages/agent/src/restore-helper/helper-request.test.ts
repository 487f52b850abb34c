import { mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planRestore, protectedHit, unescapeInclude, writtenPaths } from "./helper-request.js";

const restore = (...rest: string[]) => [
  "--cache-dir",
  "/var/lib/fleetback-agent/cache",
  "--json",
  "restore",
  ...rest,
];

describe("planRestore: the helper runs restic restore and nothing else", () => {
  it("keeps the agent's restore argv, with its own cache dir instead of the agent's read-only one", () => {
    const planned = planRestore(
      [...restore("0123abcd", "--target", "/srv/r", "-vv", "--include", "/etc/a\\[1\\]")],
      "/var/cache/fleetback-agent-restore",
    );
    expect(planned).toEqual({
      ok: true,
      plan: {
        snapshot: "0123abcd",
        target: "/srv/r",
        includes: ["/etc/a[1]"],
        args: [
          "--cache-dir",
          "/var/cache/fleetback-agent-restore",
          "--json",
          "restore",
          "0123abcd",
          "--target",
          "/srv/r",
          "-vv",
          "--include",
          "/etc/a\\[1\\]",
        ],
      },
    });
    const noCache = planRestore(
      ["--limit-download", "512", "restore", "0123abcd", "--target", "/", "--include", "/x"],
      undefined,
    );
    expect(noCache.ok && noCache.plan.args).toEqual([
      "--no-cache",
      "--limit-download",
      "512",
      "restore",
      "0123abcd",
      "--target",
      "/",
      "--include",
      "/x",
    ]);
  });

  it.each([
    [["backup", "/etc"], "only restic restore"],
    [["--option", "x=1", "restore", "0123abcd", "--target", "/t", "--include", "/a"], 'refuses "--option"'],
    [
      ["restore", "0123abcd", "--target", "/t", "--include", "/a", "--password-command", "sh"],
      "refuses the restore option",
    ],
    [
      ["restore", "0123abcd", "--target", "/t", "--include", "/a", "--target", "/u"],
      "refuses the restore option",
    ],
    [["restore", "--target", "/t"], "snapshot id"],
    [["restore", "0123abcd", "--target", "rel", "--include", "/a"], "absolute, normalised --target"],
    [["restore", "0123abcd", "--target", "/t/../etc", "--include", "/a"], "absolute, normalised --target"],
    [["restore", "0123abcd", "--target", "/t"], "selected paths only"],
    [
      ["--limit-upload", "1;rm", "restore", "0123abcd", "--target", "/t", "--include", "/a"],
      'refuses "--limit-upload"',
    ],
  ])("refuses %j", (args, message) => {
    const planned = planRestore(args, undefined);
    expect(planned.ok).toBe(false);
    expect(planned.ok ? "" : planned.error).toContain(message);
  });

  it("unescapes include patterns the way restic/literal-pattern.ts escapes them", () => {
    expect(unescapeInclude("/srv/a\\*b\\?\\[c\\]\\\\d")).toBe("/srv/a*b?[c]\\d");
  });
});

describe("protectedHit: no restore lands in or over the agent's own directories", () => {
  const root = mkdtempSync(join(tmpdir(), "helper-protect-"));
  const config = join(root, "etc", "fleetback-agent");
  const state = join(root, "var", "lib", "fleetback-agent");
  mkdirSync(config, { recursive: true });
  mkdirSync(state, { recursive: true });
  mkdirSync(join(root, "srv"), { recursive: true });
  symlinkSync(join(root, "var", "lib"), join(root, "srv", "link-to-lib"));
  const dirs = [config, state];

  it("allows a target beside them and an in-place restore of other paths", () => {
    expect(
      protectedHit(writtenPaths({ target: join(root, "srv", "out"), includes: ["/etc/hosts"] }), dirs),
    ).toBeUndefined();
    expect(
      protectedHit(writtenPaths({ target: "/", includes: [join(root, "srv", "data")] }), dirs),
    ).toBeUndefined();
  });

  it("refuses a target inside one, a path over one, / in place, and a symlink that leads into one", () => {
    expect(protectedHit(writtenPaths({ target: join(state, "x"), includes: ["/a"] }), dirs)?.dir).toBe(state);
    expect(protectedHit(writtenPaths({ target: "/", includes: [join(root, "etc")] }), dirs)?.dir).toBe(
      config,
    );
    expect(protectedHit(writtenPaths({ target: "/", includes: ["/"] }), dirs)).toBeDefined();
    const viaLink = protectedHit(
      writtenPaths({
        target: join(root, "srv", "link-to-lib", "fleetback-agent", "update"),
        includes: ["/a"],
      }),
      dirs,
    );
    expect(viaLink?.dir).toBe(state);
    expect(
      protectedHit(
        writtenPaths({ target: join(root, "srv", "link-to-lib"), includes: ["/fleetback-agent"] }),
        dirs,
      )?.dir,
    ).toBe(state);
  });
});
