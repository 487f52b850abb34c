/**
 * @module routes/fleet-actions-api
 * Acting on a label selector (issue 37.5): run now, pause and resume schedules (operators),
 * delete hosts with the count confirmed, and agent rollouts in rings (admins; their pages are in
 * routes/agent-rollouts-pages.ts).
 */
import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { actOnSelector, deleteBySelector, FleetActionBody, FleetDeleteBody } from "../fleet/fleet-actions.js";
import { apiGroup } from "../openapi/api-route.js";
import {
  getRollout,
  listRollouts,
  RingRolloutBody,
  ringViews,
  rolloutView,
  startRingRollout,
} from "../updates/ring-rollout.js";

const ActionAnswer = Type.Object({
  action: Type.String(),
  selector: Type.String({ description: "the selector in its canonical text" }),
  matched: Type.Integer(),
  hosts: Type.Array(
    Type.Object({ host_id: Type.String(), host_name: Type.String(), outcome: Type.String() }),
  ),
});

const RingJson = Type.Object({
  index: Type.Integer({ minimum: 1 }),
  selector: Type.String(),
  percent: Type.Union([Type.Integer(), Type.Null()]),
  max_failed: Type.Integer(),
  state: Type.Union(["running", "done", "halted", "not started"].map((s) => Type.Literal(s))),
  hosts: Type.Integer(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
  awaiting: Type.Integer(),
});

const RolloutJson = Type.Object(
  {
    id: Type.String(),
    version: Type.String(),
    state: Type.Union([Type.Literal("running"), Type.Literal("halted"), Type.Literal("completed")]),
    ring: Type.Integer({ description: "the ring under way (or where it halted), from 1" }),
    halted_reason: Type.Union([Type.String(), Type.Null()]),
    rings: Type.Array(RingJson),
    created_at: Type.String({ format: "date-time" }),
    updated_at: Type.String({ format: "date-time" }),
  },
  { $id: "AgentRollout" },
);

export const FLEET_ACTION_API = apiGroup<AppDeps>({ tag: "Agent updates" });

FLEET_ACTION_API.add({
  id: "actOnHosts",
  method: "post",
  path: "/api/hosts/actions",
  tag: "Hosts",
  summary: "Run now, pause or resume the schedules of the hosts a selector matches",
  description:
    "run: every source group of each host now (queued for an offline host, each audited as source_group.run); pause: every schedule goes to the agent disabled and its groups show unscheduled, each schedule keeping its own setting for resume. The selector may not be empty and may match at most 1000 hosts.",
  access: "operator",
  body: FleetActionBody,
  responses: { 200: { description: "Each matched host and what happened to it.", schema: ActionAnswer } },
  handler: async (c, { body }, deps) => c.json(await actOnSelector(deps, auditOf(c), body)),
});

FLEET_ACTION_API.add({
  id: "deleteHostsBySelector",
  method: "post",
  path: "/api/hosts/delete",
  tag: "Hosts",
  summary: "Delete the hosts a selector matches",
  description:
    "Only when the selector matches exactly `confirm_count` hosts (409 otherwise, nothing deleted); each host is deleted and audited as DELETE /api/hosts/:id does. Their snapshots stay in their repositories.",
  access: "admin",
  body: FleetDeleteBody,
  responses: { 200: { description: "The hosts deleted.", schema: ActionAnswer } },
  errors: { 409: "The selector matches another number of hosts than confirm_count." },
  handler: async (c, { body }, deps) => c.json(await deleteBySelector(deps, auditOf(c), body)),
});

FLEET_ACTION_API.add({
  id: "startAgentRollout",
  method: "post",
  path: "/api/agent-rollouts",
  summary: "Update agents in rings by selector",
  description:
    "Ring 1 is sent the update at once (online hosts now, others at their next hello). Each next ring starts when every host of the ring before has reported; the rollout halts at the first ring whose failed updates pass its max_failed, and the rings after it never start. A ring is the hosts its selector matches that no earlier ring took (its percent of them when given); hosts already on the version are in no ring.",
  access: "admin",
  body: RingRolloutBody,
  responses: { 201: { description: "The rollout, ring 1 under way.", schema: RolloutJson } },
  handler: async (c, { body }, deps) => {
    const rollout = await startRingRollout(deps, auditOf(c), body);
    return c.json(rolloutView(rollout, await ringViews(deps.db, rollout)), 201);
  },
});

FLEET_ACTION_API.add({
  id: "listAgentRollouts",
  method: "get",
  path: "/api/agent-rollouts",
  summary: "Agent rollouts in rings, newest first",
  access: "viewer",
  responses: {
    200: { description: "The last 50.", schema: Type.Object({ rollouts: Type.Array(RolloutJson) }) },
  },
  handler: async (c, _input, deps) => {
    const listed = await listRollouts(deps.db);
    return c.json({ rollouts: listed.map(({ rollout, rings }) => rolloutView(rollout, rings)) });
  },
});

FLEET_ACTION_API.add({
  id: "getAgentRollout",
  method: "get",
  path: "/api/agent-rollouts/:id",
  summary: "An agent rollout and each ring's counts",
  access: "viewer",
  params: { id: "The rollout's id." },
  responses: { 200: { description: "The rollout.", schema: RolloutJson } },
  handler: async (c, _input, deps) => {
    const rollout = await getRollout(deps.db, c.req.param("id"));
    return c.json(rolloutView(rollout, await ringViews(deps.db, rollout)));
  },
});

export function fleetActionApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return FLEET_ACTION_API.routes(deps);
}
