#!/usr/bin/env node
// Records the real restic output that the agent and server tests replay, into testdata/restic/.
//
//   node scripts/record-restic-fixtures.mjs        (needs scripts/fetch-tools.sh to have run)
//
// It runs restic 0.14.0 and 0.18.0 (and rest-server 0.13 for the few scenarios a test reads from
// the rest backend) from .cache/tools/ against fresh repositories under /tmp/fleetback-fixtures,
// and writes testdata/restic/<version>/<backend>/<name>.{cmd,stdout,stderr,exit} (the layout
// packages/agent/src/restic/replay-adapter.ts `loadRecording` reads), <version>/help/restore.txt,
// and <version>/local/_scenario.json: the values that differ from run to run (snapshot IDs, the
// lock holder), so that tests derive them instead of hard-coding them.
//
// Only the scenarios the tests read are recorded. Paths are fixed (/tmp/fleetback-fixtures/src/tree
// is the backed-up tree, its files and mtimes are always the same), the repository password is
// the tests' TEST_PASSWORD and every backup is made with --host vm; timestamps, snapshot IDs,
// PIDs and blob sizes differ from run to run, which the tests allow for. stdin is /dev/null.
// Everything under /tmp/fleetback-fixtures is removed before and after the run.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createConnection, createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const tools = join(repoRoot, ".cache", "tools");
const outDir = join(repoRoot, "testdata", "restic");

/** Fixed, so that the paths inside the recordings are the same on every run and machine. */
const ROOT = "/tmp/fleetback-fixtures";
const MARKER = join(ROOT, ".fleetback-fixtures");
const TREE = join(ROOT, "src", "tree");
const BIG_CONTENT = join(ROOT, "big", "content", "tree");
const BIG_EMPTY = join(ROOT, "big", "empty", "tree");
/** packages/agent/src/testing/job-run.ts TEST_PASSWORD. */
const PASSWORD = "testpass-secret-1";
const WRONG_PASSWORD = "wrongpass";
const REST_USER = "alice";
const REST_PASSWORD = "alicepass-secret-4";
/** The snapshot hostname of every backup (`--host`), as the tests expect. */
const HOST = "vm";
const TREE_TIME = new Date("2024-01-02T03:04:05Z");
const CHANGED_TIME = new Date("2024-02-03T04:05:06Z");
const REST_PORT = 53105;

const VERSIONS = [
  { version: "0.14.0", bin: join(tools, "restic-0.14", "usr", "bin", "restic") },
  { version: "0.18.0", bin: join(tools, "restic-0.18", "usr", "bin", "restic") },
];
const REST_SERVER = join(tools, "rest-server", "usr", "bin", "restic-rest-server");
const HTPASSWD = join(tools, "htpasswd", "usr", "bin", "htpasswd");

function log(message) {
  process.stderr.write(`record-restic-fixtures: ${message}\n`);
}

function quote(arg) {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

/** Keeps the first `head` and last `tail` lines of `text` (each ending in a newline). */
function trimLines(text, head, tail) {
  const lines = text.split("\n");
  if (lines.at(-1) === "") {
    lines.pop();
  }
  if (lines.length <= head + tail) {
    throw new Error(`expected more than ${head + tail} lines to trim, got ${lines.length}`);
  }
  return { text: `${[...lines.slice(0, head), ...lines.slice(-tail)].join("\n")}\n`, total: lines.length };
}

function jsonLines(text) {
  return text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
}

function check(condition, message) {
  if (!condition) {
    throw new Error(message);
  }
}

// ---------------------------------------------------------------------------------------------
// Source trees

/** 65,536 bytes that barely compress, the same on every run. */
function blobBytes() {
  const parts = [];
  for (let i = 0; i < 2048; i += 1) {
    parts.push(createHash("sha256").update(`fleetback fixture blob ${i}`).digest());
  }
  return Buffer.concat(parts);
}

function setTimes(path, time) {
  if (lstatSync(path).isSymbolicLink()) {
    lutimesSync(path, time, time);
  } else {
    utimesSync(path, time, time);
  }
}

/** The small tree every ordinary scenario backs up: 7 files (65,598 bytes), 5 dirs, 1 symlink. */
function writeTree() {
  rmSync(TREE, { recursive: true, force: true });
  for (const dir of ["data/cache", "docs/sub", "empty"]) {
    mkdirSync(join(TREE, dir), { recursive: true });
  }
  const files = {
    "data/app.log": "log line\n",
    "data/blob.bin": blobBytes(),
    "data/cache/tmp.log": "tmp log\n",
    "docs/notes.md": "notes for docs\n",
    "docs/readme.txt": "hello readme\n",
    "docs/sub/deep.txt": "deep file\n",
    "file with space.txt": "spaces\n",
  };
  for (const [path, content] of Object.entries(files)) {
    writeFileSync(join(TREE, path), content);
  }
  symlinkSync("docs/readme.txt", join(TREE, "link-to-readme"));
  // Children before their directories, so that setting a child's time does not touch the parent.
  for (const path of [
    ...Object.keys(files),
    "link-to-readme",
    "data/cache",
    "data",
    "docs/sub",
    "docs",
    "empty",
    "",
  ]) {
    setTimes(join(TREE, path), TREE_TIME);
  }
}

/** Between the first snapshots and the later ones: one file added, one removed, two changed. */
function changeTree() {
  unlinkSync(join(TREE, "docs/notes.md"));
  writeFileSync(join(TREE, "docs/new.txt"), "a new file\n");
  writeFileSync(join(TREE, "docs/readme.txt"), "hello readme, changed\n");
  writeFileSync(join(TREE, "docs/sub/deep.txt"), "deep file, changed\n");
  for (const path of ["docs/new.txt", "docs/readme.txt", "docs/sub/deep.txt", "docs/sub", "docs"]) {
    setTimes(join(TREE, path), CHANGED_TIME);
  }
}

/**
 * Trees big enough for several progress lines: `dirs` × 1,000 files in d<NNN>/e<NN>/f<NNN>, plus
 * (with content) wide/ of 5,000 files for the restore. `content` gives each file ~30 unique bytes;
 * the empty tree is larger so that restic 0.14 runs past the first second, after which it
 * reports seconds_remaining 2^63.
 */
function writeBigTree(root, content, dirs) {
  rmSync(root, { recursive: true, force: true });
  const write = (path, text) => {
    const fd = openSync(path, "w");
    if (content) {
      writeSync(fd, text);
    }
    closeSync(fd);
  };
  for (let d = 0; d < dirs; d += 1) {
    for (let e = 0; e < 10; e += 1) {
      const dir = join(root, `d${String(d).padStart(3, "0")}`, `e${String(e).padStart(2, "0")}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 100; f += 1) {
        const name = `f${String(f).padStart(3, "0")}`;
        write(join(dir, name), `fleetback fixture ${d}/${e}/${name}\n`);
      }
    }
  }
  if (content) {
    mkdirSync(join(root, "wide"));
    for (let f = 0; f < 5000; f += 1) {
      const name = `f${String(f).padStart(4, "0")}`;
      write(join(root, "wide", name), `fleetback fixture wide/${name}\n`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Running restic

/** One restic version's recording context: binary, environment and output directory. */
function context(version, bin, stage) {
  const work = join(ROOT, "work", version);
  mkdirSync(join(work, "cache"), { recursive: true });
  return {
    version,
    bin,
    work,
    out: join(stage, version),
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: join(ROOT, "home"),
      TZ: "UTC",
      LC_ALL: "C",
      RESTIC_PASSWORD: PASSWORD,
      RESTIC_CACHE_DIR: join(work, "cache"),
    },
  };
}

/** Runs restic without recording (setup steps); fails on an unexpected exit status. */
function restic(ctx, args, { env = {}, expectExit = 0 } = {}) {
  const result = spawnSync(ctx.bin, args, {
    cwd: ROOT,
    env: { ...ctx.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (result.error) {
    throw result.error;
  }
  if (result.status !== expectExit) {
    throw new Error(
      `restic ${ctx.version} ${args.join(" ")}: exit ${result.status ?? result.signal}, expected ${expectExit}\n${result.stderr}`,
    );
  }
  return result;
}

/**
 * Runs restic and writes `<out>/<backend>/<name>.{cmd,stdout,stderr,exit}`. `env` holds only the
 * variables that differ from the context's (shown in .cmd); `trim` keeps the first and last lines.
 */
function record(ctx, name, args, { backend = "local", env = {}, expectExit = 0, trim } = {}) {
  const result = restic(ctx, args, { env, expectExit });
  let stdout = result.stdout;
  let note = "";
  if (trim) {
    const trimmed = trimLines(stdout, trim.head, trim.tail);
    stdout = trimmed.text;
    note = `   # stdout TRIMMED: first ${trim.head} + last ${trim.tail} of ${trimmed.total} lines`;
  }
  const dir = join(ctx.out, backend);
  mkdirSync(dir, { recursive: true });
  const envText = Object.entries(env).map(([key, value]) => `${key}=${quote(value)} `);
  const cmd = `${envText.length > 0 ? `env ${envText.join("")}` : ""}restic-${ctx.version} ${args.map(quote).join(" ")}${note}\n`;
  writeFileSync(join(dir, `${name}.cmd`), cmd);
  writeFileSync(join(dir, `${name}.stdout`), stdout);
  writeFileSync(join(dir, `${name}.stderr`), result.stderr);
  writeFileSync(join(dir, `${name}.exit`), `${result.status}\n`);
  return { stdout: result.stdout, stderr: result.stderr };
}

async function waitFor(what, test, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > until) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios

/** The local repository: the sequence every ordinary scenario is part of. */
async function recordLocal(ctx) {
  const v14 = ctx.version === "0.14.0";
  const repo = join(ctx.work, "local", "repo");
  const r = ["-r", repo];
  writeTree();

  record(ctx, "version", ["version"]);
  record(ctx, "version-json", ["version", "--json"]);
  const help = restic(ctx, ["restore", "--help"]);
  mkdirSync(join(ctx.out, "help"), { recursive: true });
  writeFileSync(join(ctx.out, "help", "restore.txt"), help.stdout);

  if (v14) {
    record(ctx, "init", [...r, "init"]);
    record(ctx, "init-again", [...r, "init"], { expectExit: 1 });
    record(ctx, "err-missing-repo", ["-r", join(ctx.work, "local", "does-not-exist"), "snapshots"], {
      expectExit: 1,
    });
  } else {
    record(ctx, "init-json", [...r, "--json", "init"]);
    record(ctx, "init-again-json", [...r, "--json", "init"], { expectExit: 1 });
    record(ctx, "err-wrong-password", [...r, "snapshots"], {
      env: { RESTIC_PASSWORD: WRONG_PASSWORD },
      expectExit: 12,
    });
    record(ctx, "err-wrong-password-json", [...r, "snapshots", "--json"], {
      env: { RESTIC_PASSWORD: WRONG_PASSWORD },
      expectExit: 12,
    });
    record(ctx, "err-wrong-password-backup-json", [...r, "backup", "--json", TREE], {
      env: { RESTIC_PASSWORD: WRONG_PASSWORD },
      expectExit: 12,
    });
  }
  record(ctx, "snapshots-empty-repo", [...r, "snapshots", "--json"]);

  // Seven snapshots: S1 and S3 share tag t1 (so `forget --tag t1 --keep-last 1` removes S1),
  // S2 excludes *.log, the tree changes before S3, S6 holds only docs/ (a group of its own).
  const backups = [
    ["S1", "t1", "backup-1", []],
    ["S2", "t2", undefined, ["--exclude", "*.log"]],
    ["S3", "t1", undefined, []],
    ["S4", "t3", undefined, []],
    ["S5", "t4", undefined, []],
    ["S6", "t5", undefined, []],
    ["S7", "t6", undefined, []],
  ];
  for (const [label, tag, name, extra] of backups) {
    if (label === "S3") {
      changeTree();
    }
    const args = [...r, "backup", "--json", "--tag", tag, "--host", HOST, ...extra];
    args.push(label === "S6" ? join(TREE, "docs") : TREE);
    if (name) {
      record(ctx, name, args);
    } else {
      restic(ctx, args);
    }
  }
  const listed = JSON.parse(record(ctx, "snapshots", [...r, "snapshots", "--json"]).stdout);
  check(listed.length === backups.length, `expected ${backups.length} snapshots, got ${listed.length}`);
  const snapshots = Object.fromEntries(
    backups.map(([label, tag], i) => [label, { tag, id: listed[i].id, short_id: listed[i].short_id }]),
  );
  const s1 = snapshots.S1.id;

  record(ctx, "ls-whole", [...r, "ls", "--json", s1]);
  record(ctx, "ls-root", [...r, "ls", "--json", s1, "/"]);
  record(ctx, "ls-dir", [...r, "ls", "--json", s1, join(TREE, "docs")]);
  record(ctx, "ls-file", [...r, "ls", "--json", s1, join(TREE, "docs", "readme.txt")]);
  record(ctx, "ls-nonexistent-path", [...r, "ls", "--json", s1, join(TREE, "nope")]);
  record(ctx, "ls-bad-snapshot", [...r, "ls", "--json", "deadbeef"], { expectExit: v14 ? 0 : 1 });

  record(ctx, "diff", [...r, "diff", "--json", s1, snapshots.S4.id]);
  record(ctx, "diff-text", [...r, "diff", s1, snapshots.S4.id]);
  record(ctx, "diff-short-latest", [...r, "diff", "--json", snapshots.S1.short_id, "latest"], {
    expectExit: 1,
  });

  const docs = join(TREE, "docs");
  if (v14) {
    record(ctx, "restore-include-text", [
      ...r,
      "restore",
      snapshots.S1.short_id,
      "--target",
      join(ctx.work, "local", "restore-text"),
      "--include",
      docs,
    ]);
  } else {
    record(ctx, "restore-include-vv-json", [
      ...r,
      "restore",
      s1,
      "--target",
      join(ctx.work, "local", "restore-vvjson"),
      "--include",
      docs,
      "--json",
      "-vv",
    ]);
    record(
      ctx,
      "restore-no-ownership",
      [...r, "restore", s1, "--target", join(ctx.work, "local", "restore-noown"), "--no-ownership"],
      { expectExit: 1 },
    );
  }

  if (v14) {
    record(ctx, "forget-dry-group-tags", [
      ...r,
      "forget",
      "--json",
      "--dry-run",
      "--keep-last",
      "1",
      "--group-by",
      "tags",
    ]);
  }
  record(ctx, "forget-tag", [...r, "forget", "--json", "--tag", "t1", "--keep-last", "1"]);
  record(ctx, "snapshots-after-forget", [...r, "snapshots", "--json"]);
  const prune = record(ctx, "prune", [...r, "prune"]);
  check(prune.stdout.includes("100.00%  1 / 1 packs repacked"), "prune did not repack one pack");
  record(ctx, "stats-raw", [...r, "stats", "--json", "--mode", "raw-data"]);
  const checked = record(ctx, "check", [...r, "check"]);
  check(checked.stdout.includes("6 / 6 snapshots"), "check did not see 6 snapshots");
  if (!v14) {
    record(ctx, "check-subset", [...r, "check", "--read-data-subset=5%"]);
  }
  if (v14) {
    record(ctx, "unlock", [...r, "unlock"]);
  }
  record(
    ctx,
    "backup-read-error",
    [...r, "backup", "--json", "--tag", "t7", "--host", HOST, "/proc/self/mem"],
    {
      expectExit: 3,
    },
  );

  const lock = await recordLocked(ctx, repo);
  return { snapshots, lock };
}

/** While a `backup --stdin` holds a lock: the commands that need an exclusive one, and unlock. */
async function recordLocked(ctx, repo) {
  const r = ["-r", repo];
  const holder = spawn(
    ctx.bin,
    [...r, "backup", "--stdin", "--stdin-filename", "held.txt", "--tag", "lock", "--host", HOST],
    { cwd: ROOT, env: ctx.env, stdio: ["pipe", "ignore", "pipe"] },
  );
  let holderStderr = "";
  holder.stderr.on("data", (chunk) => {
    holderStderr += chunk;
  });
  const exited = new Promise((resolve) => holder.on("exit", (code) => resolve(code)));
  const locks = join(repo, "locks");
  await waitFor("the lock holder's lock", () => existsSync(locks) && readdirSync(locks).length > 0);
  const [lockId] = readdirSync(locks);
  const held = JSON.parse(restic(ctx, [...r, "--no-lock", "cat", "lock", lockId]).stdout);
  check(held.pid === holder.pid, `lock pid ${held.pid} is not the holder's ${holder.pid}`);

  const lockedExit = ctx.version === "0.14.0" ? 1 : 11;
  record(ctx, "err-locked-check", [...r, "check"], { expectExit: lockedExit });
  record(ctx, "err-locked-prune", [...r, "prune"], { expectExit: lockedExit });
  record(ctx, "err-locked-forget-json", [...r, "forget", "--json", "--keep-last", "1"], {
    expectExit: lockedExit,
  });
  record(ctx, "locked-unlock", [...r, "unlock"]);

  holder.stdin.end("held by the lock scenario\n");
  const code = await exited;
  check(code === 0, `lock holder exited ${code}: ${holderStderr}`);
  // restic leaves uid and gid out of the lock when they are 0.
  const { pid, hostname, username, uid = 0, gid = 0 } = held;
  return { pid, hostname, username, uid, gid };
}

/** A repository with one snapshot whose largest pack has 16 bytes overwritten at offset 100. */
function recordCorrupt(ctx) {
  const repo = join(ctx.work, "corrupt", "repo");
  restic(ctx, ["-r", repo, "init"]);
  restic(ctx, ["-r", repo, "backup", "--host", HOST, TREE]);
  const packs = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else {
        packs.push({ path, size: statSync(path).size });
      }
    }
  };
  walk(join(repo, "data"));
  const largest = packs.sort((a, b) => b.size - a.size)[0];
  const fd = openSync(largest.path, "r+");
  writeSync(fd, Buffer.alloc(16, 0xff), 0, 16, 100);
  closeSync(fd);
  const recorded = record(ctx, "check-corrupt", ["-r", repo, "check", "--read-data"], { expectExit: 1 });
  check(recorded.stderr.includes("Fatal: repository contains errors"), "check-corrupt found no errors");
}

/**
 * The progress scenarios: a backup of 25,000 files with content on 0.18, of 50,000 empty files
 * on 0.14 (which then reports seconds_remaining 2^63) and, on 0.18, a restore of 5,000 files. Their
 * output is trimmed; a run whose lines do not show what the tests need is made again.
 */
function recordBig(ctx) {
  const v14 = ctx.version === "0.14.0";
  const tree = v14 ? BIG_EMPTY : BIG_CONTENT;
  const name = v14 ? "backup-big-empty" : "backup-big-content";
  for (let attempt = 1; ; attempt += 1) {
    const repo = join(ctx.work, `big-${attempt}`, "repo");
    restic(ctx, ["-r", repo, "init"]);
    const args = ["-r", repo, "backup", "--json", "--tag", "big", "--host", HOST, tree];
    const { stdout } = record(ctx, name, args, { trim: { head: 3, tail: 2 } });
    const lines = trimLines(stdout, 3, 2).text.trimEnd().split("\n");
    const parsed = lines.map((line) => JSON.parse(line));
    const problems = [];
    if (!parsed.slice(0, 4).every((line) => line.message_type === "status")) {
      problems.push("the first 4 kept lines are not all status lines");
    }
    if (parsed[4].message_type !== "summary") {
      problems.push("the last line is no summary");
    }
    if (!v14 && (parsed[3].percent_done !== 1 || parsed[3].files_done !== parsed[4].total_files_processed)) {
      problems.push("the last status line is not the final state");
    }
    if (parsed[2].files_done === parsed[3].files_done) {
      problems.push("no progress between the kept status lines");
    }
    if (v14) {
      if (!Array.isArray(parsed[1].current_files)) {
        problems.push("the second status line names no current file");
      }
      if (!lines[3].includes('"seconds_remaining":9223372036854775808')) {
        problems.push("the final status line has no seconds_remaining 2^63");
      }
    }
    if (problems.length === 0) {
      if (!v14) {
        const restore = record(
          ctx,
          "restore-big-json",
          [
            ...["-r", repo, "restore", "latest", "--target", join(ctx.work, "restore-big")],
            ...["--include", join(tree, "wide"), "--json"],
          ],
          { trim: { head: 3, tail: 3 } },
        );
        const summary = jsonLines(restore.stdout).at(-1);
        check(summary?.message_type === "summary", "restore-big-json ends without a summary");
        check(summary.files_restored > summary.total_files, "restore-big-json counted no directories");
      }
      return;
    }
    log(`${ctx.version} ${name} attempt ${attempt}: ${problems.join("; ")}`);
    if (attempt === 3) {
      throw new Error(`${ctx.version} ${name}: no usable run in 3 attempts`);
    }
  }
}

/** The scenarios a test reads from the rest backend: init, init again, and one backup on 0.18. */
function recordRest(ctx, port) {
  const url = `rest:http://${REST_USER}:${REST_PASSWORD}@127.0.0.1:${port}/${REST_USER}/${ctx.version}/`;
  const r = ["-r", url];
  record(ctx, "version", ["version"], { backend: "rest" });
  if (ctx.version === "0.14.0") {
    record(ctx, "init", [...r, "init"], { backend: "rest" });
    record(ctx, "init-again", [...r, "init"], { backend: "rest", expectExit: 1 });
  } else {
    record(ctx, "init-json", [...r, "--json", "init"], { backend: "rest" });
    record(ctx, "init-again-json", [...r, "--json", "init"], { backend: "rest", expectExit: 1 });
    record(
      ctx,
      "backup-exclude",
      [...r, "backup", "--json", "--tag", "t2", "--host", HOST, "--exclude", "*.log", TREE],
      { backend: "rest" },
    );
  }
}

async function portIsFree(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function freePort() {
  if (await portIsFree(REST_PORT)) {
    return REST_PORT;
  }
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startRestServer() {
  const data = join(ROOT, "rest-data");
  mkdirSync(data, { recursive: true });
  const htpasswd = join(ROOT, "htpasswd");
  const made = spawnSync(HTPASSWD, ["-B", "-c", "-b", htpasswd, REST_USER, REST_PASSWORD], {
    stdio: ["ignore", "ignore", "pipe"],
    encoding: "utf8",
  });
  check(made.status === 0, `htpasswd failed: ${made.stderr}`);
  const port = await freePort();
  const server = spawn(
    REST_SERVER,
    ["--path", data, "--listen", `127.0.0.1:${port}`, "--private-repos", "--htpasswd-file", htpasswd],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const exited = new Promise((resolve) => server.on("exit", resolve));
  const listening = () =>
    new Promise((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port }, () => {
        socket.end();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
  await waitFor("rest-server", listening);
  return {
    port,
    async stop() {
      server.kill("SIGTERM");
      await exited;
    },
  };
}

// ---------------------------------------------------------------------------------------------

function cleanRoot() {
  if (existsSync(ROOT) && !existsSync(MARKER)) {
    throw new Error(`${ROOT} exists but was not made by this script; remove it first`);
  }
  rmSync(ROOT, { recursive: true, force: true });
}

for (const path of [...VERSIONS.map((v) => v.bin), REST_SERVER, HTPASSWD]) {
  if (!existsSync(path)) {
    log(`${path} is missing; run scripts/fetch-tools.sh first`);
    process.exit(1);
  }
}

cleanRoot();
mkdirSync(ROOT, { recursive: true });
writeFileSync(MARKER, "made by scripts/record-restic-fixtures.mjs; removed when it ends\n");
mkdirSync(join(ROOT, "home"));
const stage = join(dirname(outDir), `.restic-recording-${process.pid}`);
rmSync(stage, { recursive: true, force: true });
let rest;
try {
  log("writing the source trees");
  writeBigTree(BIG_CONTENT, true, 20);
  writeBigTree(BIG_EMPTY, false, 50);
  rest = await startRestServer();
  for (const { version, bin } of VERSIONS) {
    const ctx = context(version, bin, stage);
    log(`restic ${version}: local repository`);
    const { snapshots, lock } = await recordLocal(ctx);
    log(`restic ${version}: damaged repository`);
    writeTree();
    recordCorrupt(ctx);
    log(`restic ${version}: rest-server on port ${rest.port}`);
    recordRest(ctx, rest.port);
    log(`restic ${version}: progress of a big backup`);
    recordBig(ctx);
    const scenario = { restic: version, tree: TREE, host: HOST, snapshots, lock };
    writeFileSync(join(ctx.out, "local", "_scenario.json"), `${JSON.stringify(scenario, null, 2)}\n`);
  }
  for (const { version } of VERSIONS) {
    rmSync(join(outDir, version), { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    renameSync(join(stage, version), join(outDir, version));
  }
  log(`done: ${outDir}`);
} finally {
  await rest?.stop();
  rmSync(stage, { recursive: true, force: true });
  rmSync(ROOT, { recursive: true, force: true });
}
