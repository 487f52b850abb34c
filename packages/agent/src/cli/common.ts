/**
 * @module cli/common
 * Steps several commands share: checking --server and --tls-pin, detecting the restic version
 * for the enrolment body, and writing the config the server handed out.
 */
import { parsePublicKey } from "@fleetback/crypto";
import { Type } from "typebox";
import { Check } from "typebox/value";
import { type AgentConfig, loadAgentConfig, saveAgentConfig } from "../config/agent-config.js";
import type { AgentPaths } from "../config/paths.js";
import { parseServerUrl } from "../net/server-url.js";
import { normalizePin } from "../net/tls-pin.js";
import { createToolVersionProbe } from "../restic/detect-version.js";
import { createRestic } from "../restic/restic.js";
import type { CliDeps } from "./cli-deps.js";

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export interface ServerTarget {
  serverUrl: string;
  tlsPin?: string;
}

export function checkServerTarget(server: string, pin: string | undefined): Checked<ServerTarget> {
  const url = parseServerUrl(server);
  if (!url.ok) {
    return url;
  }
  if (pin === undefined) {
    return { ok: true, value: { serverUrl: url.url } };
  }
  const tlsPin = normalizePin(pin);
  if (tlsPin === undefined) {
    return { ok: false, message: "--tls-pin must be a SHA-256 in hex (64 digits, colons allowed)" };
  }
  if (!url.url.startsWith("https:")) {
    return { ok: false, message: "--tls-pin needs an https:// server URL" };
  }
  return { ok: true, value: { serverUrl: url.url, tlsPin } };
}

export function detectToolVersion(deps: CliDeps, paths: AgentPaths): Promise<string> {
  const restic = createRestic({
    runner: deps.runner,
    command: paths.restic,
    stateDir: paths.stateDir,
    parentEnv: deps.env,
  });
  return createToolVersionProbe(restic).text();
}

/**
 * The release key that enrol and claim answer with (servers before self-update have none; the
 * agent then pins it on first use). A malformed one is left out rather than failing enrolment.
 */
function releaseKeyOf(body: object): { release_public_key?: string } {
  const key = "release_public_key" in body ? body.release_public_key : undefined;
  return typeof key === "string" && parsePublicKey(key).ok ? { release_public_key: key } : {};
}

/** What enrol and claim answer with. */
export const IssuedToken = Type.Object({
  host_id: Type.String({ minLength: 1 }),
  agent_token: Type.String({ minLength: 1 }),
});

export async function writeIssuedConfig(
  deps: CliDeps,
  paths: AgentPaths,
  target: ServerTarget,
  body: unknown,
): Promise<boolean> {
  if (!Check(IssuedToken, body)) {
    deps.err("fleetback-agent: the server's answer has no host_id and agent_token");
    return false;
  }
  const config: AgentConfig = {
    server_url: target.serverUrl,
    host_id: body.host_id,
    agent_token: body.agent_token,
    ...(target.tlsPin === undefined ? {} : { tls_pin_sha256: target.tlsPin }),
    ...releaseKeyOf(body),
  };
  const previous = await loadAgentConfig(paths.configDir);
  if (previous.ok) {
    deps.out(`Replacing the previous config (host ${previous.config.host_id}).`);
  }
  const path = await saveAgentConfig(paths.configDir, config);
  deps.out(`Enrolled as host ${body.host_id}. Config written to ${path}.`);
  deps.out("Start the agent with: fleetback-agent run");
  return true;
}

/**
 * `--label k=v` flags as the request's `labels`. Only the shape is checked here; the server holds
 * the rules (key and value charset, lengths, count) and names a bad label in its refusal.
 */
export function labelsOfFlags(flags: readonly string[] | undefined): Checked<Record<string, string>> {
  const labels: Record<string, string> = {};
  for (const flag of flags ?? []) {
    const equals = flag.indexOf("=");
    const key = equals === -1 ? "" : flag.slice(0, equals);
    if (key === "") {
      return { ok: false, message: `--label ${JSON.stringify(flag)} is not key=value` };
    }
    if (Object.hasOwn(labels, key)) {
      return { ok: false, message: `--label ${key} given twice` };
    }
    labels[key] = flag.slice(equals + 1);
  }
  return { ok: true, value: labels };
}
