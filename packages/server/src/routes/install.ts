/**
 * @module routes/install
 * What a new host downloads: the install script, rendered for this server's URL and the agent
 * bundle it ships, and any bundle or single executable (`/install/agent/{version}/{os}-{arch}`)
 * of the store (the shipped one is imported at start-up). Both are
 * public: a host has no credential yet, and a bundle's integrity comes from the SHA-256 inside the
 * script (installer) or in `command.update` plus the release-key signature (updating agents).
 */
import { renderInstallScript } from "@fleetback/installer";
import { Hono } from "hono";
import { createBundleSource } from "../agent-artifacts/agent-bundle.js";
import type { AppDeps } from "../app-deps.js";
import type { AppEnv } from "../auth/actor.js";
import { restoreOrderPublicKey } from "../restore/restore-order.js";

export function installRoutes(deps: AppDeps, bundle = createBundleSource()): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get("/install/install.sh", async (c) => {
    const agent = await bundle();
    // Hosts without Node.js >= 20 get the single executable of the same version, when one was
    // imported (pnpm release + import-release); the script embeds each one's SHA-256.
    const seas = await deps.agentBundles.listSea(agent.version);
    const script = renderInstallScript({
      baseUrl: deps.config.baseUrl,
      agentVersion: agent.version,
      bundleSha256: agent.sha256,
      seaArtefacts: seas.map(({ os, arch, sha256 }) => ({ os, arch, sha256 })),
      restoreOrderKey: restoreOrderPublicKey(deps.keys),
    });
    return c.body(script, 200, {
      "Content-Type": "text/x-shellscript; charset=utf-8",
      "Cache-Control": "no-store",
    });
  });
  routes.get("/install/agent/:version/:platform", async (c) => {
    const version = c.req.param("version");
    const platform = c.req.param("platform");
    const match = /^([a-z0-9]{1,16})-([a-z0-9]{1,16})$/.exec(platform);
    const stored =
      match?.[1] && match[2]
        ? await deps.agentBundles.openSea(version, match[1], match[2])
        : ({ ok: false, reason: "not_found" } as const);
    if (!stored.ok && stored.reason === "not_found") {
      return c.text(`This server holds no single-executable agent ${version} for ${platform}.`, 404);
    }
    if (!stored.ok) {
      deps.log.error(
        { version, platform, dir: deps.agentBundles.dir, problem: stored.problem },
        "stored single-executable agent failed its integrity check; not serving it",
      );
      return c.text(
        `Agent ${version} for ${platform} failed its integrity check on this server; see the server log.`,
        500,
      );
    }
    return c.body(stored.stream, 200, {
      "Content-Type": "application/octet-stream",
      "Content-Length": String(stored.info.size),
      "Content-Disposition": `attachment; filename="fleetback-agent-${version}-${platform}${match?.[1] === "win32" ? ".exe" : ""}"`,
      "X-Fleetback-Sha256": stored.info.sha256,
      "X-Fleetback-Signature": stored.info.signature,
      "Cache-Control": "public, max-age=300",
    });
  });
  routes.get("/install/agent/:version", async (c) => {
    const version = c.req.param("version");
    const stored = await deps.agentBundles.read(version);
    if (!stored.ok && stored.reason === "not_found") {
      return c.text("This server holds no agent bundle of that version.", 404);
    }
    if (!stored.ok) {
      deps.log.error(
        { version, dir: deps.agentBundles.dir, problem: stored.problem },
        "stored agent bundle failed its integrity check; not serving it",
      );
      return c.text(
        `Agent bundle ${version} failed its integrity check on this server; see the server log.`,
        500,
      );
    }
    return c.body(new Uint8Array(stored.body), 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "X-Fleetback-Sha256": stored.info.sha256,
      "X-Fleetback-Signature": stored.info.signature,
      "Cache-Control": "public, max-age=300",
    });
  });
  return routes;
}
