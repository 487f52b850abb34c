// Bundles the built agent into one ESM file that plain `node` runs: what the installer
// downloads and what self-update ships. The version is baked in, since a bundle travels
// without its package.json.
import { readFileSync } from "node:fs";
import { build } from "esbuild";

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

await build({
  entryPoints: [new URL("../dist/cli.js", import.meta.url).pathname],
  outfile: new URL("../dist/bundle/fleetback-agent.mjs", import.meta.url).pathname,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  legalComments: "none",
  logLevel: "warning",
  // CommonJS dependencies (ws) call require() for Node built-ins; ESM output needs a real require.
  banner: {
    js: [
      'import { createRequire as __fleetbackCreateRequire } from "node:module";',
      "const require = __fleetbackCreateRequire(import.meta.url);",
      `globalThis.__FLEETBACK_AGENT_VERSION__ = ${JSON.stringify(manifest.version)};`,
    ].join("\n"),
  },
});
