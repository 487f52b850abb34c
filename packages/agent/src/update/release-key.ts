/**
 * @module update/release-key
 * The server's release key, which every update artefact must be signed with. It is pinned in
 * agent.json: at enrolment when the server offers it, otherwise on first use from
 * `GET /api/agents/release-key` (bearer, TLS pin). Once pinned it is never replaced from the
 * network, so a server compromised later cannot push an artefact signed with a key of its own.
 */
import { parsePublicKey } from "@fleetback/crypto";
import { type AgentConfig, loadAgentConfig, saveAgentConfig } from "../config/agent-config.js";
import { errorMessageOf, requestJson } from "../net/json-request.js";
import { endpointUrl } from "../net/server-url.js";

export type ReleaseKeyResult = { ok: true; key: Uint8Array; base64: string } | { ok: false; error: string };

export interface ReleaseKeyOptions {
  config: AgentConfig;
  /** Where agent.json lives; undefined keeps a fetched key in memory only. */
  configDir?: string;
}

function parsed(base64: string, origin: string): ReleaseKeyResult {
  const key = parsePublicKey(base64);
  return key.ok
    ? { ok: true, key: key.key, base64 }
    : { ok: false, error: `the ${origin} release key is not a valid Ed25519 public key (${key.reason})` };
}

export function createReleaseKeySource(options: ReleaseKeyOptions): () => Promise<ReleaseKeyResult> {
  let pinned = options.config.release_public_key;
  return async () => {
    if (pinned !== undefined) {
      return parsed(pinned, "pinned");
    }
    const { config } = options;
    let response: Awaited<ReturnType<typeof requestJson>>;
    try {
      response = await requestJson({
        method: "GET",
        url: endpointUrl(config.server_url, "/api/agents/release-key"),
        tlsPin: config.tls_pin_sha256,
        bearer: config.agent_token,
      });
    } catch (cause) {
      return { ok: false, error: `could not fetch the release key: ${String(cause)}` };
    }
    const body = response.body;
    const key =
      body !== null && typeof body === "object" && "release_public_key" in body
        ? body.release_public_key
        : undefined;
    if (response.status !== 200 || typeof key !== "string") {
      const detail = errorMessageOf(body) ?? "no release_public_key in the answer";
      return { ok: false, error: `could not fetch the release key (HTTP ${response.status}): ${detail}` };
    }
    const result = parsed(key, "server's");
    if (!result.ok) {
      return result;
    }
    pinned = key;
    if (options.configDir !== undefined) {
      // Re-read: enrol may have rewritten the file since this agent started.
      const current = await loadAgentConfig(options.configDir);
      if (current.ok && current.config.agent_token === config.agent_token) {
        await saveAgentConfig(options.configDir, { ...current.config, release_public_key: key });
      }
    }
    return result;
  };
}
