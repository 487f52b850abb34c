/**
 * @module routes/agent-updates-api
 * `POST /api/agent-updates`: roll an agent version out to chosen hosts or all. Admin only: an
 * update ships code that runs as root on every host it reaches.
 */

import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { apiGroup } from "../openapi/api-route.js";
import { Rollout } from "../openapi/fleet-access-schemas.js";
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
    selector: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: "the hosts a label selector matches (not empty)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const AGENT_UPDATE_API = apiGroup<AppDeps>({ tag: "Agent updates" });

AGENT_UPDATE_API.add({
  id: "rollOutAgentUpdate",
  method: "post",
  path: "/api/agent-updates",
  summary: "Roll an agent version out to chosen hosts, a selector's hosts, or all",
  description: "Online hosts are sent the update at once, the others when they next connect.",
  access: "admin",
  body: RolloutBody,
  responses: { 200: { description: "The hosts targeted and the ones skipped.", schema: Rollout } },
  handler: async (c, { body }, deps) => {
    const audit = auditOf(c);
    const result = await rollOutAgentUpdate(
      deps,
      audit,
      body.version,
      rolloutSelection(body.host_ids, body.all, body.selector),
    );
    return c.json(rolloutJson(result));
  },
});

export function agentUpdateApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return AGENT_UPDATE_API.routes(deps);
}
