// Bundles the built agent into one ESM file that plain `node` runs: what the installer
// downloads and what self-update ships. The version is baked in, since a bundle travels
// without its package.json; the first line names it so the server can read it on import.
//   node scripts/bundle.mjs [--outfile PATH]     FLEETBACK_AGENT_VERSION overrides package.json's
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { bundleBanner } from "./bundle-banner.mjs";

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const { values } = parseArgs({ options: { outfile: { type: "string" } } });
const version = process.env.FLEETBACK_AGENT_VERSION || manifest.version;
if (!/^[0-9A-Za-z.+-]+$/.test(version)) {
  throw new Error(`FLEETBACK_AGENT_VERSION ${JSON.stringify(version)} is not a version`);
}

const outfile = values.outfile
  ? resolve(values.outfile)
  : new URL("../dist/bundle/fleetback-agent.mjs", import.meta.url).pathname;

const result = await build({
  entryPoints: [new URL("../dist/cli.js", import.meta.url).pathname],
  outfile,
  write: false,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  legalComments: "none",
  // Whitespace and comments only (luxon's JSDoc is a third of the text): V8 keeps the source
  // of every loaded script, and this is ~1.7 MiB of the agent's resident memory (issue 19, B8).
  // Names stay, so a stack trace still says which function; its column says where.
  minifyWhitespace: true,
  // luxon ships an ES build for `import` and a CommonJS one for `require`. cron-parser requires
  // it, and cron.ts sets its Settings on import: both must be the one CommonJS copy, or the
  // setting misses cron-parser's dates (and the bundle carries luxon twice).
  alias: { luxon: createRequire(import.meta.url).resolve("luxon") },
  logLevel: "warning",
  banner: { js: bundleBanner(version) },
});

// esbuild puts the entry's hashbang above the banner; the banner line must be first, and the
// bundle is run as `node <file>` anyway.
const [output] = result.outputFiles;
const text = output.text.replace(/^#![^\n]*\n/, "");
mkdirSync(dirname(outfile), { recursive: true });
writeFileSync(outfile, text);
