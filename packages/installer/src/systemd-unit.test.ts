import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  AGENT_CAPABILITIES,
  DEFAULT_AGENT_PATHS,
  parseUnitDirectives,
  RESTORE_CAPABILITIES,
  renderAgentUnit,
  renderRepoPathsDropIn,
  renderRestoreHelperUnit,
  renderRestoreSocketUnit,
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

  it("does not restart an agent that exited revoked, deleted, too old or misconfigured; 75 is restarted", () => {
    // The agent's exit statuses (fleetback-agent --help): 2 usage, 3 not enrolled, 4 refused,
    // 5 revoked or deleted, 6 protocol too old; 75 asks for the restart of an update.
    expect(service("RestartPreventExitStatus")).toEqual(["2 3 4 5 6"]);
    expect(service("RestartPreventExitStatus")[0]?.split(" ")).not.toContain("75");
  });

  it("sends restores to the restore helper's socket", () => {
    expect(service("Environment")).toContain("FLEETBACK_RESTORE_SOCKET=/run/fleetback-agent-restore.sock");
    expect(directives.filter((d) => d.section === "Unit" && d.key === "Wants").map((d) => d.value)).toEqual([
      "network-online.target fleetback-agent-restore.socket",
    ]);
  });

  it("forbids privilege escalation and keeps only the capability to read every file", () => {
    expect(service("NoNewPrivileges")).toEqual(["yes"]);
    expect(service("CapabilityBoundingSet")).toEqual(["CAP_DAC_READ_SEARCH"]);
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

  it.each([
    {
      what: "quotes paths with spaces in ExecStart",
      execPath: "/opt/my node/node",
      execStart: '"/opt/my node/node" run --config-dir /etc/fb --state-dir /var/lib/fb',
    },
    {
      what: "doubles % and $ in ExecStart so that systemd expands neither specifiers nor variables",
      execPath: "/opt/100%/$node",
      execStart: "/opt/100%%/$$node run --config-dir /etc/fb --state-dir /var/lib/fb",
    },
  ])("$what", ({ execPath, execStart }) => {
    const rendered = renderAgentUnit({
      execPath,
      bundle: "",
      configDir: "/etc/fb",
      stateDir: "/var/lib/fb",
      restoreDir: "/root/r",
      serverUrl: "http://x",
    });
    expect(parseUnitDirectives(rendered).find((d) => d.key === "ExecStart")?.value).toBe(execStart);
  });
});

describe("restore helper units", () => {
  const options = {
    ...DEFAULT_AGENT_PATHS,
    execPath: "/usr/bin/node",
    bundle: "/opt/fleetback-agent/current.mjs",
    serverUrl: "https://b.example",
  };
  const helper = parseUnitDirectives(renderRestoreHelperUnit(options));
  const socket = parseUnitDirectives(renderRestoreSocketUnit(options));
  const get = (list: typeof helper, section: string, key: string) =>
    list.filter((d) => d.section === section && d.key === key).map((d) => d.value);

  it("listens on a root-only socket and starts one helper for it", () => {
    expect(get(socket, "Socket", "ListenStream")).toEqual(["/run/fleetback-agent-restore.sock"]);
    expect(get(socket, "Socket", "SocketMode")).toEqual(["0600"]);
    expect(get(socket, "Socket", "SocketUser")).toEqual(["root"]);
    expect(get(socket, "Socket", "Accept")).toEqual(["no"]);
  });

  it("runs restore-helper with only what restoring needs, the agent's own dirs read-only", () => {
    expect(get(helper, "Service", "ExecStart")).toEqual([
      "/usr/bin/node /opt/fleetback-agent/current.mjs restore-helper --config-dir /etc/fleetback-agent --state-dir /var/lib/fleetback-agent",
    ]);
    expect(get(helper, "Service", "NoNewPrivileges")).toEqual(["yes"]);
    expect(get(helper, "Service", "CapabilityBoundingSet")).toEqual([
      RESTORE_CAPABILITIES.map(([cap]) => cap).join(" "),
    ]);
    expect(get(helper, "Service", "CapabilityBoundingSet")[0]).not.toMatch(
      /SYS_ADMIN|SETUID|SETGID|NET_|SYS_PTRACE/,
    );
    expect(get(helper, "Service", "ReadOnlyPaths")).toEqual([
      "/etc/fleetback-agent /var/lib/fleetback-agent /opt/fleetback-agent",
    ]);
    // No PrivateTmp: a restore to /tmp/x must land in the host's /tmp, not a private one.
    expect(get(helper, "Service", "PrivateTmp")).toEqual([]);
    // A restore keeps setuid and setgid bits (no RestrictSUIDSGID next to CAP_FSETID).
    expect(get(helper, "Service", "RestrictSUIDSGID")).toEqual([]);
    // Nothing secret in a unit property (systemctl show is readable by every user).
    expect(renderRestoreHelperUnit(options)).not.toMatch(/PASSWORD|TOKEN/i);
  });

  it("pins the server's restore-order key and keeps used orders where the agent cannot write", () => {
    const key = Buffer.alloc(32, 9).toString("base64");
    const pinned = parseUnitDirectives(renderRestoreHelperUnit({ ...options, restoreOrderKey: key }));
    expect(get(pinned, "Service", "Environment")).toContain(`FLEETBACK_RESTORE_ORDER_KEY=${key}`);
    expect(get(pinned, "Service", "StateDirectory")).toEqual(["fleetback-agent-restore"]);
    expect(get(pinned, "Service", "StateDirectoryMode")).toEqual(["0700"]);
    // Device nodes are no part of a restore an operator asks for (issue 34): no CAP_MKNOD.
    expect(get(pinned, "Service", "CapabilityBoundingSet")[0]).not.toContain("CAP_MKNOD");
    // Without a key the helper refuses every restore; the unit says so.
    expect(renderRestoreHelperUnit(options)).toContain("refuses every restore");
    expect(() =>
      renderRestoreHelperUnit({ ...options, restoreOrderKey: "not a key\nExecStart=/bin/sh" }),
    ).toThrow(RangeError);
  });
});

const analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].find((path) => existsSync(path));

describe(`systemd-analyze verify${analyze ? "" : " (skipped: systemd-analyze not installed; Debian package systemd)"}`, () => {
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

  it.skipIf(!analyze)(
    "accepts every unit the installer writes, together, with a repo-path drop-in",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "fleetback-units-"));
      dirs.push(dir);
      const bundle = join(dir, "agent.mjs");
      await writeFile(bundle, "");
      const options = {
        ...DEFAULT_AGENT_PATHS,
        execPath: process.execPath,
        bundle,
        serverUrl: "http://127.0.0.1:8080",
      };
      await writeFile(join(dir, "fleetback-agent.service"), renderAgentUnit(options));
      await writeFile(join(dir, "fleetback-agent-restore.socket"), renderRestoreSocketUnit(options));
      await writeFile(join(dir, "fleetback-agent-restore.service"), renderRestoreHelperUnit(options));
      await mkdir(join(dir, "fleetback-agent.service.d"));
      await writeFile(
        join(dir, "fleetback-agent.service.d", "repo-paths.conf"),
        renderRepoPathsDropIn(["/srv/restic"]),
      );
      const result = spawnSync(
        analyze ?? "",
        [
          "verify",
          ...[
            "fleetback-agent.service",
            "fleetback-agent-restore.socket",
            "fleetback-agent-restore.service",
          ].map((f) => join(dir, f)),
        ],
        { encoding: "utf8", env: { ...process.env, SYSTEMD_UNIT_PATH: `${dir}:` } },
      );
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
    },
  );

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
