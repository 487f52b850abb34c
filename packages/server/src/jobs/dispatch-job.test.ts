import { executeRows, hostCredentials, hosts, jobs } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq, sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { eventually } from "../testing/eventually.js";
import { createRecordingConnection } from "../testing/recording-connection.js";
import { bindCredentials, readJob, seedHost } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { runAutoInit } from "./auto-init.js";
import { createJob } from "./create-job.js";
import { startJob } from "./start-job.js";

const repo = { url: "s3:https://s3.example/bucket", password: "repo-pw" };
const admin = { url: "s3:https://s3.example/bucket", username: "root", password: "admin-pw" };

runDbSuite("job dispatch", (getDb, { engine }) => {
  it("answers offline without leaving a job row", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    const result = await startJob(deps, {
      kind: "check",
      hostId: host.id,
      actor: { kind: "user" },
      command: (id) => ({
        job_id: id,
        kind: "check",
        requires_admin_creds: false,
        check: { read_data_subset: "5%" },
      }),
      offline: "refuse",
    });
    expect(result).toEqual({ ok: false, reason: "offline" });
    expect(await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id))).toEqual([]);
  });

  it("sends the admin slot before a command that needs it, and refuses without one", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    const connection = createRecordingConnection(host.id);
    deps.hub.register(connection);
    const prune = {
      kind: "prune" as const,
      hostId: host.id,
      actor: { kind: "system" as const },
      command: (id: string) => ({ job_id: id, kind: "prune" as const, requires_admin_creds: true }),
      offline: "refuse" as const,
    };

    const refused = await startJob(deps, prune);
    expect(refused).toEqual({ ok: false, reason: "admin_credentials_missing" });
    expect(connection.frames).toEqual([]);
    expect(await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id))).toEqual([]);

    await bindCredentials(deps, host.id, { repo, admin });
    const sent = await startJob(deps, prune);
    expect(sent.ok).toBe(true);
    const jobId = sent.ok ? sent.job.id : "";
    expect(connection.frames.map((frame) => [frame.type, frame.payload])).toEqual([
      ["config.update", { slot: "admin", repository: admin }],
      ["command.run", { job_id: jobId, kind: "prune", requires_admin_creds: true }],
    ]);
    expect(await readJob(deps, jobId)).toMatchObject({
      status: "queued",
      kind: "prune",
      actorKind: "system",
    });
  });

  it("refuses a command that does not describe the job", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    await expect(
      startJob(deps, {
        id: "01JD0000000000000000000000",
        kind: "init",
        hostId: host.id,
        actor: { kind: "system" },
        command: () => ({ job_id: "01JD0000000000000000000001", kind: "init", requires_admin_creds: false }),
        offline: "refuse",
      }),
    ).rejects.toThrow(/does not describe/);
  });

  it("auto-inits once under concurrent calls, and leaves no row when the host is offline", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    await bindCredentials(deps, host.id, { repo });
    expect(await runAutoInit(deps, host.id)).toEqual({ action: "skipped", reason: "offline" });
    expect(await deps.db.select().from(jobs).where(eq(jobs.hostId, host.id))).toEqual([]);

    const connection = createRecordingConnection(host.id);
    deps.hub.register(connection);
    const outcomes = await Promise.all([1, 2, 3].map(() => runAutoInit(deps, host.id)));
    expect(outcomes.filter((outcome) => outcome.action === "dispatched")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.action === "skipped")).toEqual([
      { action: "skipped", reason: "init_in_history" },
      { action: "skipped", reason: "init_in_history" },
    ]);
    expect(connection.frames.filter((frame) => frame.type === "command.run")).toHaveLength(1);
  });

  it("makes a racing auto-init wait for the host lock and see the other's init", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    await bindCredentials(deps, host.id, { repo });
    deps.hub.register(createRecordingConnection(host.id));
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    let otherPid = 0;
    // Another server replica's auto-init, caught between its decision and its commit.
    const other = deps.db.transaction(async (tx) => {
      await tx.select({ id: hosts.id }).from(hosts).where(eq(hosts.id, host.id)).for("update");
      if (engine === "postgres") {
        const [row] = await executeRows<{ pid: number }>(tx, "select pg_backend_pid() as pid");
        otherPid = row?.pid ?? 0;
      }
      locked();
      await held;
      await createJob(deps, { hostId: host.id, kind: "init", actorKind: "system" }, tx);
    });
    await lockTaken;
    let transactions = 0;
    const watched = new Proxy(deps.db, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (property === "transaction") {
          return (...args: Parameters<typeof target.transaction>) => {
            transactions += 1;
            return target.transaction(...args);
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const racing = runAutoInit({ ...deps, db: watched }, host.id);
    // The racing call is shown to wait before the other commits: on PGlite (one session) from
    // the moment it asks for its transaction; on PostgreSQL once its session waits on the other's.
    expect(transactions).toBe(1);
    if (engine === "postgres") {
      await eventually(
        async () =>
          (
            await executeRows<{ waiting: number }>(
              deps.db,
              sql`select count(*)::int as waiting from pg_stat_activity where ${otherPid}::int = any(pg_blocking_pids(pid))`,
            )
          )[0]?.waiting,
        (waiting) => waiting === 1,
        { what: "the racing auto-init waiting on the host row lock" },
      );
    }
    release();
    await other;
    expect(await racing).toEqual({ action: "skipped", reason: "init_in_history" });
  });

  it("does not auto-init when the repository slot cannot be opened", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const { host } = await seedHost(deps);
    const other = await seedHost(deps, { name: "other" });
    await bindCredentials(deps, other.host.id, { repo });
    const [sealedForOther] = await deps.db
      .select({ repo: hostCredentials.repoSealed })
      .from(hostCredentials)
      .where(eq(hostCredentials.hostId, other.host.id));
    // Copied onto this host's row: the AAD names the other host, so it must not open here.
    await deps.db
      .insert(hostCredentials)
      .values({ hostId: host.id, repoSealed: sealedForOther?.repo ?? null });
    deps.hub.register(createRecordingConnection(host.id));
    expect(await runAutoInit(deps, host.id)).toEqual({ action: "skipped", reason: "no_repo_credentials" });
  });
});
