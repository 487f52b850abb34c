import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AgentConfig, loadAgentConfig, saveAgentConfig } from "../config/agent-config.js";
import { useHttpStub } from "../testing/http-stub.js";
import { createReleaseSigner } from "../testing/release-signing.js";
import { createReleaseKeySource } from "./release-key.js";

const signer = createReleaseSigner();
const startStub = useHttpStub();

async function enrolled(url: string, extra: Partial<AgentConfig> = {}) {
  const configDir = await mkdtemp(join(tmpdir(), "fleetback-config-"));
  const config: AgentConfig = { server_url: url, host_id: "01HOST", agent_token: "fa_token", ...extra };
  await saveAgentConfig(configDir, config);
  return { configDir, config };
}

describe("release key", () => {
  it("uses the pinned key without asking the server", async () => {
    const stub = await startStub(() => ({ status: 500 }));
    const { config, configDir } = await enrolled(stub.url, { release_public_key: signer.publicKeyBase64 });
    const key = await createReleaseKeySource({ config, configDir })();
    expect(key).toEqual({ ok: true, key: signer.publicKey, base64: signer.publicKeyBase64 });
    expect(stub.requests).toEqual([]);
  });

  it("fetches it once with the bearer and pins it in agent.json", async () => {
    const stub = await startStub(() => ({
      status: 200,
      body: { release_public_key: signer.publicKeyBase64 },
    }));
    const { config, configDir } = await enrolled(stub.url);
    const source = createReleaseKeySource({ config, configDir });
    expect((await source()).ok).toBe(true);
    expect((await source()).ok).toBe(true);
    expect(stub.requests).toMatchObject([
      { method: "GET", path: "/api/agents/release-key", headers: { authorization: "Bearer fa_token" } },
    ]);
    const saved = await loadAgentConfig(configDir);
    expect(saved.ok && saved.config.release_public_key).toBe(signer.publicKeyBase64);
  });

  it("refuses a missing or malformed key", async () => {
    const malformed = await startStub(() => ({ status: 200, body: { release_public_key: "AAAA" } }));
    const { config } = await enrolled(malformed.url);
    expect(await createReleaseKeySource({ config })()).toEqual({
      ok: false,
      error: "the server's release key is not a valid Ed25519 public key (wrong_length)",
    });
    const missing = await startStub(() => ({
      status: 404,
      body: { code: "not_found", message: "no such route" },
    }));
    const older = await enrolled(missing.url);
    expect(await createReleaseKeySource({ config: older.config })()).toEqual({
      ok: false,
      error: "could not fetch the release key (HTTP 404): no such route",
    });
  });
});
