/**
 * @module updates/ring-rollout
 * An agent update in rings (issue 37.5): each ring is the hosts a selector matches that no earlier
 * ring took (a share of them when it says so), and starts only when every host of the ring before
 * has reported; the rollout halts at the first ring whose failed updates pass its threshold, and
 * the rings after it are never started. A ring is started by the ordinary rollout (rollout.ts),
 * so its hosts are sent the update now or at their next hello; the rollout ticker moves rings on.
 * Hosts that already run the version are taken by no ring: they have nothing to report.
 */
import {
  type AgentRollout,
  agentRollouts,
  type Database,
  hosts,
  type RolloutRing,
  type UpdateState,
  withAdvisoryLock,
} from "@fleetback/db";
import { and, asc, desc, eq, inArray, ne, notInArray } from "drizzle-orm";
import { type Static, Type } from "typebox";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import { invalid, notFound } from "../errors.js";
import { parseSelector, selectorFromRequest } from "../labels/selector.js";
import { selectorSql } from "../labels/selector-sql.js";
import { type RolloutDeps, RolloutVersion, rollOutAgentUpdate } from "./rollout.js";

const FAILED: readonly UpdateState[] = ["refused", "rolled_back", "failed"];
export const ROLLOUT_TICK_PERIOD_MS = 5_000;

export const RingRolloutBody = Type.Object(
  {
    version: RolloutVersion,
    rings: Type.Array(
      Type.Object(
        {
          selector: Type.String({ maxLength: 4096, description: "the ring's hosts; empty: every host left" }),
          percent: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 100,
              description: "this share of the hosts the selector leaves",
            }),
          ),
          max_failed: Type.Optional(
            Type.Integer({
              minimum: 0,
              description: "failed updates the ring may have before the rollout halts (default 0)",
            }),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 10 },
    ),
  },
  { additionalProperties: false },
);
export type RingRolloutBody = Static<typeof RingRolloutBody>;

export interface RingView {
  index: number;
  selector: string;
  percent: number | null;
  max_failed: number;
  state: "running" | "done" | "halted" | "not started";
  hosts: number;
  succeeded: number;
  failed: number;
  awaiting: number;
}

/** The hosts of ring `index`: its selector's, minus every earlier ring's and those on the version. */
async function ringMembers(db: Database, rollout: AgentRollout, index: number): Promise<string[]> {
  const ring = rollout.rings[index] as RolloutRing;
  const taken = rollout.ringHosts.slice(0, index).flat();
  const rows = await db
    .select({ id: hosts.id })
    .from(hosts)
    .where(
      and(
        selectorSql(hosts.labels, parseSelector(ring.selector)),
        ne(hosts.agentVersion, rollout.version),
        taken.length > 0 ? notInArray(hosts.id, taken) : undefined,
      ),
    )
    .orderBy(asc(hosts.id));
  const ids = rows.map((row) => row.id);
  return ring.percent === undefined ? ids : ids.slice(0, Math.ceil((ids.length * ring.percent) / 100));
}

type Counts = { succeeded: number; failed: number; awaiting: number };

async function countRing(db: Database, rollout: AgentRollout, ids: readonly string[]): Promise<Counts> {
  const counts: Counts = { succeeded: 0, failed: 0, awaiting: 0 };
  if (ids.length === 0) {
    return counts;
  }
  const rows = await db
    .select({ agentVersion: hosts.agentVersion, version: hosts.updateVersion, state: hosts.updateState })
    .from(hosts)
    .where(inArray(hosts.id, [...ids]));
  for (const row of rows) {
    if (
      row.agentVersion === rollout.version ||
      (row.version === rollout.version && row.state === "succeeded")
    ) {
      counts.succeeded += 1;
    } else if (row.version === rollout.version && row.state !== null && FAILED.includes(row.state)) {
      counts.failed += 1;
    } else {
      counts.awaiting += 1;
    }
  }
  // A host deleted meanwhile has nothing left to report.
  return counts;
}

const SYSTEM = { actor: "system", ip: undefined } as const;

/**
 * Starts ring `from` (or the next with any host), or ends the rollout when no ring is left.
 * Returns the rollout as stored afterwards.
 */
async function startRing(deps: RolloutDeps, rollout: AgentRollout, from: number): Promise<AgentRollout> {
  let index = from;
  const ringHosts = [...rollout.ringHosts];
  while (index < rollout.rings.length) {
    const members = await ringMembers(deps.db, { ...rollout, ringHosts }, index);
    ringHosts[index] = members;
    if (members.length > 0) {
      await rollOutAgentUpdate(deps, SYSTEM, rollout.version, { hostIds: members });
      break;
    }
    index += 1;
  }
  const done = index >= rollout.rings.length;
  const [stored] = await deps.db
    .update(agentRollouts)
    .set({
      ring: Math.min(index, rollout.rings.length - 1),
      ringHosts,
      state: done ? "completed" : "running",
      updatedAt: deps.clock.now(),
    })
    .where(eq(agentRollouts.id, rollout.id))
    .returning();
  if (done) {
    await writeAudit(deps.db, deps, {
      actor: "system",
      action: "agent.rollout_complete",
      targetKind: "agent_rollout",
      targetId: rollout.id,
      details: { version: rollout.version, hosts: ringHosts.flat().length },
    });
  }
  return stored ?? rollout;
}

export async function startRingRollout(
  deps: RolloutDeps,
  audit: AuditContext,
  body: RingRolloutBody,
): Promise<AgentRollout> {
  const rings: RolloutRing[] = body.rings.map((ring, i) => {
    selectorFromRequest(ring.selector, `rings.${i}.selector`);
    return {
      selector: ring.selector.trim(),
      ...(ring.percent === undefined ? {} : { percent: ring.percent }),
      max_failed: ring.max_failed ?? 0,
    };
  });
  const stored = await deps.agentBundles.read(body.version);
  if (!stored.ok) {
    throw invalid(
      `version: this server holds no agent ${body.version} (GET /api/agent-versions lists them)`,
      [{ field: "version", message: "not held by this server" }],
    );
  }
  const now = deps.clock.now();
  const [created] = await deps.db.transaction(async (tx) => {
    const row = await tx
      .insert(agentRollouts)
      .values({
        id: deps.ids.ulid(now),
        version: body.version,
        state: "running",
        rings,
        actorUserId: audit.actor.userId,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await writeAudit(tx, deps, {
      ...audit,
      action: "agent.rollout_start",
      targetKind: "agent_rollout",
      targetId: row[0]?.id,
      details: { version: body.version, rings },
    });
    return row;
  });
  if (!created) {
    throw new Error("insert into agent_rollouts returned no row");
  }
  return startRing(deps, created, 0);
}

/** Moves each running rollout on: halts it, starts its next ring, or leaves it waiting. */
export async function rolloutTick(deps: RolloutDeps): Promise<void> {
  await withAdvisoryLock(deps.db, "agent-rollouts", async (tx) => {
    const running = await tx.select().from(agentRollouts).where(eq(agentRollouts.state, "running"));
    const txDeps = { ...deps, db: tx };
    for (const rollout of running) {
      const ring = rollout.rings[rollout.ring] as RolloutRing;
      const counts = await countRing(tx, rollout, rollout.ringHosts[rollout.ring] ?? []);
      if (counts.failed > ring.max_failed) {
        const left = rollout.rings.length - rollout.ring - 1;
        const reason = `ring ${rollout.ring + 1} (${ring.selector || "every host"}${ring.percent ? `, ${ring.percent} %` : ""}): ${counts.failed} failed, more than the ${ring.max_failed} it allows; ${left === 0 ? "it was the last ring" : `${left} ring${left === 1 ? "" : "s"} not started`}`;
        await tx
          .update(agentRollouts)
          .set({ state: "halted", haltedReason: reason, updatedAt: deps.clock.now() })
          .where(eq(agentRollouts.id, rollout.id));
        await writeAudit(tx, deps, {
          actor: "system",
          action: "agent.rollout_halt",
          targetKind: "agent_rollout",
          targetId: rollout.id,
          details: { version: rollout.version, ring: rollout.ring + 1, ...counts, reason },
        });
        deps.log.warn({ rollout_id: rollout.id, reason }, "agent rollout halted");
        continue;
      }
      if (counts.awaiting === 0) {
        await startRing(txDeps, rollout, rollout.ring + 1);
      }
    }
  });
}

export async function ringViews(db: Database, rollout: AgentRollout): Promise<RingView[]> {
  const views: RingView[] = [];
  for (const [index, ring] of rollout.rings.entries()) {
    const ids = rollout.ringHosts[index] ?? [];
    const counts = await countRing(db, rollout, ids);
    const started = index < rollout.ringHosts.length && (index < rollout.ring || index === rollout.ring);
    const state: RingView["state"] = !started
      ? "not started"
      : index < rollout.ring || rollout.state === "completed"
        ? "done"
        : rollout.state === "halted"
          ? "halted"
          : "running";
    views.push({
      index: index + 1,
      selector: ring.selector,
      percent: ring.percent ?? null,
      max_failed: ring.max_failed,
      state,
      hosts: ids.length,
      ...counts,
    });
  }
  return views;
}

/** The newest rollouts (the API's and the page's list), each with its rings as they stand. */
export async function listRollouts(
  db: Database,
  limit = 50,
): Promise<Array<{ rollout: AgentRollout; rings: RingView[] }>> {
  const rows = await db.select().from(agentRollouts).orderBy(desc(agentRollouts.id)).limit(limit);
  const listed = [];
  for (const rollout of rows) {
    listed.push({ rollout, rings: await ringViews(db, rollout) });
  }
  return listed;
}

export async function getRollout(db: Database, id: string): Promise<AgentRollout> {
  const [row] = await db.select().from(agentRollouts).where(eq(agentRollouts.id, id));
  if (!row) {
    throw notFound(`No agent rollout ${id}`);
  }
  return row;
}

export function rolloutView(rollout: AgentRollout, rings: RingView[]) {
  return {
    id: rollout.id,
    version: rollout.version,
    state: rollout.state,
    ring: rollout.ring + 1,
    halted_reason: rollout.haltedReason,
    rings,
    created_at: rollout.createdAt.toISOString(),
    updated_at: rollout.updatedAt.toISOString(),
  };
}
