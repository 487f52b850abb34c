import { join } from "node:path";
import type { CommandRunInit, LogStreamName } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { createCredentialStore } from "../restic/credential-store.js";
import { createToolVersionProbe } from "../restic/detect-version.js";
import { createReplayRunner, loadRecording, type Recording } from "../restic/replay-adapter.js";
import { createRestic } from "../restic/restic.js";
import type { ProcessSpec } from "../restic/runner.js";
import { resticFixturesDir } from "../testing/tools.js";
import { createInitJob } from "./init-job.js";
import type { JobOutcome } from "./job-types.js";
import { NO_CREDENTIALS_ERROR } from "./repository-refusal.js";

const command: CommandRunInit = {
  job_id: "01M807SKJ8H7QEZZS1A0ZWSK9T",
  kind: "init",
  requires_admin_creds: false,
};

interface Ran {
  outcome: JobOutcome;
  lines: { stream: LogStreamName; line: string }[];
  calls: ProcessSpec[];
}

/** Replays `version` for the version probe and `name` for the init itself. */
async function runInit(
  version: "0.14.0" | "0.18.0",
  backend: string,
  name: string,
  url: string,
): Promise<Ran> {
  const dir = join(resticFixturesDir(), version, backend);
  const versionRecording = loadRecording(dir, "version");
  const initRecording = loadRecording(dir, name);
  const runner = createReplayRunner(
    (spec): Recording => (spec.args.includes("version") ? versionRecording : initRecording),
  );
  const restic = createRestic({ runner, command: "restic", stateDir: "/state", parentEnv: {} });
  const credentials = createCredentialStore();
  credentials.setRepository("repo", { url, username: "alice", password: "testpass" });
  const job = createInitJob({ restic, toolVersion: createToolVersionProbe(restic), credentials });
  const lines: Ran["lines"] = [];
  const outcome = await job({
    command,
    signal: new AbortController().signal,
    log: (stream, line) => lines.push({ stream, line }),
    progress: () => {},
  });
  return { outcome, lines, calls: runner.calls.filter((call) => call.args.includes("init")) };
}

const cases = [
  ["0.18.0", "local", "/srv/lab/work/0.18.0/local/repo"],
  ["0.14.0", "local", "/srv/lab/work/0.14.0/local/repo"],
  ["0.18.0", "rest", "rest:http://127.0.0.1:53105/alice/"],
  ["0.14.0", "rest", "rest:http://127.0.0.1:53105/alice/"],
] as const;

describe("init on recorded restic output", () => {
  it.each(cases)("%s %s: a new repository succeeds", async (version, backend, url) => {
    const ran = await runInit(version, backend, version === "0.18.0" ? "init-json" : "init", url);
    expect(ran.outcome).toEqual({ status: "succeeded", exit_code: 0 });
    expect(ran.lines.some((entry) => entry.stream === "stdout" && entry.line.includes("repository"))).toBe(
      true,
    );
  });

  it.each(cases)(
    "%s %s: an existing repository succeeds with an agent line",
    async (version, backend, url) => {
      const ran = await runInit(
        version,
        backend,
        version === "0.18.0" ? "init-again-json" : "init-again",
        url,
      );
      expect(ran.outcome).toEqual({ status: "succeeded", exit_code: 1 });
      expect(ran.lines.at(-1)).toEqual({
        stream: "agent",
        line: "the repository already exists; nothing to do",
      });
      expect(
        ran.lines.some(
          (entry) => entry.stream === "stderr" && entry.line.includes("config file already exists"),
        ),
      ).toBe(true);
    },
  );

  it("passes --json only to restic 0.15 and later", async () => {
    const new18 = await runInit("0.18.0", "local", "init-json", "/r");
    const new14 = await runInit("0.14.0", "local", "init", "/r");
    expect(new18.calls[0]?.args).toContain("--json");
    expect(new14.calls[0]?.args).not.toContain("--json");
  });

  it("fails with restic's own message for other errors", async () => {
    const ran = await runInit("0.18.0", "local", "err-wrong-password-json", "/r");
    expect(ran.outcome).toEqual({
      status: "failed",
      exit_code: 12,
      error: "Fatal: wrong password or no key found",
    });
    const old = await runInit("0.14.0", "local", "err-missing-repo", "/r");
    expect(old.outcome).toMatchObject({ status: "failed", exit_code: 1 });
    expect(old.outcome.error).toMatch(/^Fatal: unable to open config file/);
  });
});

describe("init without credentials", () => {
  it("fails at once and runs nothing", async () => {
    const runner = createReplayRunner({ stdout: "", stderr: "", exitCode: 0 });
    const restic = createRestic({ runner, command: "restic", stateDir: "/s", parentEnv: {} });
    const job = createInitJob({
      restic,
      toolVersion: createToolVersionProbe(restic),
      credentials: createCredentialStore(),
    });
    const outcome = await job({
      command,
      signal: new AbortController().signal,
      log: () => {},
      progress: () => {},
    });
    expect(outcome).toEqual({ status: "failed", exit_code: null, error: NO_CREDENTIALS_ERROR });
    expect(runner.calls).toEqual([]);
  });
});
