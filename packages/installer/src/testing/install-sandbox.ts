/**
 * @module install-sandbox
 * Runs the rendered install script the way a host does (`... | bash -s -- ARGS`), but against a
 * temporary root (`FLEETBACK_INSTALL_ROOT`) and with a PATH of stubs plus the few real tools the
 * script needs, so that no test can reach the real package manager, systemd or network.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, expect } from "vitest";
import { type InstallSeaArtefact, renderInstallScript } from "../install-script.js";
import { DEFAULT_AGENT_PATHS } from "../systemd-unit.js";

export const TEST_BASE_URL = "https://backup.example.test:8443";
/** An enrolment token no output may ever show. */
export const TEST_TOKEN = "enrol-7f3c9a-secret-token";
/** The agent's unit, relative to the sandbox root. */
export const AGENT_UNIT = "etc/systemd/system/fleetback-agent.service";
/** What a first install asks of a running systemd: reload, then enable and start socket and service. */
export const FIRST_INSTALL_SYSTEMCTL = [
  "daemon-reload",
  "enable --now fleetback-agent-restore.socket",
  "enable --now fleetback-agent",
];

/** Real tools the script and the stubs use; everything else on PATH is a stub. */
const TOOLS = ["cat", "chmod", "cp", "install", "ln", "mkdir", "mktemp", "mv", "rm", "sha256sum"];

export function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, name);
    if (dir !== "" && existsSync(candidate)) {
      return candidate;
    }
  }
  return undefined;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Both streams of a run: an assertion's message, or where a secret must not show. */
export function runOutput(result: RunResult): string {
  return result.stdout + result.stderr;
}

/** The permission bits of a file. */
export function fileMode(path: string): number {
  return statSync(path).mode & 0o777;
}

/** Asserts that the script changed nothing: the root holds only what createSandbox made. */
export function expectUntouched(sb: Sandbox): void {
  expect(readdirSync(sb.root)).toEqual(["run"]);
}

/** Asserts that the run failed with each of `messages` on stderr before changing anything. */
export function expectRefusal(sb: Sandbox, result: RunResult, ...messages: string[]): void {
  expect(result.status, runOutput(result)).not.toBe(0);
  for (const message of messages) {
    expect(result.stderr).toContain(message);
  }
  expectUntouched(sb);
}

/** A sandbox factory for one test file; every sandbox it made is disposed after each test. */
export function sandboxPerTest(): () => Promise<Sandbox> {
  const sandboxes: Sandbox[] = [];
  afterEach(async () => {
    await Promise.all(sandboxes.splice(0).map((s) => s.dispose()));
  });
  return async () => {
    const created = await createSandbox();
    sandboxes.push(created);
    return created;
  };
}

export interface AgentCall {
  /** Which fake ran: the bundle (run by node) or the single-executable agent (run by itself). */
  kind: "bundle" | "sea";
  command: string;
  argv: string[];
  token: string | null;
}

/** The agent call of an enrolment with TEST_TOKEN into the default paths under `sb`'s root. */
export function tokenEnrolment(sb: Sandbox, kind: AgentCall["kind"]): AgentCall {
  return {
    kind,
    command: "enroll",
    argv: [
      "enroll",
      "--server",
      TEST_BASE_URL,
      "--config-dir",
      join(sb.root, DEFAULT_AGENT_PATHS.configDir),
      "--state-dir",
      join(sb.root, DEFAULT_AGENT_PATHS.stateDir),
    ],
    token: TEST_TOKEN,
  };
}

export interface Sandbox {
  /** The install root: what `/` is for the script. */
  root: string;
  /** Stubs directory, first on PATH. */
  bin: string;
  /** Where `node` on the sandbox PATH lives (a link to the node running the tests). */
  nodePath: string;
  /** Serves `content` (default: a fake agent) at `/install/agent/{version}`; returns its SHA-256. */
  serveBundle(version: string, content?: string | Uint8Array): Promise<string>;
  /**
   * Serves `content` (default: a fake single-executable agent, an executable node script) at
   * `/install/agent/{version}/linux-{arch}`; returns its SHA-256.
   */
  serveSea(version: string, arch: string, content?: string | Uint8Array): Promise<string>;
  /**
   * Serves a fake agent as `version`, and a fake SEA for each of `seaArches` (default none), and
   * renders the install script for them and TEST_BASE_URL.
   */
  installScript(version?: string, options?: { seaArches?: string[] }): Promise<string>;
  /** Body of the default `curl` stub, which also works as a `wget` stub. */
  downloaderStub: string;
  /** Writes an executable bash stub `name` whose body runs after its arguments are logged. */
  stub(name: string, body?: string): Promise<void>;
  removeStub(name: string): Promise<void>;
  /** Lines logged by stub `name` (its arguments, space-joined), in call order. */
  calls(name: string): Promise<string[]>;
  agentCalls(): Promise<AgentCall[]>;
  run(script: string, args: string[], options?: { shell?: string }): RunResult;
  dispose(): Promise<void>;
}

/** The bundle is an ES module run by node; the "SEA" a CommonJS script that runs by its #! line. */
function fakeAgent(log: string, kind: AgentCall["kind"]): string {
  const imports =
    kind === "bundle"
      ? 'import { appendFileSync, writeFileSync } from "node:fs";\nimport { join } from "node:path";'
      : `#!${process.execPath}\nconst { appendFileSync, writeFileSync } = require("node:fs");\nconst { join } = require("node:path");`;
  return `${imports}
const [command, ...rest] = process.argv.slice(2);
const option = (name) => rest[rest.indexOf(name) + 1];
appendFileSync(${JSON.stringify(log)}, JSON.stringify({ kind: ${JSON.stringify(kind)}, command, argv: process.argv.slice(2), token: process.env.FLEETBACK_ENROLL_TOKEN ?? null }) + "\\n");
if (command === "enroll" || command === "announce") {
  const config = { server: option("--server"), host_id: "host-1", agent_token: "agent-token" };
  writeFileSync(join(option("--config-dir"), "agent.json"), JSON.stringify(config) + "\\n", { mode: 0o600 });
  console.log("enrolled as host-1");
}
`;
}

async function readLines(file: string): Promise<string[]> {
  return existsSync(file) ? (await readFile(file, "utf8")).split("\n").filter((line) => line !== "") : [];
}

export async function createSandbox(): Promise<Sandbox> {
  const bash = findOnPath("bash");
  if (!bash) {
    throw new Error("bash is not on PATH");
  }
  const base = await mkdtemp(join(tmpdir(), "fleetback-install-"));
  const root = join(base, "root");
  const bin = join(base, "bin");
  const tools = join(base, "tools");
  const logs = join(base, "logs");
  const served = join(base, "served");
  const tmp = join(base, "tmp");
  for (const dir of [join(root, "run", "systemd", "system"), bin, tools, logs, served, tmp]) {
    await mkdir(dir, { recursive: true });
  }
  for (const tool of TOOLS) {
    const real = findOnPath(tool);
    if (!real) {
      throw new Error(`${tool} is not on PATH`);
    }
    await symlink(real, join(tools, tool));
  }
  const nodePath = join(bin, "node");
  await symlink(process.execPath, nodePath);

  const stub = async (name: string, body = "") => {
    const file = join(bin, name);
    await rm(file, { force: true });
    const log = JSON.stringify(join(logs, `${name}.log`));
    await writeFile(file, `#!${bash}\nprintf '%s\\n' "$*" >>${log}\n${body}\n`);
    await chmod(file, 0o755);
  };
  // `curl ... -o DEST URL` or `wget ... -O DEST URL`: serves files from `served`, 404 otherwise.
  // `/install/agent/1.0.0` is served/1.0.0, `/install/agent/1.0.0/linux-x64` served/1.0.0_linux-x64.
  const downloaderStub = `out=""; url=""
while (($# > 0)); do case "$1" in -o | -O) out="$2"; shift 2;; http*) url="$1"; shift;; *) shift;; esac; done
path="\${url##*/install/agent/}"
file=${JSON.stringify(served)}/"\${path////_}"
if [[ "$url" == */install/agent/* && -f "$file" ]]; then cp "$file" "$out"; else echo "404 Not Found" >&2; exit 22; fi`;
  await stub("curl", downloaderStub);
  await stub("systemctl");
  await stub("chown");
  await stub("id", "echo 0");
  await stub("uname", "echo x86_64");
  await stub("restic", 'echo "restic 0.18.0 compiled with go1.24 on linux/amd64"');

  const serve = async (name: string, content: string | Uint8Array) => {
    await writeFile(join(served, name), content);
    return createHash("sha256").update(content).digest("hex");
  };
  const serveBundle = (
    version: string,
    content: string | Uint8Array = fakeAgent(join(logs, "agent.jsonl"), "bundle"),
  ) => serve(version, content);
  const serveSea = (
    version: string,
    arch: string,
    content: string | Uint8Array = fakeAgent(join(logs, "agent.jsonl"), "sea"),
  ) => serve(`${version}_linux-${arch}`, content);

  return {
    root,
    bin,
    nodePath,
    serveBundle,
    serveSea,
    async installScript(version = "1.0.0", options = {}) {
      const bundleSha256 = await serveBundle(version);
      const seaArtefacts: InstallSeaArtefact[] = [];
      for (const arch of options.seaArches ?? []) {
        seaArtefacts.push({ os: "linux", arch, sha256: await serveSea(version, arch) });
      }
      return renderInstallScript({
        baseUrl: TEST_BASE_URL,
        agentVersion: version,
        bundleSha256,
        seaArtefacts,
      });
    },
    downloaderStub,
    stub,
    removeStub: (name) => rm(join(bin, name), { force: true }),
    calls: (name) => readLines(join(logs, `${name}.log`)),
    async agentCalls() {
      return (await readLines(join(logs, "agent.jsonl"))).map((line) => JSON.parse(line) as AgentCall);
    },
    run(script, args, options = {}) {
      const result = spawnSync(options.shell ?? bash, ["-s", "--", ...args], {
        input: script,
        encoding: "utf8",
        env: {
          PATH: `${bin}${delimiter}${tools}`,
          FLEETBACK_INSTALL_ROOT: root,
          TMPDIR: tmp,
          HOME: base,
          LANG: "C",
        },
      });
      return { status: result.status, stdout: result.stdout, stderr: result.stderr };
    },
    dispose: () => rm(base, { recursive: true, force: true }),
  };
}
