import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixtureHelp } from "../testing/job-run.js";
import { createMemoryLogger } from "../testing/memory-logger.js";
import { createToolFlagProbe, helpListsFlag } from "./flag-probe.js";
import { createReplayRunner, type Recording } from "./replay-adapter.js";
import { createRestic } from "./restic.js";

const helpOf = (version: "0.14.0" | "0.18.0") => fixtureHelp(version, "restore");

describe("helpListsFlag", () => {
  it.each([
    ["0.14.0", "--no-ownership", false],
    ["0.18.0", "--no-ownership", false],
    ["0.18.0", "--sparse", true],
    ["0.18.0", "--include", true],
  ] as const)("real restore --help of %s: %s listed is %s", (version, flag, listed) => {
    expect(helpListsFlag(helpOf(version), flag)).toBe(listed);
  });

  it.each([
    ["      --no-ownership   do not restore ownership", true],
    ["  -n, --no-ownership   short form too", true],
    ["Use --no-ownership to skip chown.", false],
    ["      --no-ownership-by-name   other flag", false],
  ])("needs the flag as an option, not a mention in prose or a longer flag: %j is %s", (help, listed) => {
    expect(helpListsFlag(help, "--no-ownership")).toBe(listed);
  });
});

describe("createToolFlagProbe", () => {
  const listing: Recording = {
    stdout: "      --no-ownership   do not restore ownership\n",
    stderr: "",
    exitCode: 0,
  };

  it("probes once per binary and version and keeps the answer in the state dir across restarts", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "fleetback-flags-"));
    const runner = createReplayRunner(listing);
    const probeOf = () =>
      createToolFlagProbe({
        restic: createRestic({ runner, command: "/usr/bin/restic", stateDir, parentEnv: {} }),
        stateDir,
        log: createMemoryLogger(),
      });
    const probe = probeOf();
    expect(await probe.supports("restore", "--no-ownership", "0.17.0")).toBe(true);
    expect(await probe.supports("restore", "--no-ownership", "0.17.0")).toBe(true);
    expect(runner.calls).toHaveLength(1);
    expect(runner.calls[0]?.args.slice(-2)).toEqual(["restore", "--help"]);
    expect(await probeOf().supports("restore", "--no-ownership", "0.17.0")).toBe(true);
    expect(runner.calls).toHaveLength(1);
    // Another version of the same binary path is asked again.
    expect(await probeOf().supports("restore", "--no-ownership", "0.17.1")).toBe(true);
    expect(runner.calls).toHaveLength(2);
  });

  it("a help that cannot be read means no flag, and is asked again next time", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "fleetback-flags-"));
    const runner = createReplayRunner({ stdout: "", stderr: "boom", exitCode: 1 });
    const probe = createToolFlagProbe({
      restic: createRestic({ runner, command: "restic", stateDir, parentEnv: {} }),
      stateDir,
      log: createMemoryLogger(),
    });
    expect(await probe.supports("restore", "--no-ownership", "0.17.0")).toBe(false);
    expect(await probe.supports("restore", "--no-ownership", "0.17.0")).toBe(false);
    expect(runner.calls).toHaveLength(2);
  });
});
