/**
 * @module routes/agent-updates-pages
 * The fleet page's rollout form (`POST /agent-updates`). Admin only: an update ships code that
 * runs as root on every host it reaches.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { redirectAfterPost } from "../http/render.js";
import { readForm } from "../http/validate.js";
import { RolloutHostId, RolloutVersion, rollOutAgentUpdate, rolloutSelection } from "../updates/rollout.js";

const RolloutForm = Type.Object(
  {
    version: RolloutVersion,
    host_ids: Type.Optional(Type.Union([RolloutHostId, Type.Array(RolloutHostId, { maxItems: 10_000 })])),
    all: Type.Optional(Type.Literal("1")),
  },
  { additionalProperties: false },
);

export function agentUpdatePageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.post("/agent-updates", requireRole("admin"), async (c) => {
    const form = await readForm(c, RolloutForm);
    const hostIds = form.host_ids === undefined ? undefined : [form.host_ids].flat();
    // On the page "all hosts" wins over any ticked host.
    const selection =
      form.all === "1" ? rolloutSelection(undefined, true) : rolloutSelection(hostIds, undefined);
    const result = await rollOutAgentUpdate(deps, auditOf(c), form.version, selection);
    const outcome = new URLSearchParams({
      rollout: result.version,
      requested: String(result.targets.length),
      already: String(result.skipped.length),
    });
    return redirectAfterPost(c, `/hosts?${outcome}`);
  });
  return routes;
}
