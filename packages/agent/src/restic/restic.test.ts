import { describe, expect, it } from "vitest";
import { createEchoRestic } from "../testing/fake-restic.js";
import { createReplayRunner, type Recording } from "./replay-adapter.js";
import { buildArgs, createRestic, type ResticRequest } from "./restic.js";
import type { OutputLine } from "./runner.js";
import { createSpawnRunner } from "./spawn-adapter.js";

const repository = {
  url: "rest:http://127.0.0.1:8000/alice/",
  username: "alice",
  password: "canary-Pa55/word@x",
};

const fromRepository = {
  url: "rest:http://127.0.0.1:8001/carol/",
  username: "carol",
  password: "from-Canary:pw",
};

/** restic over a replay runner that answers every call with `recording`. */
function replayedRestic(
  recording: Recording = { stdout: "", stderr: "", exitCode: 0 },
  parentEnv: NodeJS.ProcessEnv = {},
  stateDir = "/s",
) {
  const runner = createReplayRunner(recording);
  return { runner, restic: createRestic({ runner, command: "restic", stateDir, parentEnv }) };
}

/**
 * Runs `request` through a stand-in restic that prints its argv, its environment, then `output`,
 * and checks it exited 0: the lines, and all of them as one text.
 */
async function echoRun(
  output: string,
  request: Omit<ResticRequest, "onLine">,
  parentEnv: NodeJS.ProcessEnv = {},
) {
  const restic = createRestic({
    runner: createSpawnRunner(),
    command: await createEchoRestic(output),
    stateDir: "/tmp/state",
    parentEnv,
  });
  const lines: string[] = [];
  const result = await restic.run({ ...request, onLine: (line) => lines.push(line.text) });
  expect(result).toMatchObject({ kind: "exited", exitCode: 0 });
  return { lines, text: lines.join("\n") };
}

describe("buildArgs", () => {
  it("puts global flags before the subcommand and never a credential", () => {
    expect(
      buildArgs(
        { subcommand: "init", json: true, caps: { up: 100, down: null }, onLine: () => {} },
        "/s/cache",
      ),
    ).toEqual(["--cache-dir", "/s/cache", "--limit-upload", "100", "--json", "init"]);
    expect(
      buildArgs(
        { subcommand: "backup", args: ["/srv"], caps: { up: null, down: 7 }, onLine: () => {} },
        "/c",
      ),
    ).toEqual(["--cache-dir", "/c", "--limit-download", "7", "backup", "/srv"]);
  });
});

describe("createRestic with the replay runner", () => {
  it("hands credentials over in the environment only, merged into the URL for rest:", async () => {
    const { runner, restic } = replayedRestic(
      undefined,
      { PATH: "/bin", RESTIC_PASSWORD_FILE: "/etc/evil", AWS_SECRET_ACCESS_KEY: "x" },
      "/var/lib/fa",
    );
    await restic.run({ subcommand: "init", repository, onLine: () => {} });
    const [spec] = runner.calls;
    expect(spec?.env).toEqual({
      PATH: "/bin",
      RESTIC_REPOSITORY: "rest:http://alice:canary-Pa55%2Fword%40x@127.0.0.1:8000/alice/",
      RESTIC_PASSWORD: "canary-Pa55/word@x",
      RESTIC_CACHE_DIR: "/var/lib/fa/cache",
      RESTIC_PROGRESS_FPS: "1",
    });
    expect(spec?.args.join(" ")).not.toContain("canary");
    expect(spec?.args).toEqual(["--cache-dir", "/var/lib/fa/cache", "init"]);
  });

  it.each([
    {
      title: "merges the login password into the URL and keeps the repository password for RESTIC_PASSWORD",
      logins: { login_password: "login-Canary#1" },
      fromLogins: { login_password: "from-login:2" },
      args: undefined,
      userinfo: ["alice:login-Canary%231", "carol:from-login%3A2"],
    },
    {
      title: "hands the source repository of a copy over as RESTIC_FROM_*, merged the same way",
      logins: {},
      fromLogins: {},
      args: ["a".repeat(64)],
      userinfo: ["alice:canary-Pa55%2Fword%40x", "carol:from-Canary%3Apw"],
    },
  ])("$title", async ({ logins, fromLogins, args, userinfo: [user, fromUser] }) => {
    const { runner, restic } = replayedRestic();
    await restic.run({
      subcommand: "copy",
      args,
      repository: { ...repository, ...logins },
      fromRepository: { ...fromRepository, ...fromLogins },
      onLine: () => {},
    });
    const [spec] = runner.calls;
    expect(spec?.env).toMatchObject({
      RESTIC_REPOSITORY: `rest:http://${user}@127.0.0.1:8000/alice/`,
      RESTIC_PASSWORD: "canary-Pa55/word@x",
      RESTIC_FROM_REPOSITORY: `rest:http://${fromUser}@127.0.0.1:8001/carol/`,
      RESTIC_FROM_PASSWORD: "from-Canary:pw",
    });
    expect(spec?.args.join(" ")).not.toMatch(/canary|login/i);
  });

  it("refuses source credentials that cannot be put into a URL before starting anything", async () => {
    const { runner, restic } = replayedRestic();
    const result = await restic.run({
      subcommand: "copy",
      repository,
      // A lone surrogate cannot be percent-encoded (mergeUrlCredentials throws).
      fromRepository: { url: "rest:http://127.0.0.1:8001/carol/", username: "carol", password: "\uD800" },
      onLine: () => {},
    });
    expect(result).toEqual({
      kind: "invalid_credentials",
      message: "the source repository credentials cannot be put into a URL",
    });
    expect(runner.calls).toEqual([]);
  });

  it("leaves a local path untouched and unscrubbed", async () => {
    const { runner, restic } = replayedRestic({
      stdout: "created restic repository 1 at /tmp/repo\n",
      stderr: "",
      exitCode: 0,
    });
    const lines: OutputLine[] = [];
    await restic.run({
      subcommand: "init",
      repository: { url: "/tmp/repo", password: "local-secret" },
      onLine: (line) => lines.push(line),
    });
    expect(runner.calls[0]?.env.RESTIC_REPOSITORY).toBe("/tmp/repo");
    expect(lines).toEqual([{ stream: "stdout", text: "created restic repository 1 at /tmp/repo" }]);
  });
});

describe("createRestic with a real process", () => {
  it("scrubs the password and merged URL from every line and redacts URLs", async () => {
    const { text } = await echoRun(
      "raw canary-Pa55/word@x and encoded canary-Pa55%2Fword%40x and rest:http://bob:hunter22@host/\n",
      { subcommand: "init", repository },
      { PATH: process.env.PATH, RESTIC_PASSWORD_COMMAND: "echo parent" },
    );
    expect(text).not.toContain("canary");
    expect(text).not.toContain("hunter22");
    expect(text).not.toContain("RESTIC_PASSWORD_COMMAND");
    expect(text).toContain("env: RESTIC_PASSWORD=***");
    expect(text).toContain("env: RESTIC_REPOSITORY=***");
    expect(text).toContain("rest:http://bob:***@host/");
    expect(text).toContain("argv: --cache-dir /tmp/state/cache init");
  });

  it("scrubs the login passwords of both repositories and the URLs they were merged into", async () => {
    const { text } = await echoRun("login login-Canary#1 login-Canary%231 from-login:2 from-login%3a2\n", {
      subcommand: "copy",
      repository: { ...repository, login_password: "login-Canary#1" },
      fromRepository: { ...fromRepository, login_password: "from-login:2" },
    });
    expect(text).not.toMatch(/login-canary|from-login/i);
    expect(text).toContain("login *** *** *** ***");
    expect(text).toContain("env: RESTIC_REPOSITORY=***");
    expect(text).toContain("env: RESTIC_FROM_REPOSITORY=***");
  });

  it("keeps a user name that is part of a path: only credentials are secret (issue 31)", async () => {
    // rest-server user "alice"; her host backs up /srv/alice-alpha. Scrubbed, the browser showed
    // /srv/***-alpha, and restoring that path restored nothing.
    const { lines, text } = await echoRun(
      '{"path":"/srv/alice-alpha/notes.txt"}\nrestored /home/alice/alice.txt for alice\n',
      { subcommand: "ls", repository, fromRepository },
    );
    expect(lines).toContain('{"path":"/srv/alice-alpha/notes.txt"}');
    expect(lines).toContain("restored /home/alice/alice.txt for alice");
    // The credentials around it are still hidden.
    expect(text).not.toMatch(/canary/i);
    expect(lines).toContain("env: RESTIC_REPOSITORY=***");
  });

  it("scrubs the source repository's password and merged URL too, not its user name", async () => {
    const { text } = await echoRun(
      "source carol from-Canary:pw and from-Canary%3Apw\n",
      { subcommand: "copy", repository, fromRepository },
      { PATH: process.env.PATH, RESTIC_FROM_PASSWORD_COMMAND: "echo parent" },
    );
    expect(text).not.toMatch(/canary/i);
    expect(text).toContain("source carol *** and ***");
    expect(text).not.toContain("RESTIC_FROM_PASSWORD_COMMAND");
    expect(text).toContain("env: RESTIC_FROM_PASSWORD=***");
    expect(text).toContain("env: RESTIC_FROM_REPOSITORY=***");
    expect(text).toContain("argv: --cache-dir /tmp/state/cache copy");
  });
});
