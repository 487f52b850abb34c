/**
 * Issue 37.5's acceptance: a ring rollout to 20 simulated hosts (their agents' reports replayed
 * as the server receives them) halts at the ring whose failure threshold is crossed, and the
 * rings after it are never started.
 */
import { auditLog } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { readHost, seedAuditContext, seedHost } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { getRollout, ringViews, rolloutTick, startRingRollout } from "./ring-rollout.js";
import { moveUpdateState, recordUpdateResult } from "./update-state.js";

const VERSION = "2.0.0";

runDbSuite("agent rollout in rings", (getDb) => {
  async function setUp() {
    const deps = await createTestDeps({ db: getDb() });
    await deps.agentBundles.add(VERSION, new TextEncoder().encode("// fleetback-agent 2.0.0\n"));
    const audit = await seedAuditContext(deps);
    const ids: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      const ring: Record<string, string> = i < 2 ? { ring: "canary" } : {};
      const { host } = await seedHost(deps, {
        name: `sim-${String(i).padStart(2, "0")}`,
        agentVersion: "1.0.0",
        labels: { fleet: "sim", ...ring },
      });
      ids.push(host.id);
    }
    // What the server records when an agent reports: restarting, then its hello on the new version.
    const succeed = async (hostId: string) => {
      await recordUpdateResult(deps.db, hostId, { version: VERSION, status: "restarting" }, deps.clock.now());
      await moveUpdateState(deps.db, hostId, VERSION, ["restarting"], "succeeded", deps.clock.now());
    };
    const fail = (hostId: string) =>
      recordUpdateResult(
        deps.db,
        hostId,
        { version: VERSION, status: "refused", error: "disk full" },
        deps.clock.now(),
      );
    return { deps, audit, ids, succeed, fail };
  }

  it("waits for each ring, moves on when it reported, and halts at the ring whose failures pass its threshold", async () => {
    const { deps, audit, succeed, fail } = await setUp();
    const started = await startRingRollout(deps, audit, {
      version: VERSION,
      rings: [
        { selector: "ring=canary", max_failed: 0 },
        { selector: "fleet=sim", percent: 25, max_failed: 1 },
        { selector: "fleet=sim", max_failed: 2 },
      ],
    });
    const ring = (n: number) => started.ringHosts[n] ?? [];
    expect(ring(0)).toHaveLength(2);
    for (const id of ring(0)) {
      expect((await readHost(deps, id))?.updateState).toBe("pending");
    }
    // Nothing reported: the rollout waits.
    await rolloutTick(deps);
    expect((await getRollout(deps.db, started.id)).ring).toBe(0);

    await succeed(ring(0)[0] as string);
    await rolloutTick(deps);
    expect((await getRollout(deps.db, started.id)).ring).toBe(0);
    await succeed(ring(0)[1] as string);
    await rolloutTick(deps);
    const second = await getRollout(deps.db, started.id);
    expect(second.ring).toBe(1);
    // 25 % of the 18 hosts left, rounded up.
    const ring2 = second.ringHosts[1] ?? [];
    expect(ring2).toHaveLength(5);
    expect(ring2.some((id) => ring(0).includes(id))).toBe(false);

    await fail(ring2[0] as string);
    await succeed(ring2[1] as string);
    await rolloutTick(deps);
    expect((await getRollout(deps.db, started.id)).state).toBe("running");
    await fail(ring2[2] as string);
    await rolloutTick(deps);
    const halted = await getRollout(deps.db, started.id);
    expect(halted.state).toBe("halted");
    expect(halted.haltedReason).toBe(
      "ring 2 (fleet=sim, 25 %): 2 failed, more than the 1 it allows; 1 ring not started",
    );
    const views = await ringViews(deps.db, halted);
    expect(views.map((v) => [v.state, v.hosts, v.succeeded, v.failed, v.awaiting])).toEqual([
      ["done", 2, 2, 0, 0],
      ["halted", 5, 1, 2, 2],
      ["not started", 0, 0, 0, 0],
    ]);
    // The third ring's 13 hosts were never asked.
    expect(halted.ringHosts.flat()).toHaveLength(7);
    await rolloutTick(deps);
    expect((await getRollout(deps.db, started.id)).state).toBe("halted");
    const actions = (await deps.db.select({ action: auditLog.action }).from(auditLog)).map((a) => a.action);
    expect(actions.filter((a) => a.startsWith("agent."))).toEqual([
      "agent.rollout_start",
      "agent.update",
      "agent.update",
      "agent.rollout_halt",
    ]);
  });

  it("completes when the last ring has reported within its threshold", async () => {
    const { deps, audit, ids, succeed, fail } = await setUp();
    const started = await startRingRollout(deps, audit, {
      version: VERSION,
      rings: [
        { selector: "ring=canary", max_failed: 0 },
        { selector: "", max_failed: 1 },
      ],
    });
    await Promise.all((started.ringHosts[0] ?? []).map(succeed));
    await rolloutTick(deps);
    const rest = (await getRollout(deps.db, started.id)).ringHosts[1] ?? [];
    expect(rest).toHaveLength(18);
    await fail(rest[0] as string);
    await Promise.all(rest.slice(1).map(succeed));
    await rolloutTick(deps);
    expect((await getRollout(deps.db, started.id)).state).toBe("completed");
    expect(
      await deps.db.select().from(auditLog).where(eq(auditLog.action, "agent.rollout_complete")),
    ).toHaveLength(1);
    expect(ids).toHaveLength(20);
  });
});
