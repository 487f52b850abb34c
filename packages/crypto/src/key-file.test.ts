import { type ChildProcessByStdio, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyFileError, loadOrCreateKey } from "./key-file.js";

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "fleetback-key-file-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshDir(): Promise<string> {
  return mkdtemp(join(root, "case-"));
}

describe("loadOrCreateKey", () => {
  it("creates a 32-byte key with mode 0600 in a new 0700 directory", async () => {
    const dir = join(await freshDir(), "data");
    const path = join(dir, "secret.key");
    const loaded = await loadOrCreateKey(path);
    expect(loaded.created).toBe(true);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.key).toHaveLength(32);
    expect(new Uint8Array(await readFile(path))).toEqual(loaded.key);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(await readdir(dir)).toEqual(["secret.key"]);
  });

  it("reuses the same key on the next load", async () => {
    const path = join(await freshDir(), "secret.key");
    const first = await loadOrCreateKey(path);
    const second = await loadOrCreateKey(path);
    expect(second.created).toBe(false);
    expect(second.key).toEqual(first.key);
  });

  it("uses the injected random source for a new key", async () => {
    const path = join(await freshDir(), "secret.key");
    const loaded = await loadOrCreateKey(path, { random: (n) => new Uint8Array(n).fill(9) });
    expect(loaded.key).toEqual(new Uint8Array(32).fill(9));
  });

  it("never replaces an existing key file", async () => {
    const path = join(await freshDir(), "secret.key");
    const original = new Uint8Array(32).map((_, i) => i);
    await writeFile(path, original, { mode: 0o600 });
    const loaded = await loadOrCreateKey(path);
    expect(loaded).toEqual({ key: original, created: false, warnings: [] });
    expect(new Uint8Array(await readFile(path))).toEqual(original);
  });

  it.each([0, 17, 33, 64])(
    "refuses a %i-byte file with an error naming the file, and leaves it alone",
    async (size) => {
      const path = join(await freshDir(), "secret.key");
      await writeFile(path, new Uint8Array(size).fill(1), { mode: 0o600 });
      const failure = loadOrCreateKey(path);
      await expect(failure).rejects.toBeInstanceOf(KeyFileError);
      await expect(failure).rejects.toMatchObject({ problem: "wrong_size", path });
      await expect(failure).rejects.toThrow(`key file ${path} has ${size} bytes; expected 32`);
      expect((await readFile(path)).length).toBe(size);
    },
  );

  it("refuses a directory at the key path", async () => {
    const path = join(await freshDir(), "secret.key");
    await mkdir(path);
    await expect(loadOrCreateKey(path)).rejects.toMatchObject({
      problem: "not_a_regular_file",
      message: expect.stringContaining(`key file ${path} is not a regular file`),
    });
  });

  const windows = process.platform === "win32";
  const posixOnly = windows ? " (skipped: POSIX modes and symlinks, not on Windows)" : "";

  it.skipIf(windows)(`warns about a mode looser than 0600 but still loads${posixOnly}`, async () => {
    const path = join(await freshDir(), "secret.key");
    await writeFile(path, new Uint8Array(32));
    await chmod(path, 0o644);
    const loaded = await loadOrCreateKey(path);
    expect(loaded.key).toEqual(new Uint8Array(32));
    expect(loaded.warnings).toEqual([
      `key file ${path} has mode 0644; expected 0600 (run: chmod 600 ${path})`,
    ]);
  });

  it.skipIf(windows)(`refuses a dangling symlink instead of writing through it${posixOnly}`, async () => {
    const dir = await freshDir();
    const path = join(dir, "secret.key");
    await symlink(join(dir, "missing"), path);
    await expect(loadOrCreateKey(path)).rejects.toMatchObject({ problem: "unreadable", path });
    expect((await readdir(dir)).sort()).toEqual(["secret.key"]);
  });

  it("gives every one of many parallel callers the same key, created once", async () => {
    const dir = await freshDir();
    const path = join(dir, "secret.key");
    const results = await Promise.all(Array.from({ length: 32 }, () => loadOrCreateKey(path)));
    const keys = new Set(results.map((result) => Buffer.from(result.key).toString("hex")));
    expect(keys.size).toBe(1);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(await readdir(dir)).toEqual(["secret.key"]);
  });

  it("gives racing processes the same key", async () => {
    const dir = await freshDir();
    const path = join(dir, "secret.key");
    const script = await buildChildScript();
    const children = Array.from({ length: 4 }, () =>
      spawn(process.execPath, [script, path], { stdio: ["pipe", "pipe", "inherit"] }),
    );
    try {
      const racers = children.map(racer);
      // Every child has loaded the module before any starts, however long each took to start:
      // closing their stdin is the starting signal (it used to be a wall-clock time 1.5 s ahead,
      // which a loaded machine could miss and which every run waited out).
      await Promise.all(racers.map(({ ready }) => ready));
      for (const child of children) {
        child.stdin.end();
      }
      const outputs = (await Promise.all(racers.map(({ lines }) => lines))).flat();
      expect(outputs).toHaveLength(4 * 8);
      const keys = new Set(outputs.map((line) => line.split(" ")[1]));
      expect(keys.size).toBe(1);
      expect(outputs.filter((line) => line.startsWith("created "))).toHaveLength(1);
      expect([...keys][0]).toBe((await readFile(path)).toString("hex"));
      expect(await readdir(dir)).toEqual(["secret.key"]);
    } finally {
      for (const child of children) {
        child.kill();
      }
    }
  });
});

/**
 * Node 20 cannot import TypeScript, and the test must not depend on a prior build, so the module
 * under test is transpiled into a scratch directory that child processes import.
 */
async function buildChildScript(): Promise<string> {
  const out = await mkdtemp(join(root, "child-"));
  for (const name of ["key-file", "random"]) {
    const source = await readFile(new URL(`./${name}.ts`, import.meta.url), "utf8");
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    await writeFile(join(out, `${name}.js`), outputText);
  }
  await writeFile(join(out, "package.json"), '{"type":"module"}');
  const script = join(out, "race.js");
  await writeFile(
    script,
    `import { loadOrCreateKey } from "./key-file.js";
const [path] = process.argv.slice(2);
console.log("ready");
process.stdin.resume();
await new Promise((resolve) => process.stdin.once("end", resolve));
const results = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateKey(path)));
for (const { key, created } of results) {
  console.log((created ? "created " : "loaded ") + Buffer.from(key).toString("hex"));
}
`,
  );
  return script;
}

/** A racing child's "ready" line, then its result lines once it exits cleanly. */
function racer(child: ChildProcessByStdio<Writable, Readable, null>): {
  ready: Promise<void>;
  lines: Promise<string[]>;
} {
  let output = "";
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    output += chunk;
    if (output.startsWith("ready\n")) {
      markReady();
    }
  });
  const lines = new Promise<string[]>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      if (code === 0) {
        resolve(
          output
            .replace(/^ready\n/, "")
            .trim()
            .split("\n"),
        );
      } else {
        reject(new Error(`racing child exited with ${signal ?? code}: ${output}`));
      }
    });
  });
  // A child that dies before it is ready fails the test through `lines`, not a hang on `ready`.
  return { ready: Promise.race([ready, lines.then(() => undefined)]), lines };
}
