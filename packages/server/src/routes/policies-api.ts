/**
 * @module routes/policies-api
 * Fleet policies over JSON (issue 37): read by viewers, written by admins only (a policy can
 * lower the retention of every host it covers). Each write answers with what it did to the fleet;
 * a preview answers the same without writing.
 */

import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import { invalid } from "../errors.js";
import { actOnPathId, apiGroup, HOST_ID, NO_CONTENT } from "../openapi/api-route.js";
import {
  FleetApplyAnswer,
  FleetApplyBody,
  HostPoliciesAnswer,
  PlanJson,
  PolicyApplied,
  PolicyJson,
  PolicyList,
  VersionAnswer,
  VersionList,
} from "../openapi/policy-schemas.js";
import { applyFleetDocument, exportFleet, FleetDocument } from "../policies/fleet-document.js";
import { hostPolicies } from "../policies/host-policies.js";
import { policyJson, versionJson } from "../policies/policy-json.js";
import { PolicyBody } from "../policies/policy-spec.js";
import {
  createPolicy,
  deletePolicy,
  getPolicy,
  getVersion,
  listPolicies,
  listVersions,
  previewPolicy,
  rollbackPolicy,
  updatePolicy,
} from "../policies/policy-store.js";
import { versionChanges } from "../policies/spec-diff.js";

const POLICY_ID = { id: "The policy's id." };
const VERSION = { ...POLICY_ID, version: "A version of the policy, from 1." };
const HOW =
  "A host's effective configuration is every policy whose selector matches its labels, the higher priority first where two give it the same group (equal priorities that differ are a conflict, applied by neither), then the host's own: a group of its own of the same name keeps the policy's apart, and the settings it set on a policy group are kept over every next version.";

function versionParam(text: string | undefined): number {
  if (text === undefined || !/^[1-9][0-9]{0,8}$/.test(text)) {
    throw invalid("version: a version number, from 1", [
      { field: "version", message: "a version number, from 1" },
    ]);
  }
  return Number(text);
}

export const POLICY_API = apiGroup<AppDeps>({ tag: "Policies" });

POLICY_API.add({
  id: "listPolicies",
  method: "get",
  path: "/api/policies",
  summary: "Every fleet policy, its current version",
  access: "viewer",
  responses: { 200: { description: "By name.", schema: PolicyList } },
  handler: async (c, _input, deps) => c.json({ policies: (await listPolicies(deps.db)).map(policyJson) }),
});

POLICY_API.add({
  id: "createPolicy",
  method: "post",
  path: "/api/policies",
  summary: "Create a policy and apply it to the hosts it covers",
  description: `${HOW} Applied in one transaction with its audit entry; the hosts whose schedules changed get one schedule.set each. An error names the path of the bad field (\`spec.groups.0.includes.1\`) and nothing changes.`,
  access: "admin",
  body: PolicyBody,
  responses: { 201: { description: "The policy (version 1) and what it did.", schema: PolicyApplied } },
  errors: { 409: "A policy of that name exists." },
  handler: async (c, { body }, deps) => {
    const applied = await createPolicy(deps, auditOf(c), body);
    return c.json({ policy: policyJson(await getPolicy(deps.db, applied.id)), plan: applied.plan }, 201);
  },
});

POLICY_API.add({
  id: "previewPolicy",
  method: "post",
  path: "/api/policies/preview",
  summary: "What a new policy would do, without applying it",
  access: "viewer",
  body: PolicyBody,
  responses: { 200: { description: "Hosts covered and changed, and how.", schema: PlanJson } },
  handler: async (c, { body }, deps) => c.json(await previewPolicy(deps, body)),
});

POLICY_API.add({
  id: "getPolicy",
  method: "get",
  path: "/api/policies/:id",
  summary: "A policy",
  access: "viewer",
  params: POLICY_ID,
  responses: { 200: { description: "Its current version.", schema: Type.Object({ policy: PolicyJson }) } },
  handler: async (c, _input, deps) =>
    c.json({ policy: policyJson(await getPolicy(deps.db, c.req.param("id"))) }),
});

POLICY_API.add({
  id: "updatePolicy",
  method: "put",
  path: "/api/policies/:id",
  summary: "Apply a new version of a policy",
  description: `The whole policy, as a new version; only hosts whose effective configuration changes are written and only those whose schedules change get a schedule.set. ${HOW}`,
  access: "admin",
  params: POLICY_ID,
  body: PolicyBody,
  responses: { 200: { description: "The policy and what the version did.", schema: PolicyApplied } },
  handler: async (c, { body }, deps) => {
    const id = c.req.param("id");
    const applied = await updatePolicy(deps, auditOf(c), id, body);
    return c.json({ policy: policyJson(await getPolicy(deps.db, id)), plan: applied.plan });
  },
});

POLICY_API.add({
  id: "previewPolicyEdit",
  method: "post",
  path: "/api/policies/:id/preview",
  summary: "What a new version of a policy would do, without applying it",
  access: "viewer",
  params: POLICY_ID,
  body: PolicyBody,
  responses: { 200: { description: "Hosts covered and changed, and how.", schema: PlanJson } },
  handler: async (c, { body }, deps) => c.json(await previewPolicy(deps, body, c.req.param("id"))),
});

POLICY_API.add({
  id: "deletePolicy",
  method: "delete",
  path: "/api/policies/:id",
  summary: "Delete a policy and take back what it gave",
  description:
    "Its groups and schedules leave the hosts (their snapshots stay); a group a host's own schedule still fires stays, as the host's own.",
  access: "admin",
  params: POLICY_ID,
  responses: NO_CONTENT,
  handler: actOnPathId(deletePolicy),
});

POLICY_API.add({
  id: "listPolicyVersions",
  method: "get",
  path: "/api/policies/:id/versions",
  summary: "Every version of a policy, newest first",
  access: "viewer",
  params: POLICY_ID,
  responses: { 200: { description: "Each with who made it and why.", schema: VersionList } },
  handler: async (c, _input, deps) =>
    c.json({ versions: (await listVersions(deps.db, c.req.param("id"))).map(versionJson) }),
});

POLICY_API.add({
  id: "getPolicyVersion",
  method: "get",
  path: "/api/policies/:id/versions/:version",
  summary: "One version of a policy and what it changed",
  access: "viewer",
  params: VERSION,
  responses: {
    200: { description: "The version and its changes from the one before.", schema: VersionAnswer },
  },
  handler: async (c, _input, deps) => {
    const id = c.req.param("id");
    const number = versionParam(c.req.param("version"));
    const version = await getVersion(deps.db, id, number);
    const before = number > 1 ? await getVersion(deps.db, id, number - 1) : undefined;
    return c.json({
      version: versionJson(version),
      changes: before === undefined ? [] : versionChanges(deps.keys.secret, id, before, version),
    });
  },
});

POLICY_API.add({
  id: "rollbackPolicy",
  method: "post",
  path: "/api/policies/:id/versions/:version/rollback",
  summary: "Apply an old version again, as the next version",
  access: "admin",
  params: VERSION,
  responses: { 200: { description: "The policy and what the rollback did.", schema: PolicyApplied } },
  handler: async (c, _input, deps) => {
    const id = c.req.param("id");
    const applied = await rollbackPolicy(deps, auditOf(c), id, versionParam(c.req.param("version")));
    return c.json({ policy: policyJson(await getPolicy(deps.db, id)), plan: applied.plan });
  },
});

POLICY_API.add({
  id: "getHostPolicies",
  method: "get",
  path: "/api/hosts/:id/policies",
  summary: "Where each of a host's settings comes from",
  description:
    "Every group, the host's own (`from: null`) or a policy's (name and version, and the settings the host set itself), the policies' schedules, and what the policies would give it but do not: kept apart by a group of its own, or in conflict.",
  access: "viewer",
  params: HOST_ID,
  responses: { 200: { description: "The host's effective configuration.", schema: HostPoliciesAnswer } },
  handler: async (c, _input, deps) => c.json(await hostPolicies(deps, c.req.param("id"))),
});

POLICY_API.add({
  id: "exportFleetConfig",
  method: "get",
  path: "/api/fleet-config",
  summary: "The fleet's configuration as one document",
  description:
    "Every host's labels (by id, with its name) and every policy, in a stable order: what `fleetback export` writes and `fleetback apply` takes back.",
  access: "viewer",
  responses: { 200: { description: "The document, version 1.", schema: FleetDocument } },
  handler: async (c, _input, deps) => c.json(await exportFleet(deps.db, deps)),
});

POLICY_API.add({
  id: "applyFleetConfig",
  method: "post",
  path: "/api/fleet-config/apply",
  summary: "Apply a fleet document, or say what it would change",
  description:
    "A host the document names gets exactly its labels (a host it does not name keeps its own); its policies are the fleet's policies (one it lacks is deleted). One transaction and one audit entry (fleet.apply); applying the same document twice changes nothing. A bad document is refused whole with the path of the bad field within it (`policies.0.spec.groups.1.includes.0`).",
  access: "admin",
  body: FleetApplyBody,
  responses: { 200: { description: "What changed (or would).", schema: FleetApplyAnswer } },
  handler: async (c, { body }, deps) =>
    c.json(await applyFleetDocument(deps, auditOf(c), body.document, body.dry_run === true)),
});

export function policyApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return POLICY_API.routes(deps);
}
