/**
 * @module sea-script
 * The one CommonJS script a Node 20 single-executable runs. Node 20 embeds exactly one script and
 * its `require` reaches only built-ins, so the agent CLI is bundled whole into CommonJS: no file
 * is loaded at run time. Two ESM-only constructs are rewritten on the way:
 *
 * - top-level `await` in the entry (esbuild cannot emit it as CommonJS): the entry's body after
 *   its imports runs inside an async function instead;
 * - `import.meta.url` / `dirname` / `filename`: they name the executable itself in a SEA (the
 *   file the agent runs from), and the script file when the script is run by plain node.
 *
 * Optional dependencies probed with `require()` in a try (ws: bufferutil, utf-8-validate) would
 * make the SEA's require print a warning on every start; a non-built-in now fails quietly instead,
 * as it would where the package is not installed.
 */
import { readFile } from "node:fs/promises";
import { build, type Plugin } from "esbuild";

export interface SeaScriptOptions {
  /** The agent CLI entry as compiled by tsc (`packages/agent/dist/cli.js`). */
  entry: string;
  /** Where the CommonJS script is written. */
  outfile: string;
  /** Baked in like the bundle's version: a SEA travels without a package.json. */
  version: string;
}

const IMPORT_META = "__fleetbackImportMeta";

/** Shadows the module wrapper's `require`: built-ins only, "not found" for anything else. */
const BUILTIN_REQUIRE_SHIM = `var require = ((builtinRequire) => (id) => {
  if (builtinRequire("node:module").isBuiltin(id)) return builtinRequire(id);
  throw Object.assign(new Error("Cannot find module '" + id + "' (not bundled into the agent)"), { code: "MODULE_NOT_FOUND" });
})(require);`;

/** Sets `__fleetbackImportMeta` before any bundled module reads it. */
const IMPORT_META_SHIM = `var ${IMPORT_META} = (() => {
  let file = typeof __filename === "string" ? __filename : process.execPath;
  try {
    if (require("node:sea").isSea()) file = process.execPath;
  } catch {}
  return { url: require("node:url").pathToFileURL(file).href, filename: file, dirname: require("node:path").dirname(file) };
})();`;

/** A complete `import ... from "x";` / `import "x";` statement at the start of a line. */
const IMPORT_STATEMENT = /^import\s(?:[^;"']|"[^"]*"|'[^']*')*?["'][^"']+["'];?[ \t]*$/gm;

/**
 * Moves everything of an ES module but its import statements into an async function, so that
 * its top-level `await`s become plain ones. A rejection ends the process like an uncaught one.
 * Only for an entry module: it has no exports and nothing waits for its evaluation.
 */
export function wrapTopLevelAwait(source: string): string {
  const imports: string[] = [];
  const body = source.replace(/^#![^\n]*\n/, "").replace(IMPORT_STATEMENT, (statement) => {
    imports.push(statement);
    return "";
  });
  return `${imports.join("\n")}
(async () => {
${body}
})().catch((error) => {
  process.exitCode = 1;
  console.error(error);
});
`;
}

function entryWithoutTopLevelAwait(entry: string): Plugin {
  return {
    name: "fleetback-entry-without-top-level-await",
    setup(builder) {
      builder.onLoad({ filter: /\.js$/ }, async (args) =>
        args.path === entry
          ? { contents: wrapTopLevelAwait(await readFile(entry, "utf8")), loader: "js" }
          : null,
      );
    },
  };
}

/** Bundles the agent CLI into one CommonJS file whose first line is `// fleetback-agent <version>`. */
export async function buildSeaScript(options: SeaScriptOptions): Promise<void> {
  await build({
    entryPoints: [options.entry],
    outfile: options.outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    legalComments: "none",
    logLevel: "error",
    plugins: [entryWithoutTopLevelAwait(options.entry)],
    define: {
      "import.meta.url": `${IMPORT_META}.url`,
      "import.meta.filename": `${IMPORT_META}.filename`,
      "import.meta.dirname": `${IMPORT_META}.dirname`,
    },
    banner: {
      js: [
        `// fleetback-agent ${options.version}`,
        BUILTIN_REQUIRE_SHIM,
        IMPORT_META_SHIM,
        `globalThis.__FLEETBACK_AGENT_VERSION__ = ${JSON.stringify(options.version)};`,
      ].join("\n"),
    },
  });
}
