/**
 * @module routes/enrolment-api
 * Operators' JSON API for enrolment: mint tokens, list and revoke unused ones, list the announced
 * hosts waiting for approval, approve or reject them one at a time or by source network. The page
 * is in routes/enrolment-pages.ts, the agents' own endpoints in routes/agent-enrolment.ts.
 */

import type { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import {
  approvePendingHost,
  listPendingHosts,
  rejectPendingHost,
  rejectPendingHosts,
} from "../enrolment/announce.js";
import { type InitialSchedule, InitialScheduleBody } from "../enrolment/initial-schedule.js";
import { checkApproveInput, checkMintInput, mintJson } from "../enrolment/mint-request.js";
import { NetworkText, PendingId, pendingSelection } from "../enrolment/pending-selection.js";
import {
  listUsableTokens,
  mintEnrolmentToken,
  mintSuccessorToken,
  revokeEnrolmentToken,
} from "../enrolment/tokens.js";
import { sourceNetwork } from "../http/client-address.js";
import { LabelsSchema } from "../labels/label-rules.js";
import { actOnPathId, apiGroup } from "../openapi/api-route.js";
import {
  EnrolmentTokenList,
  MintedToken,
  PendingApproved,
  PendingHostList,
  PendingRejected,
  SuccessorToken,
} from "../openapi/fleet-access-schemas.js";

const AbsolutePath = Type.String({ minLength: 1, maxLength: 4096, pattern: "^/" });
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });

export const MintBody = Type.Object(
  {
    repository: Type.Optional(
      Type.Object(
        {
          url: Text(2048),
          username: Type.Optional(Text(256)),
          password: Type.Optional(Text(1024)),
        },
        { additionalProperties: false },
      ),
    ),
    initial_paths: Type.Optional(Type.Array(AbsolutePath, { maxItems: 100 })),
    initial_schedule: Type.Optional(InitialScheduleBody),
    labels: Type.Optional(LabelsSchema),
  },
  { additionalProperties: false },
);
/** The approve step's choice, named as in MintBody: the first source group's paths and schedule. */
export const ApproveBody = Type.Object(
  {
    initial_paths: Type.Optional(Type.Array(AbsolutePath, { maxItems: 100 })),
    initial_schedule: Type.Optional(InitialScheduleBody),
  },
  { additionalProperties: false },
);
export const BulkRejectBody = Type.Object(
  {
    ids: Type.Optional(Type.Array(PendingId, { minItems: 1, maxItems: 1000 })),
    source_network: Type.Optional(NetworkText),
  },
  { additionalProperties: false },
);

const PENDING_ID = { id: "The announced host's pending id." };

export const ENROLMENT_API = apiGroup<AppDeps>({ tag: "Enrolment" });

ENROLMENT_API.add({
  id: "mintEnrolmentToken",
  method: "post",
  path: "/api/enrollment-tokens",
  summary: "Mint a one-time enrolment token (valid 1 hour)",
  description:
    "Optionally with the repository the host will use (a password is generated when none is given) and the paths of its first source group. Secrets are in this answer only. Minted with an API token that expires within the hour, it expires with that token (`expires_at` shows when).",
  access: "operator",
  body: MintBody,
  responses: { 201: { description: "The token and the install command.", schema: MintedToken } },
  handler: async (c, { body }, deps) => {
    const minted = await mintEnrolmentToken(
      deps,
      auditOf(c),
      checkMintInput({
        repository: body.repository,
        initialPaths: body.initial_paths,
        initialSchedule: body.initial_schedule as InitialSchedule | null | undefined,
        labels: body.labels,
      }),
    );
    return c.json(mintJson(minted), 201);
  },
});

ENROLMENT_API.add({
  id: "mintSuccessorToken",
  method: "post",
  path: "/api/hosts/:id/successor-token",
  summary: "Mint a one-time token that makes a new machine this host's successor (valid 1 hour)",
  description:
    "For a host whose machine is gone: the agent installed with this token enrols as the same host. It keeps the host's id, name, labels, groups, schedules, repository and snapshot history, and receives the repository credentials at its first hello; the old agent's token stops working and a still-connected old agent is told the host was replaced. Admins only, as the new machine gets the host's credentials.",
  access: "admin",
  params: { id: "The host to be replaced." },
  // Nothing to say but `{}`: a body with anything in it is refused, not ignored.
  body: Type.Object({}, { additionalProperties: false }),
  responses: { 201: { description: "The token and the install command.", schema: SuccessorToken } },
  handler: async (c, _input, deps) => {
    const minted = await mintSuccessorToken(deps, auditOf(c), c.req.param("id"));
    return c.json(
      {
        token: minted.token,
        expires_at: minted.expiresAt,
        host_id: c.req.param("id"),
        host_name: minted.hostName,
        install_command: minted.installCommand,
      },
      201,
    );
  },
});

ENROLMENT_API.add({
  id: "listEnrolmentTokens",
  method: "get",
  path: "/api/enrollment-tokens",
  summary: "Unused, unexpired enrolment tokens (never the token itself)",
  access: "operator",
  responses: { 200: { description: "The tokens.", schema: EnrolmentTokenList } },
  handler: async (c, _input, deps) => {
    const tokens = await listUsableTokens(deps.db, deps.clock);
    return c.json({
      enrollment_tokens: tokens.map((t) => ({
        id: t.id,
        created_at: t.createdAt,
        expires_at: t.expiresAt,
        initial_paths: t.initialPaths,
        initial_schedule: t.initialSchedule,
        labels: t.labels,
        has_repository: t.hasRepository,
        successor_of: t.successorOf,
        created_by: t.createdBy,
        created_by_username: t.createdByName,
      })),
    });
  },
});

ENROLMENT_API.add({
  id: "revokeEnrolmentToken",
  method: "delete",
  path: "/api/enrollment-tokens/:id",
  summary: "Revoke an unused enrolment token",
  access: "operator",
  params: { id: "The token's id." },
  responses: { 204: { description: "Revoked." } },
  handler: actOnPathId(revokeEnrolmentToken),
});

ENROLMENT_API.add({
  id: "listPendingHosts",
  method: "get",
  path: "/api/pending-hosts",
  summary: "Announced hosts waiting for approval",
  description: "Compare each fingerprint with the one the agent printed before approving.",
  access: "operator",
  responses: { 200: { description: "The waiting hosts.", schema: PendingHostList } },
  handler: async (c, _input, deps) => {
    const pending = await listPendingHosts(deps.db, deps.clock);
    return c.json({
      pending_hosts: pending.map((p) => ({
        id: p.id,
        hostname: p.hostname,
        os: p.os,
        arch: p.arch,
        agent_version: p.agentVersion,
        tool_version: p.toolVersion,
        fingerprint: p.fingerprint,
        source_ip: p.sourceIp,
        labels: p.labels,
        source_network: sourceNetwork(p.sourceIp ?? undefined),
        created_at: p.createdAt,
        expires_at: p.expiresAt,
      })),
    });
  },
});

ENROLMENT_API.add({
  id: "approvePendingHost",
  method: "post",
  path: "/api/pending-hosts/:id/approve",
  summary: "Approve an announced host",
  description:
    "Creates the host; its agent collects its token with the claim call. Optionally with the paths of its first source group and that group's schedule and retention, as when minting a token: absent means daily at a drawn night-time hour keeping 7 daily, 4 weekly and 6 monthly; `null` means no schedule. Without paths no group is made.",
  access: "operator",
  params: PENDING_ID,
  body: ApproveBody,
  bodyOptional: true,
  responses: { 200: { description: "The new host's id.", schema: PendingApproved } },
  handler: async (c, { body }, deps) => {
    const start = checkApproveInput(
      body.initial_paths ?? [],
      body.initial_schedule as InitialSchedule | null | undefined,
    );
    const approved = await approvePendingHost(deps, auditOf(c), c.req.param("id"), start);
    return c.json({ host_id: approved.hostId });
  },
});

ENROLMENT_API.add({
  id: "rejectPendingHosts",
  method: "post",
  path: "/api/pending-hosts/reject",
  summary: "Reject announced hosts by id or by source network",
  access: "operator",
  body: BulkRejectBody,
  responses: { 200: { description: "The rejected ids.", schema: PendingRejected } },
  handler: async (c, { body }, deps) => {
    const selection = pendingSelection(body.ids, body.source_network);
    const rejected = await rejectPendingHosts(deps, auditOf(c), selection);
    return c.json({ rejected });
  },
});

ENROLMENT_API.add({
  id: "rejectPendingHost",
  method: "delete",
  path: "/api/pending-hosts/:id",
  summary: "Reject one announced host",
  access: "operator",
  params: PENDING_ID,
  responses: { 204: { description: "Rejected." } },
  handler: actOnPathId(rejectPendingHost),
});

export function enrolmentApiRoutes(deps: AppDeps): Hono<AppEnv> {
  return ENROLMENT_API.routes(deps);
}
