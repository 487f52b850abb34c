/**
 * @module routes/agent-versions
 * What an operator needs before a rollout: the agent bundles this server holds (with their
 * single-executable builds per platform), and the release key that signs them (its fingerprint is what to compare with an agent's pinned key).
 */
import { encodePublicKey, fingerprint } from "@fleetback/crypto";
import { Hono } from "hono";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, requireRole } from "../auth/actor.js";

export function agentVersionRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  routes.get("/api/agent-versions", viewer, async (c) => {
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
  });
  routes.get("/api/release-key", viewer, (c) =>
    c.json({
      public_key: encodePublicKey(deps.releaseKey.publicKey),
      fingerprint: fingerprint(deps.releaseKey.publicKey),
    }),
  );
  return routes;
}
