/**
 * @module routes/diff
 * Compare two snapshots of a host: the snapshots tab's form and its JSON twin start a `diff` job
 * (actor `user`, audit `host.diff`); the job page renders its output (restore/diff-view.ts).
 * Both snapshots must be in the host's cached list and differ; an offline host answers 503.
 */
import type { Snapshot } from "@fleetback/db";
import { type Context, Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app.js";
import { type AppEnv, actorOf, requireRole } from "../auth/actor.js";
import { unavailable } from "../errors.js";
import { clientIp, redirectAfterPost } from "../http/render.js";
import { type FieldProblem, readForm, readJson } from "../http/validate.js";
import { startDiff } from "../restore/restore-jobs.js";
import { findHostSnapshot } from "../restore/restore-request.js";
import { requireHost } from "../sources/source-groups.js";
import { invalidFrom } from "./restore.js";

const DiffBody = Type.Object(
  { snapshot_a: Type.String({ maxLength: 64 }), snapshot_b: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);

export function diffRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const operator = requireRole("operator");

  async function diff(c: Context<AppEnv>, body: { snapshot_a: string; snapshot_b: string }) {
    const host = await requireHost(deps.db, c.req.param("id") ?? "");
    const problems: FieldProblem[] = [];
    const found: Snapshot[] = [];
    for (const field of ["snapshot_a", "snapshot_b"] as const) {
      const id = body[field].trim();
      const snapshot = id ? await findHostSnapshot(deps.db, host.id, id) : undefined;
      if (!snapshot) {
        problems.push({ field, message: id ? `${id} is not a snapshot of this host` : "choose a snapshot" });
      } else {
        found.push(snapshot);
      }
    }
    const [a, b] = found;
    if (a && b && a.id === b.id) {
      problems.push({ field: "snapshot_b", message: "choose a different snapshot than snapshot_a" });
    }
    if (problems.length > 0 || !a || !b) {
      throw invalidFrom(problems);
    }
    const started = await startDiff(deps, host.id, { a: a.id, b: b.id }, actorOf(c), clientIp(c));
    if (!started.ok) {
      throw unavailable(`${host.name} is offline; nothing was sent.`);
    }
    return started.job;
  }

  routes.post("/hosts/:id/diff", operator, async (c) => {
    const job = await diff(c, await readForm(c, DiffBody));
    return redirectAfterPost(c, `/jobs/${job.id}`);
  });
  routes.post("/api/hosts/:id/diff", operator, async (c) => {
    const job = await diff(c, await readJson(c, DiffBody));
    return c.json({ job_id: job.id }, 201);
  });
  return routes;
}
