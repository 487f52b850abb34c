import { describe, expect, it } from "vitest";
import { backupCommand, runBackup } from "../testing/backup-run.js";
import { recordedScenario, TEST_PASSWORD } from "../testing/job-run.js";
import { backupArgs } from "./backup-job.js";

const PASSWORD = TEST_PASSWORD;
const TREE = recordedScenario("0.18.0").tree;

describe("backup argv", () => {
  it("puts caps before the subcommand, per-job caps over host caps, excludes, and paths after --", async () => {
    const ran = await runBackup({
      command: backupCommand({
        includes: ["/etc", "-weird"],
        excludes: ["*.log", "/var/cache"],
        tag: "daily",
        bandwidth_up_kbps: 100,
      }),
      hostCaps: { up: 5, down: 7 },
      backup: { stdout: "", stderr: "", exitCode: 0 },
    });
    const [backup, snapshots] = ran.calls;
    // Both runs: the per-job upload cap and the host's download cap, before the subcommand.
    const global = [
      "--cache-dir",
      "/state/cache",
      "--limit-upload",
      "100",
      "--limit-download",
      "7",
      "--json",
    ];
    expect(backup?.args).toEqual([
      ...global,
      "backup",
      "--tag",
      "daily",
      "--exclude",
      "*.log",
      "--exclude",
      "/var/cache",
      "--",
      "/etc",
      "-weird",
    ]);
    expect(backup?.env.RESTIC_PASSWORD).toBe(PASSWORD);
    expect(snapshots?.args).toEqual([...global, "snapshots", "--no-lock"]);
    expect(backupArgs(backupCommand())).toEqual(["--tag", "t1", "--", TREE]);
    // Protocol 11: the host's stable name, as one argument so that no name reads as a flag.
    expect(backupArgs({ ...backupCommand(), host: "-web" })).toEqual([
      "--host=-web",
      "--tag",
      "t1",
      "--",
      TREE,
    ]);
  });
});

describe("the agent's own directories (issue 33)", () => {
  it("are excluded from every backup, as literal patterns after the group's own excludes", async () => {
    const ran = await runBackup({
      command: backupCommand({ includes: ["/"], excludes: ["*.log"] }),
      agentDirs: ["/etc/fleetback-agent", "/var/lib/fleetback-agent/", "/opt/agent[1]*"],
      backup: { stdout: "", stderr: "", exitCode: 0 },
    });
    const [backup] = ran.calls;
    expect(backup?.args.slice(backup.args.indexOf("backup"))).toEqual([
      "backup",
      "--tag",
      "t1",
      "--exclude",
      "*.log",
      "--exclude",
      "/etc/fleetback-agent",
      "--exclude",
      "/var/lib/fleetback-agent",
      "--exclude",
      "/opt/agent\\[1\\]\\*",
      "--",
      "/",
    ]);
    expect(ran.lines).toContainEqual({
      stream: "agent",
      line: "the agent's own directories are never backed up: /etc/fleetback-agent, /var/lib/fleetback-agent, /opt/agent[1]*",
    });
  });
});
