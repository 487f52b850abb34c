/**
 * @module config/agent-config
 * The agent's config file, `<config dir>/agent.json` (mode 0600): where the server is, which host
 * this is, the bearer token, and an optional TLS pin. Written by `enroll`/`announce`, read by
 * `run` and `status`. Repository credentials never go here: the server pushes them on every hello
 * and the agent keeps them in memory only.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type Static, Type } from "typebox";
import { Check } from "typebox/value";
import { normalizePin } from "../net/tls-pin.js";
import { writeFileAtomic } from "./atomic-write.js";

export const CONFIG_FILE_NAME = "agent.json";

export const AgentConfig = Type.Object({
  server_url: Type.String({ pattern: "^https?://" }),
  host_id: Type.String({ minLength: 1 }),
  agent_token: Type.String({ minLength: 1 }),
  tls_pin_sha256: Type.Optional(Type.String({ pattern: "^[0-9a-f]{64}$" })),
  /** Base64 of the server's 32-byte Ed25519 release key: update artefacts must be signed by it. */
  release_public_key: Type.Optional(Type.String({ minLength: 1 })),
});
export type AgentConfig = Static<typeof AgentConfig>;

export type LoadConfigResult =
  | { ok: true; config: AgentConfig; path: string }
  | { ok: false; reason: "missing" | "invalid"; message: string; path: string };

export function configPath(configDir: string): string {
  return join(configDir, CONFIG_FILE_NAME);
}

export async function loadAgentConfig(configDir: string): Promise<LoadConfigResult> {
  const path = configPath(configDir);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (cause) {
    const code = cause instanceof Error && "code" in cause ? cause.code : undefined;
    if (code === "ENOENT") {
      return { ok: false, reason: "missing", path, message: `${path} does not exist: enrol this host first` };
    }
    return { ok: false, reason: "invalid", path, message: `cannot read ${path}: ${String(cause)}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: "invalid", path, message: `${path} is not valid JSON` };
  }
  if (value !== null && typeof value === "object" && "tls_pin_sha256" in value) {
    const pin = typeof value.tls_pin_sha256 === "string" ? normalizePin(value.tls_pin_sha256) : undefined;
    value = { ...value, tls_pin_sha256: pin ?? value.tls_pin_sha256 };
  }
  if (!Check(AgentConfig, value)) {
    return {
      ok: false,
      reason: "invalid",
      path,
      message: `${path} is not a valid agent config (needs server_url, host_id, agent_token)`,
    };
  }
  if (value.tls_pin_sha256 !== undefined && !value.server_url.startsWith("https:")) {
    return {
      ok: false,
      reason: "invalid",
      path,
      message: `${path}: tls_pin_sha256 needs an https:// server_url`,
    };
  }
  return { ok: true, config: value, path };
}

export async function saveAgentConfig(configDir: string, config: AgentConfig): Promise<string> {
  const path = configPath(configDir);
  await writeFileAtomic(path, `${JSON.stringify(config, null, 2)}\n`, 0o600);
  return path;
}
