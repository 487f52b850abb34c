// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the shell forms ${HOME} and ${USER} are the input under test
import { describe, expect, it } from "vitest";
import { expandRestoreTarget } from "./restore-target.js";

describe("expandRestoreTarget", () => {
  it.each([
    ["$HOME/fleetback-restore/01J/", "/root/fleetback-restore/01J"],
    ["${HOME}/fleetback-restore/01J", "/root/fleetback-restore/01J"],
    ["~/restored", "/root/restored"],
    ["$HOME", "/root"],
    ["/srv/restore//x/./y/", "/srv/restore/x/y"],
    ["/", "/"],
  ])("%s -> %s", (target, dir) => {
    expect(expandRestoreTarget(target, "/root")).toEqual({ ok: true, dir });
  });

  it.each(["$OTHER/x", "/srv/$USER/x", "${HOME2}/x", "$HOMEX/y", "${PWD}"])("refuses %s", (target) => {
    const result = expandRestoreTarget(target, "/root");
    expect(result).toMatchObject({ ok: false });
    expect(result.ok ? "" : result.error).toMatch(/variable other than \$HOME; nothing was restored/);
  });

  it("refuses relative paths and a home form without HOME", () => {
    expect(expandRestoreTarget("restore/x", "/root")).toMatchObject({ ok: false });
    expect(expandRestoreTarget("C:\\restore", "/root")).toMatchObject({ ok: false });
    expect(expandRestoreTarget("~/x", undefined)).toMatchObject({
      ok: false,
      error: expect.stringContaining("HOME is not set"),
    });
    expect(expandRestoreTarget("$HOME/x", "relative")).toMatchObject({ ok: false });
  });
});
