/**
 * The agent on a host as install.sh sets it up: the agent and its restore helper each run inside
 * the sandbox their generated systemd unit describes (support/unit-sandbox.ts: ProtectSystem=strict,
 * ReadWritePaths, ReadOnlyPaths, PrivateTmp, the capability bounding set, NoNewPrivileges; the
 * helper socket-activated by systemd-socket-activate), against the real server, rest-server and
 * restic 0.18 and 0.14:
 *
 * - a backup, then restores to the default dir, in place and to a custom absolute target, each
 *   bringing back bytes, modes and owners (written by the helper, which runs only the server's
 *   signed orders, its key pinned in the unit as install.sh pins it: the agent may not write);
 * - the agent's own writes outside its paths fail (a pre hook, its child, gets EROFS), and a restore
 *   into the agent's state dir is refused by the server, from the dirs its hello named;
 * - a local-path repository fails with the sentence naming --repo-path, and works once the
 *   installer's drop-in adds it to ReadWritePaths;
 * - deleting the host makes the agent exit 5, and the unit's RestartPreventExitStatus keeps it down.
 *
 * Everything lives under a directory in /var/lib (not /tmp: PrivateTmp hides /tmp from the agent),
 * removed afterwards.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  parseUnitDirectives,
  renderAgentUnit,
  renderRepoPathsDropIn,
  renderRestoreHelperUnit,
  renderRestoreSocketUnit,
} from "@fleetback/installer";
import { afterAll, describe, expect, it } from "vitest";
import { enrolHost, waitHostReady } from "./support/enrol.js";
import { eventually } from "./support/eventually.js";
import { agentBundle } from "./support/paths.js";
import { useStack, waitJob as waitJobOf } from "./support/stack.js";
import { type Supervised, startSupervised } from "./support/supervised.js";
import { FETCHED_TOOLS, missingNote, RESTIC, type ResticVersion, toolsPresent } from "./support/tools.js";
import { sandboxFromUnit } from "./support/unit-sandbox.js";

interface JobJson {
  id: string;
  status: string;
  error: string | null;
}

const FILES: Array<{ path: string; body: string; mode: number; uid: number; gid: number }> = [
  { path: "docs/plain.txt", body: "plain text\n", mode: 0o644, uid: 0, gid: 0 },
  { path: "docs/secret.conf", body: "owned by someone else\n", mode: 0o600, uid: 1234, gid: 2345 },
  { path: "docs/run.sh", body: "#!/bin/sh\necho hi\n", mode: 0o750, uid: 1234, gid: 0 },
  { path: "docs/nested/deep.bin", body: "x".repeat(70_000), mode: 0o640, uid: 0, gid: 2345 },
];

function expectTree(base: string): void {
  for (const file of FILES) {
    const path = join(base, file.path);
    expect(readFileSync(path, "utf8"), file.path).toBe(file.body);
    const stat = lstatSync(path);
    expect(stat.mode & 0o7777, `${file.path} mode`).toBe(file.mode);
    expect([stat.uid, stat.gid], `${file.path} owner`).toEqual([file.uid, file.gid]);
  }
}

const missing = missingNote({
  [FETCHED_TOOLS]: toolsPresent(),
  root: process.getuid?.() === 0,
  Linux: process.platform === "linux",
});

describe.skipIf(missing !== "")(`the agent under its systemd unit's sandbox${missing}`, () => {
  const stack = useStack();
  const roots: string[] = [];
  const processes: Array<{ stop(): Promise<unknown> }> = [];
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    for (const root of roots) {
      rmSync(root, { recursive: true, force: true });
    }
  });
  const waitJob = (jobId: string) => waitJobOf<JobJson>(stack.api, jobId);

  /** One installed host: dirs under /var/lib, the bundle and restic copied like install.sh puts them. */
  function layout(version: ResticVersion) {
    const root = mkdtempSync(join("/var/lib", "fleetback-e2e-sandbox-"));
    roots.push(root);
    const at = (...parts: string[]) => join(root, ...parts);
    const paths = {
      root,
      configDir: at("etc", "fleetback-agent"),
      stateDir: at("var", "lib", "fleetback-agent"),
      home: at("home"),
      restoreDir: at("home", "fleetback-restore"),
      bundleDir: at("opt", "fleetback-agent"),
      data: at("data"),
      units: at("units"),
    };
    for (const dir of Object.values(paths)) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    }
    chmodSync(root, 0o755);
    copyFileSync(agentBundle, join(paths.bundleDir, "current.mjs"));
    copyFileSync(RESTIC[version], join(paths.bundleDir, "restic"));
    chmodSync(join(paths.bundleDir, "restic"), 0o755);
    return {
      ...paths,
      at,
      bundle: join(paths.bundleDir, "current.mjs"),
      restic: join(paths.bundleDir, "restic"),
    };
  }

  type Layout = ReturnType<typeof layout>;

  /** The restore-order key the server's install.sh pins in the helper's unit (issue 34). */
  async function pinnedKey(): Promise<string> {
    const script = await (await fetch(`${stack.server.url}/install/install.sh`)).text();
    const key = /Environment=FLEETBACK_RESTORE_ORDER_KEY=(\S+)/.exec(script)?.[1];
    expect(key).toBeDefined();
    return key ?? "";
  }

  /** The units install.sh would write for this layout, written to disk as files. */
  function units(host: Layout, pinnedOrderKey: string) {
    const options = {
      execPath: process.execPath,
      bundle: host.bundle,
      configDir: host.configDir,
      stateDir: host.stateDir,
      restoreDir: host.restoreDir,
      bundleDir: host.bundleDir,
      serverUrl: stack.server.url,
      restoreSocket: host.at("run", "fleetback-agent-restore.sock"),
    };
    const agent = renderAgentUnit(options);
    const socket = renderRestoreSocketUnit(options);
    const helper = renderRestoreHelperUnit({ ...options, restoreOrderKey: pinnedOrderKey });
    writeFileSync(join(host.units, "fleetback-agent.service"), agent);
    writeFileSync(join(host.units, "fleetback-agent-restore.socket"), socket);
    writeFileSync(join(host.units, "fleetback-agent-restore.service"), helper);
    const listen = parseUnitDirectives(socket).find((d) => d.key === "ListenStream")?.value ?? "";
    mkdirSync(join(listen, ".."), { recursive: true });
    return { agent, helper, listen, agentFile: join(host.units, "fleetback-agent.service") };
  }

  /** systemd's part for the helper: a socket that starts it on the next connection, every time. */
  function startHelper(host: Layout, unit: string, listen: string) {
    let child: ChildProcess | undefined;
    let stopping = false;
    let output = "";
    const launch = () => {
      if (existsSync(listen)) {
        unlinkSync(listen);
      }
      const sandbox = sandboxFromUnit(unit, {
        cacheRoot: host.at("cache"),
        listen,
        env: { HOME: host.home, FLEETBACK_RESTIC: host.restic },
      });
      child = spawn(sandbox.command, sandbox.args, { env: sandbox.env, stdio: ["ignore", "pipe", "pipe"] });
      child.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.once("exit", () => {
        if (!stopping) {
          launch();
        }
      });
    };
    launch();
    const helper = {
      output: () => output,
      async stop() {
        stopping = true;
        if (child && child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((resolve) => child?.once("exit", resolve));
          child.kill("SIGTERM");
          await exited;
        }
      },
    };
    processes.push(helper);
    return helper;
  }

  function startAgentService(
    host: Layout,
    unit: string,
    unitFile: string,
    dropIns: string[] = [],
  ): Supervised {
    const sandbox = sandboxFromUnit(unit, {
      cacheRoot: host.at("cache"),
      dropIns,
      env: { HOME: host.home, FLEETBACK_RESTIC: host.restic, FLEETBACK_AGENT_LOG_LEVEL: "debug" },
    });
    const agent = startSupervised([sandbox.command, ...sandbox.args], sandbox.env, unitFile);
    processes.push(agent);
    return agent;
  }

  async function runGroup(hostId: string, groupId: string): Promise<JobJson> {
    const res = await stack.api.send<{ job_id: string }>(
      "POST",
      `/api/hosts/${hostId}/source-groups/${groupId}/run`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return waitJob(res.body.job_id);
  }

  async function restore(hostId: string, body: Record<string, unknown>): Promise<JobJson> {
    const res = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${hostId}/restore`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return waitJob(res.body.job_id);
  }

  for (const version of ["0.18", "0.14"] as const) {
    it(`restic ${version}: backup and restores to the default dir, in place and to a custom target; the agent alone writes nothing outside its paths`, async () => {
      const host = layout(version);
      const source = join(host.data, "tree");
      for (const file of FILES) {
        const path = join(source, file.path);
        mkdirSync(join(path, ".."), { recursive: true });
        writeFileSync(path, file.body);
        chmodSync(path, file.mode);
        chownSync(path, file.uid, file.gid);
      }
      const enrolled = await enrolHost({
        api: stack.api,
        rest: stack.rest,
        restic: version,
        user: `sandbox-${version.replace(".", "")}`,
        dirs: { configDir: host.configDir, stateDir: host.stateDir },
        resticPath: host.restic,
      });
      const unit = units(host, await pinnedKey());
      const helper = startHelper(host, unit.helper, unit.listen);
      const agent = startAgentService(host, unit.agent, unit.agentFile);
      await waitHostReady(stack.api, enrolled.hostId);

      const created = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${enrolled.hostId}/source-groups`,
        { name: "tree", includes: [source] },
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const backup = await runGroup(enrolled.hostId, created.body.source_group.id);
      expect(backup.status, backup.error ?? "").toBe("succeeded");
      const snapshot = await eventually(
        async () =>
          (
            await stack.api.get<{ snapshots: Array<{ id: string }> }>(
              `/api/hosts/${enrolled.hostId}/snapshots`,
            )
          ).snapshots[0],
        { what: "the snapshot in the cache" },
      );

      // The default directory ($HOME/fleetback-restore/...), the only restore target in the agent's own unit.
      const toDefault = await restore(enrolled.hostId, {
        snapshot_id: snapshot.id,
        paths: [join(source, "docs")],
        in_place: false,
        target_dir: "$HOME/fleetback-restore/default",
      });
      expect(toDefault.status, toDefault.error ?? "").toBe("succeeded");
      expectTree(join(host.restoreDir, "default", source));

      // A custom absolute target outside every path the agent's unit makes writable.
      const custom = host.at("restores", "custom target");
      const toCustom = await restore(enrolled.hostId, {
        snapshot_id: snapshot.id,
        paths: [join(source, "docs")],
        in_place: false,
        target_dir: custom,
      });
      expect(toCustom.status, toCustom.error ?? "").toBe("succeeded");
      expectTree(join(custom, source));

      // In place: changed bytes, mode and owner, and a deleted file, all come back.
      writeFileSync(join(source, "docs", "plain.txt"), "changed after the backup\n");
      chmodSync(join(source, "docs", "secret.conf"), 0o666);
      chownSync(join(source, "docs", "secret.conf"), 0, 0);
      rmSync(join(source, "docs", "run.sh"));
      const hostName = (await stack.api.get<{ host: { name: string } }>(`/api/hosts/${enrolled.hostId}`)).host
        .name;
      const inPlace = await restore(enrolled.hostId, {
        snapshot_id: snapshot.id,
        paths: [join(source, "docs")],
        in_place: true,
        confirm_hostname: hostName,
      });
      if (version === "0.14") {
        // restic 0.14 follows symlinks where it writes: its helper restores in place no more (issue 34).
        expect(inPlace.status).toBe("failed");
        expect(inPlace.error).toContain("restores in place only with restic 0.16 or later");
        expect(readFileSync(join(source, "docs", "plain.txt"), "utf8")).toBe("changed after the backup\n");
      } else {
        expect(inPlace.status, inPlace.error ?? "").toBe("succeeded");
        expectTree(source);
      }

      // A restore into the agent's own state dir: the server refuses it first, from the dirs the
      // agent's hello named (the helper's own refusal is the restore-helper's unit tests').
      const intoState = await stack.api.send<{ message: string }>(
        "POST",
        `/api/hosts/${enrolled.hostId}/restore`,
        {
          snapshot_id: snapshot.id,
          paths: [join(source, "docs")],
          in_place: false,
          target_dir: join(host.stateDir, "update"),
        },
      );
      expect(intoState.status).toBe(400);
      expect(intoState.body.message).toContain(
        `target_dir: would write into or over the agent's own directory ${host.stateDir}`,
      );
      expect(existsSync(join(host.stateDir, "update", source))).toBe(false);

      // The agent itself (here its pre hook, a child in its sandbox) cannot write outside its paths.
      const planted = join(host.data, "written-by-the-agent");
      const hooked = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${enrolled.hostId}/source-groups`,
        { name: "hooked", includes: [source], pre_hook: `echo x > ${planted}` },
      );
      expect(hooked.status, JSON.stringify(hooked.body)).toBe(201);
      const denied = await runGroup(enrolled.hostId, hooked.body.source_group.id);
      expect(denied.status).toBe("failed");
      const logs = await stack.api.get<{ lines: Array<{ line: string }> }>(`/api/jobs/${denied.id}/logs`);
      expect(logs.lines.map((entry) => entry.line).join("\n")).toMatch(/Read-only file system/);
      expect(existsSync(planted)).toBe(false);

      // Deleted host: exit 5, and RestartPreventExitStatus keeps the agent down.
      const deleted = await stack.api.send("DELETE", `/api/hosts/${enrolled.hostId}`);
      expect(deleted.status).toBe(204);
      expect(await agent.exited).toBe(5);
      expect(agent.output()).toContain(
        "supervisor: not restarting (exit status 5 is in RestartPreventExitStatus)",
      );
      expect(agent.starts()).toBe(1);

      // The repository password and the rest-server login never reached a command line, a
      // unit, or a log line.
      for (const text of [agent.output(), helper.output(), unit.agent, unit.helper]) {
        expect(text).not.toContain(enrolled.password);
        expect(text).not.toContain(enrolled.loginPassword);
      }
      expect(helper.output()).toContain("restore helper: restoring");
    });

    it(`restic ${version}: a local-path repository fails with the sentence naming --repo-path, and works with the installer's drop-in`, async () => {
      const host = layout(version);
      const repo = host.at("srv", "restic");
      writeFileSync(join(host.data, "file.txt"), "local repository\n");
      const enrolled = await enrolHost({
        api: stack.api,
        rest: stack.rest,
        restic: version,
        user: "unused",
        localRepository: repo,
        dirs: { configDir: host.configDir, stateDir: host.stateDir },
        resticPath: host.restic,
      });
      const unit = units(host, await pinnedKey());
      startHelper(host, unit.helper, unit.listen);
      const confined = startAgentService(host, unit.agent, unit.agentFile);
      const initJob = await eventually(
        async () => {
          const { host: row } = await stack.api.get<{
            host: { repository_init: { state: string; job_id?: string } };
          }>(`/api/hosts/${enrolled.hostId}`);
          return row.repository_init.state === "failed" ? row.repository_init.job_id : undefined;
        },
        { what: "the automatic init to fail", timeoutMs: 60_000 },
      );
      const failed = await waitJob(initJob);
      expect(failed.error).toBe(
        `the repository ${repo} is on a path this agent may not write (its systemd unit keeps everything but its own directories read-only): re-run the installer with --repo-path ${repo}, or add ReadWritePaths=${repo} with systemctl edit fleetback-agent`,
      );
      expect(existsSync(repo)).toBe(false);

      await confined.stop();
      mkdirSync(repo, { recursive: true, mode: 0o700 });
      startAgentService(host, unit.agent, unit.agentFile, [renderRepoPathsDropIn([repo])]);
      await eventually(
        async () =>
          (await stack.api.get<{ host: { status: string } }>(`/api/hosts/${enrolled.hostId}`)).host.status ===
          "online",
        { what: "the agent back online" },
      );
      const init = await stack.api.send<{ job_id: string }>("POST", `/api/hosts/${enrolled.hostId}/jobs`, {
        kind: "init",
      });
      expect(init.status, JSON.stringify(init.body)).toBe(201);
      const initialised = await waitJob(init.body.job_id);
      expect(initialised.status, initialised.error ?? "").toBe("succeeded");
      const created = await stack.api.send<{ source_group: { id: string } }>(
        "POST",
        `/api/hosts/${enrolled.hostId}/source-groups`,
        { name: "local", includes: [host.data] },
      );
      const backup = await runGroup(enrolled.hostId, created.body.source_group.id);
      expect(backup.status, backup.error ?? "").toBe("succeeded");
      expect(existsSync(join(repo, "config"))).toBe(true);
    });
  }
});
