/**
 * @module routes/agent-updates
 * Agent rollout: `POST /api/agent-updates` and the fleet page's form. Admin only: an update ships
 * code that runs as root on every host it reaches.
 */
import { type Context, Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app.js";
import { writeAudit } from "../audit/audit.js";
import { type Actor, type AppEnv, requireRole } from "../auth/actor.js";
import { RequestError } from "../errors.js";
import { clientIp, redirectAfterPost } from "../http/render.js";
import { readForm, readJson } from "../http/validate.js";
import { type RolloutResult, rollOutAgentUpdate, rolloutJson, rolloutSelection } from "../updates/rollout.js";

const Version = Type.String({ minLength: 1, maxLength: 64 });
const HostId = Type.String({ minLength: 1, maxLength: 64 });

const RolloutBody = Type.Object(
  {
    version: Version,
    host_ids: Type.Optional(Type.Array(HostId, { minItems: 1, maxItems: 10_000 })),
    all: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
);

const RolloutForm = Type.Object(
  {
    version: Version,
    host_ids: Type.Optional(Type.Union([HostId, Type.Array(HostId, { maxItems: 10_000 })])),
    all: Type.Optional(Type.Literal("1")),
  },
  { additionalProperties: false },
);

function actorOf(c: Context<AppEnv>): Actor {
  const actor = c.get("actor");
  if (!actor) {
    throw new RequestError("unauthorised", "Sign in first.");
  }
  return actor;
}

export function agentUpdateRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const admin = requireRole("admin");

  async function rollOut(
    c: Context<AppEnv>,
    version: string,
    hostIds: string[] | undefined,
    all: boolean | undefined,
  ): Promise<RolloutResult> {
    const selection = rolloutSelection(hostIds, all);
    const result = await rollOutAgentUpdate(deps, version, selection);
    await writeAudit(deps.db, deps.clock, {
      actor: actorOf(c),
      action: "agent.update",
      targetKind: "agent_version",
      targetId: version,
      details: {
        all: selection.all === true,
        host_ids: result.targets.map((target) => target.hostId),
        skipped: result.skipped.length,
      },
      ip: clientIp(c),
    });
    return result;
  }

  routes.post("/api/agent-updates", admin, async (c) => {
    const body = await readJson(c, RolloutBody);
    return c.json(rolloutJson(await rollOut(c, body.version, body.host_ids, body.all)));
  });
  routes.post("/agent-updates", admin, async (c) => {
    const form = await readForm(c, RolloutForm);
    const hostIds = form.host_ids === undefined ? undefined : [form.host_ids].flat();
    // On the page "all hosts" wins over any ticked host.
    await rollOut(
      c,
      form.version,
      form.all === "1" ? undefined : hostIds,
      form.all === "1" ? true : undefined,
    );
    return redirectAfterPost(c, "/");
  });
  return routes;
}
