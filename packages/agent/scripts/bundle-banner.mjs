// The lines every agent bundle begins with, for scripts/bundle.mjs and the tests that build one.
// The first names the version: the server reads it (`// fleetback-agent <version>`), so it stays
// first. CommonJS dependencies (ws) call require() for Node built-ins, and ESM output needs a real
// require. The version is baked in, since a bundle travels without its package.json.

/** @param {string} version */
export function bundleBanner(version) {
  return [
    `// fleetback-agent ${version}`,
    'import { createRequire as __fleetbackCreateRequire } from "node:module";',
    "const require = __fleetbackCreateRequire(import.meta.url);",
    `globalThis.__FLEETBACK_AGENT_VERSION__ = ${JSON.stringify(version)};`,
  ].join("\n");
}
