import { CLOSE_CODES } from "@fleetback/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { saveAgentConfig } from "../config/agent-config.js";
import { createTestCliDeps, type TestCliDeps } from "../testing/cli-deps.js";
import { startTestServer, type TestServer } from "../testing/test-server.js";
import { EXIT } from "./exit-codes.js";
import { runCli } from "./run-cli.js";

let server: TestServer;
let deps: TestCliDeps;
let shutdown: (() => void) | undefined;

beforeEach(async () => {
  server = await startTestServer();
  deps = await createTestCliDeps({
    onShutdownSignal: (handler) => {
      shutdown = handler;
      return () => {
        shutdown = undefined;
      };
    },
  });
  await saveAgentConfig(deps.configDir, {
    server_url: server.url,
    host_id: "01HOST",
    agent_token: "fa_token123",
  });
});
afterEach(async () => {
  await server.stop();
});

describe("fleetback-agent run", () => {
  it("exits 3 without a config", async () => {
    const fresh = await createTestCliDeps();
    expect(await runCli(["run"], fresh)).toBe(EXIT.notEnrolled);
  });

  it("connects, logs JSON lines without the token, and exits 0 on a shutdown signal", async () => {
    const exit = runCli(["run"], deps);
    const peer = await server.nextPeer();
    expect((await peer.next("hello")).payload).toMatchObject({ tool_version: "0.18.0", hostname: "vm" });
    shutdown?.();
    expect(await exit).toBe(EXIT.ok);
    expect(shutdown).toBeUndefined();
    const entries = deps.logLines.map((line) => JSON.parse(line));
    expect(entries.map((entry) => entry.msg)).toContain("connected to the server");
    expect(deps.logLines.join("")).not.toContain("fa_token123");
  });

  it.each([
    [CLOSE_CODES.hostDeleted, EXIT.revoked],
    [CLOSE_CODES.protocolTooOld, EXIT.protocolTooOld],
  ])("exits non-zero without reconnecting on close %i", async (code, expected) => {
    const exit = runCli(["run"], deps);
    const peer = await server.nextPeer();
    await peer.next("hello");
    peer.close(code);
    expect(await exit).toBe(expected);
    expect(deps.stderr).toHaveLength(1);
    expect(server.upgradeRequests).toHaveLength(1);
  });

  it("exits 5 when the upgrade is refused with 401", async () => {
    server.refuseWith = 401;
    expect(await runCli(["run"], deps)).toBe(EXIT.revoked);
    expect(deps.stderr[0]).toContain("HTTP 401");
  });
});
