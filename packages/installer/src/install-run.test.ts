import { spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_AGENT_PATHS,
  parseUnitDirectives,
  renderAgentUnit,
  renderRestoreHelperUnit,
  renderRestoreSocketUnit,
} from "./systemd-unit.js";
import {
  TEST_BASE_URL as BASE,
  createSandbox,
  FIRST_INSTALL_SYSTEMCTL,
  findOnPath,
  fileMode as mode,
  runOutput as output,
  type RunResult,
  type Sandbox,
  sandboxPerTest,
  TEST_TOKEN as TOKEN,
  tokenEnrolment,
  AGENT_UNIT as UNIT,
} from "./testing/install-sandbox.js";

const sandbox = sandboxPerTest();
/** What a re-run asks of systemctl after the first install: the service restarts, not starts. */
const SYSTEMCTL_INSTALL_THEN_RERUN = [
  ...FIRST_INSTALL_SYSTEMCTL,
  "daemon-reload",
  "enable --now fleetback-agent-restore.socket",
  "restart fleetback-agent",
];

describe("--label", () => {
  it("passes every label to the agent's enrolment, in order", async () => {
    const sb = await sandbox();
    const result = sb.run(await sb.installScript(), [
      "--token",
      TOKEN,
      "--label",
      "env=prod",
      "--label=example.com/role=db",
    ]);
    expect(result.status, output(result)).toBe(0);
    const [call] = await sb.agentCalls();
    expect(call?.command).toBe("enroll");
    expect(call?.argv.slice(-4)).toEqual(["--label", "env=prod", "--label", "example.com/role=db"]);
  });

  it("refuses a label that is not key=value before installing anything", async () => {
    for (const label of ["env", "env=a b", "=prod", "env=$(id)"]) {
      const sb = await sandbox();
      const result = sb.run(await sb.installScript(), ["--token", TOKEN, "--label", label]);
      expect(result.status, label).not.toBe(0);
      expect(output(result), label).toContain("--label must be key=value");
      expect(await sb.agentCalls(), label).toEqual([]);
    }
  });
});

describe("a fresh install with --token", () => {
  let sb: Sandbox;
  let result: RunResult;
  const at = (path: string) => join(sb.root, path);

  beforeAll(async () => {
    sb = await createSandbox();
    result = sb.run(await sb.installScript(), ["--token", TOKEN]);
    return () => sb.dispose();
  });

  it("succeeds without printing the token", () => {
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(output(result)).not.toContain(TOKEN);
  });

  it("creates config, state and restore dirs root-owned with mode 0700", async () => {
    for (const dir of [
      DEFAULT_AGENT_PATHS.configDir,
      DEFAULT_AGENT_PATHS.stateDir,
      DEFAULT_AGENT_PATHS.restoreDir,
    ]) {
      expect(mode(at(dir)), dir).toBe(0o700);
      expect(await sb.calls("chown")).toContain(`0:0 -- ${at(dir)}`);
    }
  });

  it("installs the verified bundle under its version and points current.mjs at it", async () => {
    const bundle = at("opt/fleetback-agent/agent-1.0.0.mjs");
    expect(mode(at("opt/fleetback-agent"))).toBe(0o755);
    expect(mode(bundle)).toBe(0o644);
    expect(readlinkSync(at("opt/fleetback-agent/current.mjs"))).toBe("agent-1.0.0.mjs");
    expect(readdirSync(at("opt/fleetback-agent")).sort()).toEqual(["agent-1.0.0.mjs", "current.mjs"]);
    const [download, ...more] = await sb.calls("curl");
    expect(more).toEqual([]);
    expect(download).toMatch(
      /^-fsSL --retry 3 -o \/\S+ https:\/\/backup\.example\.test:8443\/install\/agent\/1\.0\.0$/,
    );
  });

  it("enrols once, handing the token over in FLEETBACK_ENROLL_TOKEN and not in argv", async () => {
    const calls = await sb.agentCalls();
    expect(calls).toEqual([tokenEnrolment(sb, "bundle")]);
    expect(mode(at(`${DEFAULT_AGENT_PATHS.configDir}/agent.json`))).toBe(0o600);
  });

  it("writes the unit of renderAgentUnit, mode 0644, with the node found on PATH", () => {
    const unit = readFileSync(at(UNIT), "utf8");
    expect(mode(at(UNIT))).toBe(0o644);
    expect(unit).toBe(
      renderAgentUnit({
        ...DEFAULT_AGENT_PATHS,
        execPath: sb.nodePath,
        bundle: "/opt/fleetback-agent/current.mjs",
        serverUrl: BASE,
      }),
    );
    const service = (key: string) =>
      parseUnitDirectives(unit)
        .filter((d) => d.section === "Service" && d.key === key)
        .map((d) => d.value);
    expect(service("User")).toEqual(["root"]);
    expect(service("NoNewPrivileges")).toEqual(["yes"]);
    expect(service("CapabilityBoundingSet")).toEqual(["CAP_DAC_READ_SEARCH"]);
    expect(service("ProtectSystem")).toEqual(["strict"]);
    expect(service("ReadWritePaths")).toEqual([
      "/etc/fleetback-agent /var/lib/fleetback-agent -/root/fleetback-restore",
    ]);
    expect(service("ExecStart")).toEqual([
      `${sb.nodePath} /opt/fleetback-agent/current.mjs run --config-dir /etc/fleetback-agent --state-dir /var/lib/fleetback-agent`,
    ]);
  });

  it("reloads systemd, then enables and starts the service", async () => {
    expect(await sb.calls("systemctl")).toEqual(FIRST_INSTALL_SYSTEMCTL);
  });

  it("leaves no temporary files behind", () => {
    expect(readdirSync(join(sb.root, "..", "tmp"))).toEqual([]);
    expect(readdirSync(at("etc/systemd/system"))).toEqual([
      "fleetback-agent-restore.service",
      "fleetback-agent-restore.socket",
      "fleetback-agent.service",
    ]);
  });

  const analyze = findOnPath("systemd-analyze");
  it("writes the restore helper's socket and service with the same node and bundle", () => {
    const options = {
      ...DEFAULT_AGENT_PATHS,
      execPath: sb.nodePath,
      bundle: "/opt/fleetback-agent/current.mjs",
      serverUrl: BASE,
    };
    expect(readFileSync(at("etc/systemd/system/fleetback-agent-restore.socket"), "utf8")).toBe(
      renderRestoreSocketUnit(options),
    );
    expect(readFileSync(at("etc/systemd/system/fleetback-agent-restore.service"), "utf8")).toBe(
      renderRestoreHelperUnit(options),
    );
    expect(mode(at("etc/systemd/system/fleetback-agent-restore.service"))).toBe(0o644);
  });

  it.skipIf(!analyze)(
    `writes units that systemd-analyze verify accepts, every one of them${analyze ? "" : " (skipped: systemd-analyze not installed; Debian package systemd)"}`,
    () => {
      const units = [
        "fleetback-agent.service",
        "fleetback-agent-restore.socket",
        "fleetback-agent-restore.service",
      ];
      const verify = spawnSync(
        analyze ?? "",
        ["verify", ...units.map((u) => at(`etc/systemd/system/${u}`))],
        {
          encoding: "utf8",
          env: { ...process.env, SYSTEMD_UNIT_PATH: `${at("etc/systemd/system")}:` },
        },
      );
      expect(verify.stderr).toBe("");
      expect(verify.status).toBe(0);
    },
  );
});

describe("re-running the installer", () => {
  it("keeps the enrolment and files, downloads nothing and restarts instead of enabling", async () => {
    const sb = await sandbox();
    const script = await sb.installScript();
    expect(sb.run(script, ["--token", TOKEN]).status).toBe(0);
    const snapshot = () =>
      [UNIT, "etc/fleetback-agent/agent.json", "opt/fleetback-agent/agent-1.0.0.mjs"].map((path) => ({
        path,
        text: readFileSync(join(sb.root, path), "utf8"),
        mode: mode(join(sb.root, path)),
      }));
    const before = snapshot();

    const again = sb.run(script, ["--token", TOKEN]);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain("already enrolled");
    expect(output(again)).not.toContain(TOKEN);
    expect(snapshot()).toEqual(before);
    expect(await sb.agentCalls()).toHaveLength(1);
    expect(await sb.calls("curl")).toHaveLength(1);
    expect(await sb.calls("systemctl")).toEqual(SYSTEMCTL_INSTALL_THEN_RERUN);
  });

  it("removes the self-update boot record so that the version installed now runs", async () => {
    const sb = await sandbox();
    const update = join(sb.root, DEFAULT_AGENT_PATHS.stateDir, "update");
    expect(sb.run(await sb.installScript("1.0.0"), ["--token", TOKEN]).status).toBe(0);
    // What a self-update to 1.1.0 leaves behind: the artefact and the record naming it.
    mkdirSync(update, { recursive: true });
    writeFileSync(join(update, "agent-1.1.0.mjs"), "// fleetback-agent 1.1.0\n");
    writeFileSync(join(update, "boot.json"), '{"active":{"version":"1.1.0"}}\n');

    const again = sb.run(await sb.installScript("1.0.0"), []);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain("removed /var/lib/fleetback-agent/update/boot.json");
    expect(readdirSync(update)).toEqual(["agent-1.1.0.mjs"]);
    expect(await sb.calls("systemctl")).toEqual(SYSTEMCTL_INSTALL_THEN_RERUN);

    const third = sb.run(await sb.installScript("1.0.0"), []);
    expect(third.status).toBe(0);
    expect(third.stdout).not.toContain("boot.json");
  });

  it("without options upgrades an enrolled host to the script's agent version", async () => {
    const sb = await sandbox();
    expect(sb.run(await sb.installScript("1.0.0"), ["--token", TOKEN]).status).toBe(0);
    const upgrade = sb.run(await sb.installScript("1.1.0"), []);
    expect(upgrade.status).toBe(0);
    expect(readlinkSync(join(sb.root, "opt/fleetback-agent/current.mjs"))).toBe("agent-1.1.0.mjs");
    expect(lstatSync(join(sb.root, "opt/fleetback-agent/agent-1.1.0.mjs")).isFile()).toBe(true);
    expect(await sb.agentCalls()).toHaveLength(1);
  });
});

describe("restic and systemd", () => {
  it("installs restic with the distribution's package manager when it is missing", async () => {
    const sb = await sandbox();
    await sb.removeStub("restic");
    await sb.stub("apt-get");
    expect(sb.run(await sb.installScript(), ["--token", TOKEN]).status).toBe(0);
    expect(await sb.calls("apt-get")).toEqual(["update -qq", "install -y -qq restic"]);
  });

  it("warns and carries on when restic cannot be installed", async () => {
    const sb = await sandbox();
    await sb.removeStub("restic");
    await sb.stub("dnf", "exit 1");
    const result = sb.run(await sb.installScript(), ["--token", TOKEN]);
    expect(result.status).toBe(0);
    expect(await sb.calls("dnf")).toEqual(["install -y restic"]);
    expect(result.stderr).toContain("could not install restic");
  });

  it("writes the unit but leaves systemctl alone where systemd is not running", async () => {
    const sb = await sandbox();
    spawnSync("rm", ["-r", join(sb.root, "run")]);
    const result = sb.run(await sb.installScript(), ["--token", TOKEN]);
    expect(result.status).toBe(0);
    expect(result.stderr).toContain("systemd is not running");
    expect(existsSync(join(sb.root, UNIT))).toBe(true);
    expect(await sb.calls("systemctl")).toEqual([]);
  });
});
