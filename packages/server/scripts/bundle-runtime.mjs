// Injected into the server bundle by scripts/bundle.mjs. Modules of the other workspace packages
// find their files (migrations, views, static assets, the install.sh template) relative to their
// own import.meta.url, which inside the bundle would name the bundle. Their package is looked up
// at run time, as Node would resolve it from here, so the bundle works wherever dist/ and its
// node_modules sit: the workspace, `pnpm deploy`, a container.
import { existsSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const roots = new Map();

function packageRoot(name) {
  let root = roots.get(name);
  if (root === undefined) {
    // Not require.resolve(name): the workspace packages export "import" only, and the package
    // directory is what is wanted, not its entry.
    const dir = (createRequire(import.meta.url).resolve.paths(name) ?? [])
      .map((base) => join(base, name))
      .find((candidate) => existsSync(join(candidate, "package.json")));
    if (dir === undefined) {
      throw new Error(`fleetback-server bundle: package ${name} not found from ${import.meta.url}`);
    }
    root = pathToFileURL(`${realpathSync(dir)}/`).href;
    roots.set(name, root);
  }
  return root;
}

/** The URL the module `file` (relative to its package's directory) of package `name` had unbundled. */
export function fleetbackModuleUrl(name, file) {
  return new URL(file, packageRoot(name)).href;
}
