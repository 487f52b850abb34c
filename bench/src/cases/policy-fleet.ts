/**
 * @module cases/policy-fleet
 * Issue 37.6: a policy change that touches every host of a 10,000-host fleet under 50 policies is
 * computed and its pushes queued in a few seconds. The fleet is seeded in bulk: every host has an
 * env, a role and a zone label; 49 policies `env=…,role=…` each cover one pair's share of the
 * fleet with a group and a schedule, and one policy (`base`, empty selector) covers every host.
 *
 * The subject is `updatePolicy` of `base`, alternating between two versions that differ in its
 * group's excludes, its pre-backup hook and its schedule's cron, so every round changes a group
 * (its hook opened from every host's row, sealed anew for each) and a schedule on every host: one transaction with the new version, the plan, the writes, the audit entry. The hosts
 * are offline (no agent runs here), so "pushes queued" is the schedule_version bump on each host
 * row, which the agent receives as its schedule.set at its next hello; the round checks that
 * every host's version moved. The part spent computing (reading the fleet and planning every
 * host, what a preview does) is measured alone with `previewPolicy`; the writes are the rest.
 *
 * The baseline is the floor any fleet-wide change pays on the same database: a bulk label edit of
 * the same hosts (one UPDATE of every host row, in a transaction), with a label no selector reads.
 *
 * PGlite always; PostgreSQL too when FLEETBACK_BENCH_DATABASE_URL names a server (a new database).
 */
import { performance } from "node:perf_hooks";
import { connect, executeRows, IN_MEMORY, migrate } from "@fleetback/db";
import {
  createIds,
  createLogger,
  createPolicy,
  type PolicyBody,
  previewPolicy,
  updatePolicy,
} from "@fleetback/server";
import { sql } from "drizzle-orm";
import { type BudgetRow, engineOf } from "../budgets.js";
import { type BenchResult, median } from "../harness.js";
import { onScratchDatabase } from "../scratch-database.js";

/** "A few seconds" (issue 37.6), for the whole change on one 2-core machine. */
export const POLICY_FLEET_BUDGET_MS = 5000;

const ENVS = ["prod", "staging", "dev", "test", "qa"];
const ROLES = ["db", "web", "cache", "queue", "batch", "api", "mail", "dns", "proxy", "storage"];
const ZONES = 8;

type StoreDeps = Parameters<typeof updatePolicy>[0];

export interface PolicyFleetReport {
  results: BenchResult[];
  budgets: BudgetRow[];
  notes: string[];
}

function baseBody(round: number): PolicyBody {
  const even = round % 2 === 0;
  return {
    name: "base",
    selector: "",
    spec: {
      groups: [
        {
          name: "system",
          includes: ["/etc", "/var/lib"],
          excludes: even ? ["*.tmp"] : ["*.tmp", "*.cache"],
          retention_policy: { daily: 7, weekly: 4 },
          pre_hook: even ? "/usr/local/bin/quiesce --all" : "/usr/local/bin/quiesce --all --fast",
        },
      ],
      schedules: [{ name: "nightly", cron: even ? "0 2 * * *" : "30 2 * * *", groups: ["system"] }],
    },
  };
}

/** The 49 narrow policies: every env and role pair but the last, so one share has `base` alone. */
function narrowBodies(): PolicyBody[] {
  const bodies: PolicyBody[] = [];
  for (const env of ENVS) {
    for (const role of ROLES) {
      bodies.push({
        name: `${env}-${role}`,
        selector: `env=${env},role=${role}`,
        spec: {
          groups: [{ name: `app-${role}`, includes: [`/srv/${role}`], excludes: ["*.log"] }],
          schedules: [{ name: "hourly", cron: "15 * * * *", groups: [`app-${role}`] }],
        },
      });
    }
  }
  return bodies.slice(0, -1);
}

async function runOn(label: string, databaseUrl: string | undefined, hostCount: number, rounds: number) {
  const connection = await connect({ dataDir: IN_MEMORY, ...(databaseUrl ? { databaseUrl } : {}) });
  try {
    const db = connection.db;
    await migrate(db);
    await db.execute(sql`insert into users (id, username, password_hash, role)
      values ('bench-admin', 'bench-admin', 'x', 'admin')`);
    const deps: StoreDeps = {
      db,
      clock: { now: () => new Date() } as StoreDeps["clock"],
      ids: createIds(),
      // Every host is offline: pushSchedules skips them, their set goes out at the next hello.
      hub: { isOnline: () => false, send: () => false } as unknown as StoreDeps["hub"],
      log: createLogger("silent"),
      keys: { secret: new Uint8Array(32).fill(7) } as StoreDeps["keys"],
    };
    const audit = {
      actor: {
        userId: "bench-admin",
        username: "bench-admin",
        role: "admin" as const,
        via: "api_token" as const,
      },
      ip: undefined,
    };
    // Policies first, on an empty fleet, so creating them costs nothing; the first (unmeasured)
    // update of `base` below gives every host its groups and schedules.
    const base = await createPolicy(deps, audit, baseBody(1));
    for (const body of narrowBodies()) {
      await createPolicy(deps, audit, body);
    }
    await db.execute(sql`insert into hosts (id, name, restic_host, os, arch, agent_version, labels)
      select 'h' || i, 'host-' || i, 'host-' || i, 'linux', 'x64', '0.1.0',
             jsonb_build_object(
               'env', (${sql.raw(`array[${ENVS.map((e) => `'${e}'`).join(",")}]`)})[1 + i % ${ENVS.length}],
               'role', (${sql.raw(`array[${ROLES.map((r) => `'${r}'`).join(",")}]`)})[1 + (i / ${ENVS.length}) % ${ROLES.length}],
               'zone', 'z' || (i % ${ZONES}))
      from generate_series(1, ${hostCount}) as i`);
    const seeded = await updatePolicy(deps, audit, base.id, baseBody(0));
    if (seeded.plan.hosts_covered !== hostCount) {
      throw new Error(`base covers ${seeded.plan.hosts_covered} hosts, expected ${hostCount}`);
    }

    const versionSum = async () =>
      Number(
        (await executeRows<{ sum: string }>(db, sql`select sum(schedule_version)::text as sum from hosts`))[0]
          ?.sum,
      );
    const total: number[] = [];
    const compute: number[] = [];
    const baseline: number[] = [];
    let changed = 0;
    for (let round = 1; round <= rounds; round++) {
      const before = await versionSum();
      let started = performance.now();
      const result = await updatePolicy(deps, audit, base.id, baseBody(round));
      total.push(performance.now() - started);
      changed = result.plan.hosts_changed;
      const bumped = (await versionSum()) - before;
      if (changed !== hostCount || bumped !== hostCount) {
        throw new Error(
          `round ${round}: ${changed} hosts changed, ${bumped} versions bumped, expected ${hostCount}`,
        );
      }
      started = performance.now();
      await previewPolicy(deps, baseBody(round + 1), base.id);
      compute.push(performance.now() - started);
      started = performance.now();
      await db.transaction(async (tx) => {
        await tx.execute(sql`update hosts set labels = labels || jsonb_build_object('bench-round', ${String(round)}::text),
          updated_at = now()`);
      });
      baseline.push(performance.now() - started);
    }
    const totalMs = median(total);
    const computeMs = median(compute);
    const baselineMs = median(baseline);
    const name = `policy change over ${hostCount.toLocaleString("en")} hosts, 50 policies (${label})`;
    const baselineName = `bulk label edit of the same hosts (${label})`;
    return {
      result: {
        name,
        baselineName,
        subjectNsPerOp: totalMs * 1e6,
        baselineNsPerOp: baselineMs * 1e6,
        ratio: totalMs / baselineMs,
      } satisfies BenchResult,
      budget: {
        id: "P6",
        engine: engineOf(label),
        case: name,
        measured: totalMs,
        unit: "ms",
        baselineName,
        baseline: baselineMs,
        budget: POLICY_FLEET_BUDGET_MS,
      } satisfies BudgetRow,
      note:
        `policies (${label}): updatePolicy of the policy over every host took ${totalMs.toFixed(0)} ms ` +
        `(median of ${rounds}; ${total.map((ms) => ms.toFixed(0)).join(", ")}), of which reading and planning ` +
        `the fleet ${computeMs.toFixed(0)} ms and writing ${Math.max(0, totalMs - computeMs).toFixed(0)} ms; ` +
        `${changed} hosts changed, each schedule_version bumped (offline: the schedule.set waits for the hello).`,
    };
  } finally {
    await connection.close();
  }
}

export async function runPolicyFleetBench(hostCount: number): Promise<PolicyFleetReport> {
  const report: PolicyFleetReport = { results: [], budgets: [], notes: [] };
  const rounds = Number(process.env.FLEETBACK_BENCH_POLICY_ROUNDS ?? "3");
  const targets: Array<[string, string | undefined]> = [["PGlite", undefined]];
  const databaseUrl = process.env.FLEETBACK_BENCH_DATABASE_URL;
  if (databaseUrl) {
    targets.push(["PostgreSQL", databaseUrl]);
  } else {
    report.notes.push(
      "policies on PostgreSQL: skipped, FLEETBACK_BENCH_DATABASE_URL is not set (a PostgreSQL server).",
    );
  }
  for (const [label, url] of targets) {
    const { result, budget, note } = await onScratchDatabase(url, (scratch) =>
      runOn(label, scratch, hostCount, rounds),
    );
    report.results.push(result);
    report.budgets.push(budget);
    report.notes.push(note);
  }
  return report;
}
