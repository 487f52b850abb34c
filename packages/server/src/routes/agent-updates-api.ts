/**
 * @module routes/agent-updates-api
 * `POST /api/agent-updates`: roll an agent version out to chosen hosts or all. Admin only: an
 * update ships code that runs as root on every host it reaches.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { readJson } from "../http/validate.js";
import {
  RolloutHostId,
  RolloutVersion,
  rollOutAgentUpdate,
  rolloutJson,
  rolloutSelection,
} from "../updates/rollout.js";

export const RolloutBody = Type.Object(
  {
    version: RolloutVersion,
    host_ids: Type.Optional(Type.Array(RolloutHostId, { minItems: 1, maxItems: 10_000 })),
    all: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
);

export function agentUpdateApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.post("/api/agent-updates", requireRole("admin"), async (c) => {
    const body = await readJson(c, RolloutBody);
    const audit = auditOf(c);
    const result = await rollOutAgentUpdate(
      deps,
      audit,
      body.version,
      rolloutSelection(body.host_ids, body.all),
    );
    return c.json(rolloutJson(result));
  });
  return routes;
}
