import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  AGENT_CAPABILITIES,
  DEFAULT_AGENT_PATHS,
  parseUnitDirectives,
  renderAgentUnit,
} from "./systemd-unit.js";

const unit = renderAgentUnit({
  execPath: "/usr/bin/node",
  bundle: "/opt/fleetback-agent/agent.mjs",
  configDir: DEFAULT_AGENT_PATHS.configDir,
  stateDir: DEFAULT_AGENT_PATHS.stateDir,
  restoreDir: DEFAULT_AGENT_PATHS.restoreDir,
  serverUrl: "https://backup.example.org",
});
const directives = parseUnitDirectives(unit);
const service = (key: string) =>
  directives.filter((d) => d.section === "Service" && d.key === key).map((d) => d.value);

describe("agent systemd unit", () => {
  it("runs the agent as root and restarts it always", () => {
    expect(service("User")).toEqual(["root"]);
    expect(service("Restart")).toEqual(["always"]);
    expect(service("ExecStart")).toEqual([
      "/usr/bin/node /opt/fleetback-agent/agent.mjs run --config-dir /etc/fleetback-agent --state-dir /var/lib/fleetback-agent",
    ]);
  });

  it("forbids privilege escalation and keeps only the read and restore capabilities", () => {
    expect(service("NoNewPrivileges")).toEqual(["yes"]);
    expect(service("CapabilityBoundingSet")).toEqual([
      "CAP_DAC_READ_SEARCH CAP_DAC_OVERRIDE CAP_CHOWN CAP_FOWNER CAP_FSETID",
    ]);
    for (const [cap] of AGENT_CAPABILITIES) {
      expect(unit).toMatch(new RegExp(`^# ${cap}: .+\\.$`, "m"));
    }
  });

  it("makes the filesystem read-only but for config, state and the soft restore dir", () => {
    expect(service("ProtectSystem")).toEqual(["strict"]);
    expect(service("ReadWritePaths")).toEqual([
      "/etc/fleetback-agent /var/lib/fleetback-agent -/root/fleetback-restore",
    ]);
  });

  it("runs a single-executable agent by itself: no bundle argument", () => {
    const sea = renderAgentUnit({
      ...DEFAULT_AGENT_PATHS,
      execPath: "/opt/fleetback-agent/current",
      bundle: "",
      serverUrl: "https://backup.example.org",
    });
    expect(parseUnitDirectives(sea).filter((d) => d.key === "ExecStart")).toEqual([
      {
        section: "Service",
        key: "ExecStart",
        value:
          "/opt/fleetback-agent/current run --config-dir /etc/fleetback-agent --state-dir /var/lib/fleetback-agent",
      },
    ]);
    // Everything but the command line is the bundle unit's.
    const withoutExec = (text: string) => parseUnitDirectives(text).filter((d) => d.key !== "ExecStart");
    expect(withoutExec(sea)).toEqual(withoutExec(unit));
  });

  it("quotes paths with spaces in ExecStart", () => {
    const spaced = renderAgentUnit({
      execPath: "/opt/my node/node",
      bundle: "",
      configDir: "/etc/fb",
      stateDir: "/var/lib/fb",
      restoreDir: "/root/r",
      serverUrl: "http://x",
    });
    expect(parseUnitDirectives(spaced).find((d) => d.key === "ExecStart")?.value).toBe(
      '"/opt/my node/node" run --config-dir /etc/fb --state-dir /var/lib/fb',
    );
  });

  it("doubles % and $ in ExecStart so that systemd expands neither specifiers nor variables", () => {
    const odd = renderAgentUnit({
      execPath: "/opt/100%/$node",
      bundle: "",
      configDir: "/etc/fb",
      stateDir: "/var/lib/fb",
      restoreDir: "/root/r",
      serverUrl: "http://x",
    });
    expect(parseUnitDirectives(odd).find((d) => d.key === "ExecStart")?.value).toBe(
      "/opt/100%%/$$node run --config-dir /etc/fb --state-dir /var/lib/fb",
    );
  });

  it("lets a restore keep setuid and setgid bits (no RestrictSUIDSGID next to CAP_FSETID)", () => {
    expect(service("RestrictSUIDSGID")).toEqual([]);
  });
});

describe("systemd-analyze verify", () => {
  const analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].find((path) => existsSync(path));
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  /** Writes the unit next to an executable file standing in for what ExecStart names; verifies it. */
  async function verify(unitFor: (dir: string) => Promise<string>) {
    const dir = await mkdtemp(join(tmpdir(), "fleetback-unit-"));
    dirs.push(dir);
    const file = join(dir, "fleetback-agent.service");
    await writeFile(file, await unitFor(dir));
    return spawnSync(analyze ?? "", ["verify", file], { encoding: "utf8" });
  }

  it.skipIf(!analyze)("accepts the rendered unit", async () => {
    const result = await verify(async (dir) => {
      const bundle = join(dir, "agent.mjs");
      await writeFile(bundle, "");
      return renderAgentUnit({
        ...DEFAULT_AGENT_PATHS,
        execPath: process.execPath,
        bundle,
        serverUrl: "http://127.0.0.1:8080",
      });
    });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it.skipIf(!analyze)("accepts the unit of a single-executable agent", async () => {
    const result = await verify(async (dir) => {
      const sea = join(dir, "current");
      await writeFile(sea, "#!/bin/sh\n", { mode: 0o755 });
      return renderAgentUnit({
        ...DEFAULT_AGENT_PATHS,
        execPath: sea,
        bundle: "",
        serverUrl: "http://127.0.0.1:8080",
      });
    });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });
});
