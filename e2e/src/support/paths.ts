/**
 * @module support/paths
 * Where the built executables live. e2e drives them exactly as an operator would: plain `node`
 * on the built output, never the sources.
 */
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
/** The bundled server `pnpm start` runs (packages/server/scripts/bundle.mjs). */
export const serverMain = fileURLToPath(
  new URL("../../../packages/server/dist/bundle/fleetback-server.mjs", import.meta.url),
);
export const agentBundle = fileURLToPath(
  new URL("../../../packages/agent/dist/bundle/fleetback-agent.mjs", import.meta.url),
);
export const e2eRoot = fileURLToPath(new URL("../../", import.meta.url));
/** The real OpenID provider process (oidc-provider) the server's own tests start too. */
export const oidcProviderMain = fileURLToPath(
  new URL("../../../packages/server/src/testing/oidc-provider-main.mjs", import.meta.url),
);
/**
 * A migrated embedded database made once per e2e run (global-setup.ts), copied into the data dir
 * of every server a test starts without its own: each first start's initdb cost ~6 s of CPU.
 */
export const pgliteTemplateDir = fileURLToPath(
  new URL("../../../.cache/e2e/pglite-template/", import.meta.url),
);
