/**
 * @module routes/enrolment-api
 * Operators' JSON API for enrolment: mint tokens, list and revoke unused ones, list the announced
 * hosts waiting for approval, approve or reject them one at a time or by source network. The page
 * is in routes/enrolment-pages.ts, the agents' own endpoints in routes/agent-enrolment.ts.
 */

import { Hono } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import {
  approvePendingHost,
  listPendingHosts,
  rejectPendingHost,
  rejectPendingHosts,
} from "../enrolment/announce.js";
import { type InitialSchedule, InitialScheduleBody } from "../enrolment/initial-schedule.js";
import { checkMintInput, mintJson } from "../enrolment/mint-request.js";
import { NetworkText, PendingId, pendingSelection } from "../enrolment/pending-selection.js";
import { listUsableTokens, mintEnrolmentToken, revokeEnrolmentToken } from "../enrolment/tokens.js";
import { sourceNetwork } from "../http/client-address.js";
import { readJson } from "../http/validate.js";
import { LabelsSchema } from "../labels/label-rules.js";

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
export const BulkRejectBody = Type.Object(
  {
    ids: Type.Optional(Type.Array(PendingId, { minItems: 1, maxItems: 1000 })),
    source_network: Type.Optional(NetworkText),
  },
  { additionalProperties: false },
);

export function enrolmentApiRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const operator = requireRole("operator");

  routes.post("/api/enrollment-tokens", operator, async (c) => {
    const body = await readJson(c, MintBody);
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
  });
  routes.get("/api/enrollment-tokens", operator, async (c) => {
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
        created_by: t.createdBy,
        created_by_username: t.createdByName,
      })),
    });
  });
  routes.delete("/api/enrollment-tokens/:id", operator, async (c) => {
    await revokeEnrolmentToken(deps, auditOf(c), c.req.param("id"));
    return c.body(null, 204);
  });
  routes.get("/api/pending-hosts", operator, async (c) => {
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
  });
  routes.post("/api/pending-hosts/:id/approve", operator, async (c) => {
    const approved = await approvePendingHost(deps, auditOf(c), c.req.param("id"));
    return c.json({ host_id: approved.hostId });
  });
  routes.post("/api/pending-hosts/reject", operator, async (c) => {
    const body = await readJson(c, BulkRejectBody);
    const selection = pendingSelection(body.ids, body.source_network);
    const rejected = await rejectPendingHosts(deps, auditOf(c), selection);
    return c.json({ rejected });
  });
  routes.delete("/api/pending-hosts/:id", operator, async (c) => {
    await rejectPendingHost(deps, auditOf(c), c.req.param("id"));
    return c.body(null, 204);
  });
  return routes;
}
