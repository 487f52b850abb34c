/**
 * @module routes/agent-versions
 * What an operator needs before a rollout: the agent bundles this server holds (with their
 * single-executable builds per platform), and the release key that signs them (its fingerprint is what to compare with an agent's pinned key).
 */

import { encodePublicKey, fingerprint } from "@fleetback/crypto";
import type { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { apiGroup } from "../openapi/api-route.js";
import { AgentVersionList, ReleaseKey } from "../openapi/fleet-access-schemas.js";

export const AGENT_VERSION_API = apiGroup<AppDeps>({ tag: "Agent updates" });

AGENT_VERSION_API.add({
  id: "listAgentVersions",
  method: "get",
  path: "/api/agent-versions",
  summary: "The agent bundles this server holds",
  access: "viewer",
  responses: { 200: { description: "Newest first.", schema: AgentVersionList } },
  handler: async (c, _input, deps) => {
    const bundles = await deps.agentBundles.list();
    const seas = await Promise.all(bundles.map((bundle) => deps.agentBundles.listSea(bundle.version)));
    return c.json(
      bundles.map((bundle, index) => ({
        version: bundle.version,
        sha256: bundle.sha256,
        size: bundle.size,
        created_at: bundle.createdAt,
        sea: (seas[index] ?? []).map((sea) => ({
          os: sea.os,
          arch: sea.arch,
          sha256: sea.sha256,
          size: sea.size,
        })),
      })),
    );
  },
});

AGENT_VERSION_API.add({
  id: "getReleaseKey",
  method: "get",
  path: "/api/release-key",
  summary: "The release key and its fingerprint, to compare with an agent's pinned key",
  access: "viewer",
  responses: { 200: { description: "The key.", schema: ReleaseKey } },
  handler: (c, _input, deps) =>
    c.json({
      public_key: encodePublicKey(deps.releaseKey.publicKey),
      fingerprint: fingerprint(deps.releaseKey.publicKey),
    }),
});

export function agentVersionRoutes(deps: AppDeps): Hono<AppEnv> {
  return AGENT_VERSION_API.routes(deps);
}
