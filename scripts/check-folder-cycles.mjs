#!/usr/bin/env node
// Folders one way: within packages/server/src and packages/agent/src, no folder may reach itself
// through its imports. Two folders that import each other are one concept split in two, and a
// longer loop is the same knot drawn wider. depcruise's `circular` sees module cycles only, and
// folders can loop while no module does (a/x → b/y → a/z), hence this check, run by `pnpm lint`.
// The server still has one older knot of longer loops (jobs → keepers → snapshots → jobs, …): its
// folder edges are listed in scripts/folder-cycles-known.json, so a new loop fails, and an edge
// that no longer loops must leave the list, which only ever shrinks. Two folders importing each
// other fail always. Test files are left out, as the folder rules in .dependency-cruiser.cjs do.
// Usage: node scripts/check-folder-cycles.mjs [root]  (root: the tree to cruise, default this repo)
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
export const CYCLE_ROOTS = ["packages/server/src/", "packages/agent/src/"];
export const KNOWN_FILE = "scripts/folder-cycles-known.json";

/** `packages/server/src/jobs` for `packages/server/src/jobs/a/b.ts`; null outside the roots or at their top. */
function folderOf(path) {
  for (const root of CYCLE_ROOTS) {
    if (path.startsWith(root)) {
      const rest = path.slice(root.length);
      const slash = rest.indexOf("/");
      return slash < 0 ? null : root + rest.slice(0, slash);
    }
  }
  return null;
}

/** Folder → folders it imports, from depcruise's JSON `modules`. */
export function folderGraph(modules) {
  const graph = new Map();
  for (const module of modules) {
    if (/\.test\.ts$/.test(module.source)) {
      continue;
    }
    const from = folderOf(module.source);
    if (from === null) {
      continue;
    }
    if (!graph.has(from)) {
      graph.set(from, new Set());
    }
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (to !== null && to !== from) {
        graph.get(from).add(to);
      }
    }
  }
  return graph;
}

/** Strongly connected components of more than one folder (Tarjan): each is a set of loops. */
function knots(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (folder) => {
    index.set(folder, next);
    low.set(folder, next++);
    stack.push(folder);
    onStack.add(folder);
    for (const to of graph.get(folder) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(folder, Math.min(low.get(folder), low.get(to)));
      } else if (onStack.has(to)) {
        low.set(folder, Math.min(low.get(folder), index.get(to)));
      }
    }
    if (low.get(folder) === index.get(folder)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== folder);
      if (component.length > 1) {
        found.push(new Set(component));
      }
    }
  };
  for (const folder of graph.keys()) {
    if (!index.has(folder)) {
      visit(folder);
    }
  }
  return found;
}

/**
 * What is wrong with the graph, one sentence each: folder pairs importing each other, loop edges
 * not in `known`, and `known` edges that no longer loop.
 */
export function folderCycleProblems(graph, known) {
  const problems = [];
  const looping = new Set();
  for (const component of knots(graph)) {
    for (const from of component) {
      for (const to of graph.get(from)) {
        if (!component.has(to)) {
          continue;
        }
        const edge = `${from} -> ${to}`;
        looping.add(edge);
        if (from < to && graph.get(to)?.has(from)) {
          problems.push(`${from} and ${to} import each other`);
        } else if (!known.has(edge) && !graph.get(to)?.has(from)) {
          problems.push(`${edge} closes a loop of folders`);
        }
      }
    }
  }
  for (const edge of known) {
    if (!looping.has(edge)) {
      problems.push(`${edge} no longer loops: remove it from ${KNOWN_FILE}`);
    }
  }
  return problems;
}

export function checkFolderCycles(root = repoRoot) {
  const run = spawnSync(
    join(repoRoot, "node_modules", ".bin", "depcruise"),
    [
      ...CYCLE_ROOTS.filter((path) => existsSync(join(root, path))),
      "--config",
      ".dependency-cruiser.cjs",
    ].concat(["--output-type", "json"]),
    { cwd: root, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
  );
  if (run.status !== 0) {
    throw new Error(`depcruise failed: ${run.stderr}`);
  }
  const knownPath = join(root, KNOWN_FILE);
  const known = new Set(existsSync(knownPath) ? JSON.parse(readFileSync(knownPath, "utf8")) : []);
  return folderCycleProblems(folderGraph(JSON.parse(run.stdout).modules), known);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problems = checkFolderCycles(process.argv[2] ? resolve(process.argv[2]) : repoRoot);
  for (const problem of problems) {
    console.error(`folder cycle: ${problem}`);
  }
  if (problems.length > 0) {
    process.exit(1);
  }
  console.log("no folder cycles beyond the known ones");
}
