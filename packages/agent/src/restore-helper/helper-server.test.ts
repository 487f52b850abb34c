/**
 * The restore helper on a real Unix socket with real restic 0.18 and 0.14: the agent's side
 * (createRestic over createHelperRunner) restores into a target the helper creates, a refused
 * request comes back as one sentence and runs nothing, a cancel ends restic, and the canary
 * password reaches restic only: not the helper's log, not the argv. Every restore carries an order
 * signed as the server signs it (helper-orders.test.ts tries to get past them).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRestic } from "../restic/restic.js";
import type { ProcessSpec, ResticRunner } from "../restic/runner.js";
import { createSpawnRunner } from "../restic/spawn-adapter.js";
import { createOrderSigner } from "../testing/restore-orders.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";
import { createHelperRunner } from "./helper-runner.js";
import { createRestoreHelper, type RestoreHelper } from "./helper-server.js";
import { createOrderLedger } from "./order-ledger.js";

const CANARY = "canary-helper-9b1d-Pa55";

describe.each(RESTIC_VERSIONS)("restore helper with restic %s", (version) => {
  const binary = resticBinary(version) ?? "";
  describe.skipIf(binary === "")(`over a real socket${resticNote(version)}`, () => {
    const root = mkdtempSync(join(tmpdir(), `helper-${version}-`));
    const repo = join(root, "repo");
    const data = join(root, "data");
    const stateDir = join(root, "state");
    const socket = join(root, "restore.sock");
    const logs: string[] = [];
    const logWatchers = new Set<() => void>();
    /** The index of the first line from `from` on that `match` accepts, logged already or later. */
    const logged = (match: (line: string) => boolean, from = 0) =>
      new Promise<number>((resolve) => {
        const check = () => {
          const index = logs.findIndex((line, i) => i >= from && match(line));
          if (index >= 0) {
            logWatchers.delete(check);
            resolve(index);
          }
        };
        logWatchers.add(check);
        check();
      });
    const specs: ProcessSpec[] = [];
    let helper: RestoreHelper;
    let snapshot = "";
    const signer = createOrderSigner();
    const order = (target: string, paths: string[]) =>
      signer.order({ repository: repo, snapshot, paths, target });

    beforeAll(async () => {
      mkdirSync(join(data, "sub"), { recursive: true });
      mkdirSync(stateDir);
      writeFileSync(join(data, "sub", "a.txt"), "alpha\n", { mode: 0o640 });
      writeFileSync(join(data, "b[1].txt"), "beta\n");
      const env = { ...process.env, RESTIC_REPOSITORY: repo, RESTIC_PASSWORD: CANARY };
      expect(spawnSync(binary, ["init"], { env }).status).toBe(0);
      expect(spawnSync(binary, ["backup", data], { env }).status).toBe(0);
      const listed = spawnSync(binary, ["snapshots", "--json"], { env, encoding: "utf8" });
      snapshot = (JSON.parse(listed.stdout) as { id: string }[])[0]?.id ?? "";
      const spawn = createSpawnRunner();
      const recording: ResticRunner = {
        run(spec) {
          specs.push(spec);
          return spawn.run(spec);
        },
      };
      helper = createRestoreHelper({
        runner: recording,
        restic: binary,
        env: { PATH: process.env.PATH ?? "", HOME: root, RESTIC_PASSWORD: "helper-own-env-ignored" },
        cacheDir: join(root, "helper-cache"),
        protectedDirs: [stateDir],
        orderKey: signer.keys.publicKey,
        ledger: createOrderLedger(join(root, "helper-state")),
        stateDir: join(root, "helper-state"),
        now: () => new Date(),
        log: (message, fields) => {
          logs.push(`${message} ${JSON.stringify(fields ?? {})}`);
          for (const check of [...logWatchers]) {
            check();
          }
        },
      });
      await new Promise<void>((resolve) => helper.server.listen(socket, resolve));
    });
    afterAll(async () => {
      await helper.close();
    });

    const agentRestic = () =>
      createRestic({
        runner: createHelperRunner(socket),
        command: "restic",
        stateDir,
        parentEnv: process.env,
      });

    it("restores selected paths into a new target with bytes and modes", async () => {
      const target = join(root, "out", "deep");
      const lines: string[] = [];
      const result = await agentRestic().run({
        subcommand: "restore",
        args: [snapshot, "--target", target, "--include", `${data}/sub`, "--include", `${data}/b\\[1\\].txt`],
        repository: { url: repo, password: CANARY },
        restoreOrder: order(target, [`${data}/sub`, `${data}/b[1].txt`]),
        onLine: (line) => lines.push(line.text),
      });
      expect(result).toMatchObject({ kind: "exited", exitCode: 0, cancelled: false });
      expect(readFileSync(join(target, data, "sub", "a.txt"), "utf8")).toBe("alpha\n");
      expect(statSync(join(target, data, "sub", "a.txt")).mode & 0o777).toBe(0o640);
      expect(readFileSync(join(target, data, "b[1].txt"), "utf8")).toBe("beta\n");
      expect(statSync(target).mode & 0o777).toBe(0o700);
      const spec = specs.at(-1);
      expect(spec?.env.RESTIC_PASSWORD).toBe(CANARY);
      expect(spec?.args).toContain(join(root, "helper-cache"));
      expect(spec?.args).not.toContain(join(stateDir, "cache"));
      expect(JSON.stringify(spec?.args)).not.toContain(CANARY);
      expect(logs.join("\n")).not.toContain(CANARY);
      expect(lines.join("\n")).not.toContain(CANARY);
    });

    it("refuses a restore into the agent's state dir with one sentence and runs nothing", async () => {
      const before = specs.length;
      const result = await agentRestic().run({
        subcommand: "restore",
        args: [snapshot, "--target", join(stateDir, "update"), "--include", `${data}/sub`],
        repository: { url: repo, password: CANARY },
        onLine: () => {},
      });
      expect(result).toMatchObject({ kind: "spawn_failed" });
      expect(result.kind === "spawn_failed" && result.error).toBe(
        `restore helper: a restore may not write to ${join(stateDir, "update")}: it is in or over the agent's own directory ${stateDir}`,
      );
      expect(specs.length).toBe(before);
    });

    it("refuses a non-empty target with restic older than 0.16 (it follows symlinks there), not with newer", async () => {
      const target = join(root, "non-empty");
      mkdirSync(target);
      writeFileSync(join(target, "left-over"), "x");
      const result = await agentRestic().run({
        subcommand: "restore",
        args: [snapshot, "--target", target, "--include", `${data}/sub`],
        repository: { url: repo, password: CANARY },
        restoreOrder: order(target, [`${data}/sub`]),
        onLine: () => {},
      });
      if (version.startsWith("0.14")) {
        expect(result.kind === "spawn_failed" && result.error).toMatch(
          /is not empty \(restic older than 0\.16 follows symlinks where it writes/,
        );
        expect(specs.at(-1)?.args).toEqual(["version"]);
      } else {
        expect(result).toMatchObject({ kind: "exited", exitCode: 0 });
      }
    });

    it("refuses anything but a restore", async () => {
      const result = await agentRestic().run({
        subcommand: "backup",
        args: [data],
        repository: { url: repo, password: CANARY },
        onLine: () => {},
      });
      expect(result.kind === "spawn_failed" && result.error).toBe(
        'restore helper: the restore helper runs only restic restore; it refuses "backup"',
      );
    });

    it("says how to enable the helper when its socket is missing", async () => {
      const result = await createRestic({
        runner: createHelperRunner(join(root, "absent.sock")),
        command: "restic",
        stateDir,
        parentEnv: process.env,
      }).run({
        subcommand: "restore",
        args: [snapshot, "--target", join(root, "x"), "--include", data],
        repository: { url: repo, password: CANARY },
        onLine: () => {},
      });
      expect(result.kind === "spawn_failed" && result.error).toContain(
        "enable it with systemctl enable --now fleetback-agent-restore.socket",
      );
    });

    it("a cancel closes the connection and the helper ends restic", async () => {
      const abort = new AbortController();
      const running = agentRestic().run({
        subcommand: "restore",
        args: [snapshot, "--target", join(root, "cancelled"), "--include", data],
        repository: { url: repo, password: CANARY },
        restoreOrder: order(join(root, "cancelled"), [data]),
        signal: abort.signal,
        onLine: () => {},
      });
      // Cancelled once the helper says it runs this restore, however long the machine took to get there.
      const restoring = await logged(
        (line) => line.startsWith("restoring") && line.includes(`"target":"${join(root, "cancelled")}"`),
      );
      abort.abort();
      expect(await running).toMatchObject({ kind: "exited", cancelled: true });
      // The helper's own record of that restore ends: restic was stopped or had finished.
      await logged((line) => line.startsWith("restore ended"), restoring);
      expect(logs.filter((line) => line.startsWith("restore ended")).length).toBeGreaterThanOrEqual(2);
    });
  });
});
