import { stat } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { createTestCliDeps, writtenAgentConfig } from "../testing/cli-deps.js";
import { useHttpStub } from "../testing/http-stub.js";
import { createReleaseSigner } from "../testing/release-signing.js";
import { EXIT } from "./exit-codes.js";
import { runCli } from "./run-cli.js";

const startStub = useHttpStub();

describe("fleetback-agent enroll", () => {
  it("posts the token and host facts, then writes agent.json with mode 0600 in a 0700 dir", async () => {
    const stub = await startStub(() => ({
      status: 201,
      body: { host_id: "01HOST", agent_token: "fa_abcdefghijkl" },
    }));
    const deps = await createTestCliDeps();
    const code = await runCli(["enroll", "--server", `${stub.url}/`, "--token", "fe_onetime"], deps);
    expect(code).toBe(EXIT.ok);
    expect(stub.requests).toEqual([
      expect.objectContaining({
        method: "POST",
        path: "/api/agents/enroll",
        body: {
          token: "fe_onetime",
          hostname: "vm",
          os: "linux",
          arch: "x64",
          agent_version: "0.1.0",
          tool_version: "0.18.0",
        },
      }),
    ]);
    expect(await writtenAgentConfig(deps)).toEqual({
      server_url: stub.url,
      host_id: "01HOST",
      agent_token: "fa_abcdefghijkl",
    });
    expect((await stat(deps.configDir)).mode & 0o777).toBe(0o700);
    expect(deps.stdout.join("\n")).toContain("Enrolled as host 01HOST");
    expect(deps.stdout.join("\n")).not.toContain("fa_abcdefghijkl");
  });

  it("takes the token from FLEETBACK_ENROLL_TOKEN, so an installer keeps it out of argv", async () => {
    const stub = await startStub(() => ({
      status: 201,
      body: { host_id: "01HOST", agent_token: "fa_abcdefghijkl" },
    }));
    const deps = await createTestCliDeps({ env: { FLEETBACK_ENROLL_TOKEN: "fe_from_env" } });
    expect(await runCli(["enroll", "--server", stub.url], deps)).toBe(EXIT.ok);
    expect(stub.requests[0]?.body).toMatchObject({ token: "fe_from_env" });
  });

  it("pins the release key the server answers with, and leaves out a malformed one", async () => {
    const signer = createReleaseSigner();
    let key = signer.publicKeyBase64;
    const stub = await startStub(() => ({
      status: 201,
      body: { host_id: "01HOST", agent_token: "fa_abcdefghijkl", release_public_key: key },
    }));
    const deps = await createTestCliDeps();
    expect(await runCli(["enroll", "--server", stub.url, "--token", "fe_1"], deps)).toBe(EXIT.ok);
    expect((await writtenAgentConfig(deps)).release_public_key).toBe(signer.publicKeyBase64);
    key = "not a key";
    expect(await runCli(["enroll", "--server", stub.url, "--token", "fe_2"], deps)).toBe(EXIT.ok);
    expect((await writtenAgentConfig(deps)).release_public_key).toBeUndefined();
  });

  it("sends --label flags as the request's labels, and none at all without them", async () => {
    const stub = await startStub(() => ({
      status: 201,
      body: { host_id: "01HOST", agent_token: "fa_abcdefghijkl" },
    }));
    const deps = await createTestCliDeps();
    const argv = ["enroll", "--server", stub.url, "--token", "fe_1", "--label", "env=prod", "--label=tier="];
    expect(await runCli(argv, deps)).toBe(EXIT.ok);
    expect(stub.requests[0]?.body).toMatchObject({ token: "fe_1", labels: { env: "prod", tier: "" } });
    expect(await runCli(["enroll", "--server", stub.url, "--token", "fe_2"], deps)).toBe(EXIT.ok);
    expect(stub.requests[1]?.body).not.toHaveProperty("labels");
  });

  it("exits 2 on a --label that is not key=value or names a key twice, sending nothing", async () => {
    const stub = await startStub(() => ({ status: 201, body: {} }));
    for (const labels of [["env"], ["=prod"], ["env=a", "env=b"]]) {
      const deps = await createTestCliDeps();
      const argv = [
        "enroll",
        "--server",
        stub.url,
        "--token",
        "fe_1",
        ...labels.flatMap((l) => ["--label", l]),
      ];
      expect(await runCli(argv, deps), labels.join(" ")).toBe(EXIT.usage);
      expect(deps.stderr.join("\n")).toContain("--label");
    }
    expect(stub.requests).toHaveLength(0);
  });

  it("exits 2 when no token is given at all", async () => {
    const deps = await createTestCliDeps({ env: {} });
    expect(await runCli(["enroll", "--server", "http://127.0.0.1:9"], deps)).toBe(EXIT.usage);
    expect(deps.stderr.join("\n")).toContain("FLEETBACK_ENROLL_TOKEN");
  });

  it("exits 4 with the server's message when the token is refused", async () => {
    const stub = await startStub(() => ({
      status: 401,
      body: { code: "unauthorised", message: "token expired" },
    }));
    const deps = await createTestCliDeps();
    expect(await runCli(["enroll", "--server", stub.url, "--token", "x"], deps)).toBe(EXIT.refused);
    expect(deps.stderr).toEqual([
      "fleetback-agent: the server refused the enrolment (HTTP 401): token expired",
    ]);
  });

  it("exits 1 when the server is unreachable, 2 on a bad URL or pin", async () => {
    const deps = await createTestCliDeps();
    expect(await runCli(["enroll", "--server", "http://127.0.0.1:1", "--token", "x"], deps)).toBe(
      EXIT.failure,
    );
    expect(deps.stderr[0]).toMatch(/^fleetback-agent: enrolment failed: .*ECONNREFUSED/);
    expect(await runCli(["enroll", "--server", "ftp://x", "--token", "x"], deps)).toBe(EXIT.usage);
    expect(
      await runCli(["enroll", "--server", "http://x", "--token", "x", "--tls-pin", "ab".repeat(32)], deps),
    ).toBe(EXIT.usage);
    expect(deps.stderr.at(-1)).toBe("fleetback-agent: --tls-pin needs an https:// server URL");
  });
});

describe("fleetback-agent status", () => {
  it("shows the config with the token cut to 6 characters, restic and server health", async () => {
    const stub = await startStub((request) => ({
      status: request.path === "/healthz" ? 200 : 201,
      body: { host_id: "01HOST", agent_token: "fa_abcdefghijkl" },
    }));
    const deps = await createTestCliDeps();
    await runCli(["enroll", "--server", stub.url, "--token", "t"], deps);
    deps.stdout.length = 0;
    expect(await runCli(["status"], deps)).toBe(EXIT.ok);
    const text = deps.stdout.join("\n");
    expect(text).toContain("agent token:   fa_abc…");
    expect(text).not.toContain("fa_abcdefghijkl");
    expect(text).toContain(`server:        ${stub.url}`);
    expect(text).toContain("restic:        restic (0.18.0)");
    expect(text).toContain("server health: ok");
    expect(text).toContain(`state dir:     ${deps.stateDir}`);
  });

  it("exits 3 when not enrolled", async () => {
    const deps = await createTestCliDeps();
    expect(await runCli(["status"], deps)).toBe(EXIT.notEnrolled);
    expect(deps.stderr[0]).toContain("enrol this host first");
  });
});

describe("fleetback-agent help", () => {
  it("documents every exit status", async () => {
    const deps = await createTestCliDeps();
    expect(await runCli(["--help"], deps)).toBe(EXIT.ok);
    for (const code of Object.values(EXIT)) {
      expect(deps.stdout.join("\n")).toMatch(new RegExp(`^  ${code}  `, "m"));
    }
  });
});
