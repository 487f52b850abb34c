// Bundles the built server (dist/main.js and the ~1,300 ES modules it loads) into
// dist/bundle/fleetback-server.mjs plus chunks loaded on first use; `pnpm start`, the bench and
// e2e run it. Node keeps a module record, its source and its compiled functions per module: as
// one script the idle server holds ~40 MiB less on PostgreSQL (~27 MiB less V8 heap on PGlite)
// and a restart reaches /readyz with ~40 % less CPU (issue 19, budgets B7 and B8).
// dist/main.js stays as tsc built it and runs the same server.
//   node scripts/bundle.mjs
import { readFileSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const outdir = join(root, "dist/bundle");
const runtime = fileURLToPath(new URL("./bundle-runtime.mjs", import.meta.url));
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

// Left as packages, imported by name from the bundle, so each must be a dependency of this one:
// PGlite reads its .wasm, .data and extension files beside its own modules; pino starts its
// transports as workers from its own files; nodemailer and openid-client load on first use only
// (mail, SSO) and are large for what an idle server never calls.
const EXTERNAL = ["@electric-sql/pglite", "pino", "nodemailer", "openid-client"];
for (const name of EXTERNAL) {
  if (!manifest.dependencies?.[name]) {
    throw new Error(`${name} is left out of the bundle, so @fleetback/server must depend on it`);
  }
}

const packages = new Map();
function readName(dir) {
  try {
    return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name;
  } catch {
    return undefined;
  }
}
/** The package (name and directory) a file belongs to: the nearest package.json with a name. */
function packageOf(file) {
  const dir = dirname(file);
  let found = packages.get(dir);
  if (found === undefined) {
    const name = readName(dir);
    if (name) {
      found = { name, dir };
    } else if (dirname(dir) === dir) {
      throw new Error(`${file} belongs to no package`);
    } else {
      found = packageOf(dir);
    }
    packages.set(dir, found);
  }
  return found;
}

const urlPath = (from, to) => relative(from, to).split(sep).join("/");

// import.meta.url must keep naming the file a module was built as, since modules find their
// neighbours by it (views/, static/, migrations/, templates/, ../../package.json, and the agent
// bundle and hash-wasm through createRequire). This server's own files move with dist/, so a path
// relative to the bundle serves; another package's directory depends on how node_modules is laid
// out, so it is looked up at run time. No third-party module may rely on its own location.
const layout = {
  name: "fleetback-module-urls",
  setup(builder) {
    builder.onResolve({ filter: /^fleetback-bundle-runtime$/ }, () => ({ path: runtime }));
    builder.onLoad({ filter: /\.m?js$/ }, async ({ path }) => {
      if (path === runtime) {
        return undefined;
      }
      const text = await readFile(path, "utf8");
      const owner = packageOf(path);
      const foreign = !owner.name.startsWith("@fleetback/");
      // ESM output defines neither; a CommonJS dependency that reads them would fail at run time.
      if (foreign && /\b__(dirname|filename)\b/.test(text)) {
        return { errors: [{ text: `${path} uses __dirname or __filename; leave ${owner.name} external` }] };
      }
      if (!text.includes("import.meta.url")) {
        return undefined;
      }
      let url;
      let prelude = "";
      if (owner.name === manifest.name) {
        url = `new URL(${JSON.stringify(urlPath(outdir, path))}, import.meta.url).href`;
      } else if (!foreign && manifest.dependencies?.[owner.name]) {
        url = `fleetbackModuleUrl(${JSON.stringify(owner.name)}, ${JSON.stringify(urlPath(owner.dir, path))})`;
        prelude = 'import { fleetbackModuleUrl } from "fleetback-bundle-runtime";\n';
      } else {
        return { errors: [{ text: `${path} uses import.meta.url; leave ${owner.name} external` }] };
      }
      return { contents: prelude + text.replaceAll("import.meta.url", url), loader: "js" };
    });
  },
};

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { "fleetback-server": join(root, "dist/main.js") },
  outdir,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  // What the server imports on demand (the driver of the database it does not use, postgres.js on
  // PGlite) stays in chunks loaded on demand, as it did as separate modules.
  splitting: true,
  chunkNames: "chunk-[hash]",
  platform: "node",
  format: "esm",
  target: "node20",
  external: EXTERNAL.flatMap((name) => [name, `${name}/*`]),
  plugins: [layout],
  // V8 keeps the source text of every script; names stay, so a stack trace still names functions.
  minifyWhitespace: true,
  legalComments: "eof",
  logLevel: "warning",
  // CommonJS dependencies (nunjucks, ws, prom-client) call require() for Node built-ins.
  banner: {
    js: [
      'import { createRequire as __fleetbackCreateRequire } from "node:module";',
      "const require = __fleetbackCreateRequire(import.meta.url);",
    ].join("\n"),
  },
});
