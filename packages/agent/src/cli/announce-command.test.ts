import { access, stat } from "node:fs/promises";
import { join } from "node:path";
import { fingerprint, parsePublicKey, verifySignature } from "@fleetback/crypto";
import { describe, expect, it } from "vitest";
import { createTestCliDeps, writtenAgentConfig } from "../testing/cli-deps.js";
import { type StubAnswer, type StubRequest, useHttpStub } from "../testing/http-stub.js";
import { claimMessage } from "./announce-command.js";
import { EXIT } from "./exit-codes.js";
import { runCli } from "./run-cli.js";

const startStub = useHttpStub();

function bodyOf(request: StubRequest): Record<string, unknown> {
  const body = request.body;
  return body !== null && typeof body === "object" ? Object.fromEntries(Object.entries(body)) : {};
}

/** Announce answers with the fingerprint of the posted key; claims get `claims` in turn. */
function announceServer(claims: StubAnswer[]) {
  return (request: StubRequest): StubAnswer => {
    if (request.path === "/api/agents/announce") {
      const key = parsePublicKey(String(bodyOf(request).public_key));
      if (!key.ok) {
        return { status: 400, body: { code: "invalid_message", message: key.reason } };
      }
      return {
        status: 201,
        body: { pending_id: "01PENDING", fingerprint: fingerprint(key.key), hostname_collision: true },
      };
    }
    return claims.shift() ?? { status: 500 };
  };
}

describe("fleetback-agent announce", () => {
  it("prints the fingerprint, polls with signed claims through 202 and 404, and writes the config on 200", async () => {
    const stub = await startStub(
      announceServer([
        { status: 202, body: { code: "pending", message: "waiting for approval" } },
        { status: 404 },
        { status: 200, body: { host_id: "01HOST", agent_token: "fa_claimedtoken" } },
      ]),
    );
    const deps = await createTestCliDeps();
    expect(await runCli(["announce", "--server", stub.url], deps)).toBe(EXIT.ok);

    const [announce, ...claims] = stub.requests;
    const announced = bodyOf(announce ?? { method: "", path: "", headers: {}, body: undefined });
    expect(announced).toMatchObject({
      hostname: "vm",
      os: "linux",
      arch: "x64",
      agent_version: "0.1.0",
      tool_version: "0.18.0",
    });
    const publicKey = parsePublicKey(String(announced.public_key));
    if (!publicKey.ok) {
      throw new Error("the agent sent an invalid public key");
    }
    expect(deps.stdout).toContain(
      `    Compare this fingerprint on the server's enrol page: ${fingerprint(publicKey.key)}`,
    );
    expect(deps.stdout.join("\n")).toContain("already has a host named vm");

    expect(claims).toHaveLength(3);
    for (const claim of claims) {
      expect(claim.path).toBe("/api/agents/announce/01PENDING/claim");
      const { timestamp, signature } = bodyOf(claim);
      expect(String(timestamp)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const valid = verifySignature(
        publicKey.key,
        claimMessage("01PENDING", String(timestamp)),
        new Uint8Array(Buffer.from(String(signature), "base64")),
      );
      expect(valid).toBe(true);
    }
    expect(claimMessage("01PENDING", "2026-01-01T00:00:00Z")).toBe(
      "fleetback-claim:01PENDING:2026-01-01T00:00:00Z",
    );

    expect(await writtenAgentConfig(deps)).toEqual({
      server_url: stub.url,
      host_id: "01HOST",
      agent_token: "fa_claimedtoken",
    });
    // The key pair has done its job once the token is claimed.
    await expect(access(join(deps.stateDir, "announce-key.json"))).rejects.toThrow();
  });

  it("keeps the key pair (mode 0600) and the fingerprint across runs until claimed", async () => {
    const stub = await startStub(
      announceServer([{ status: 410, body: { code: "gone", message: "expired" } }, { status: 410 }]),
    );
    const deps = await createTestCliDeps();
    await runCli(["announce", "--server", stub.url], deps);
    await runCli(["announce", "--server", stub.url], deps);
    const keys = stub.requests
      .filter((request) => request.path === "/api/agents/announce")
      .map((r) => bodyOf(r).public_key);
    expect(keys[0]).toBe(keys[1]);
    expect((await stat(join(deps.stateDir, "announce-key.json"))).mode & 0o777).toBe(0o600);
  });

  it.each([
    [410, "expired", "fleetback-agent: the server refused the claim (HTTP 410): expired"],
    [
      403,
      "rejected by the operator",
      "fleetback-agent: the server refused the claim (HTTP 403): rejected by the operator",
    ],
  ])("exits 4 on %i", async (status, message, line) => {
    const stub = await startStub(announceServer([{ status, body: { code: "x", message } }]));
    const deps = await createTestCliDeps();
    expect(await runCli(["announce", "--server", stub.url], deps)).toBe(EXIT.refused);
    expect(deps.stderr).toEqual([line]);
  });

  it("keeps polling through server errors and says so once", async () => {
    const stub = await startStub(
      announceServer([
        { status: 503 },
        { status: 503 },
        { status: 200, body: { host_id: "01HOST", agent_token: "fa_t" } },
      ]),
    );
    const deps = await createTestCliDeps();
    expect(await runCli(["announce", "--server", stub.url], deps)).toBe(EXIT.ok);
    expect(deps.stderr).toEqual(["fleetback-agent: unexpected answer HTTP 503: no details; still waiting"]);
  });
});
