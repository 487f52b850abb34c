/**
 * The agent's directories as a snapshot names them, and how a path meets them (issue 33).
 */
import { mkdir, mkdtemp, realpath, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentDirForms, meetAgentDirs } from "./agent-dirs.js";

describe("agentDirForms", () => {
  it("names each directory as configured and, through a symlink, as resolved; never /", async () => {
    const base = await realpath(await mkdtemp(join(tmpdir(), "fleetback-forms-")));
    await mkdir(join(base, "real-config"));
    await symlink(join(base, "real-config"), join(base, "config"));
    await mkdir(join(base, "state"));
    expect(
      agentDirForms([join(base, "config"), `${join(base, "state")}/`, "/", join(base, "state")]),
    ).toEqual([join(base, "config"), join(base, "real-config"), join(base, "state")]);
  });

  it("keeps a directory that does not exist as configured", () => {
    expect(agentDirForms(["/nonexistent/fleetback-agent/../fleetback-agent"])).toEqual([
      "/nonexistent/fleetback-agent",
    ]);
  });
});

describe("meetAgentDirs", () => {
  const dirs = ["/etc/fleetback-agent", "/var/lib/fleetback-agent", "/opt/fleetback-agent"];

  it("finds the directory a path is or lies in", () => {
    expect(meetAgentDirs("/etc/fleetback-agent", dirs)).toEqual({
      within: "/etc/fleetback-agent",
      below: [],
    });
    expect(meetAgentDirs("/etc/fleetback-agent/agent.json", dirs).within).toBe("/etc/fleetback-agent");
  });

  it("finds the directories a path holds", () => {
    expect(meetAgentDirs("/etc", dirs)).toEqual({ within: undefined, below: ["/etc/fleetback-agent"] });
    expect(meetAgentDirs("/var", dirs).below).toEqual(["/var/lib/fleetback-agent"]);
    expect(meetAgentDirs("/", dirs).below).toEqual(dirs);
  });

  it("leaves siblings and name prefixes alone", () => {
    for (const path of [
      "/etc/fleetback-agent2",
      "/etc/fleetback",
      "/etc/nginx",
      "/var/lib/fleetback-agent.bak",
    ]) {
      expect(meetAgentDirs(path, dirs), path).toEqual({ within: undefined, below: [] });
    }
  });
});
