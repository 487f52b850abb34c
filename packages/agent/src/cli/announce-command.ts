/**
 * @module cli/announce-command
 * `fleetback-agent announce --server URL`: enrolment without a token. The agent sends a fresh
 * Ed25519 public key, prints its fingerprint for the operator to compare on the enrol page, and
 * polls the claim endpoint with signed requests until the operator approves (200, token handed
 * out once), rejects (403) or the announcement expires (410).
 */
import { encodePublicKey, fingerprint, sign } from "@fleetback/crypto";
import { Type } from "typebox";
import { Check } from "typebox/value";
import { loadOrCreateAnnounceKey, removeAnnounceKey } from "../config/announce-key.js";
import type { AgentPaths } from "../config/paths.js";
import { errorMessageOf, type JsonResponse, requestJson } from "../net/json-request.js";
import { endpointUrl } from "../net/server-url.js";
import { sleep } from "../time/timers.js";
import type { Flags } from "./argv.js";
import type { CliDeps } from "./cli-deps.js";
import {
  checkServerTarget,
  detectToolVersion,
  labelsOfFlags,
  type ServerTarget,
  writeIssuedConfig,
} from "./common.js";
import { EXIT, type ExitCode } from "./exit-codes.js";

const Announced = Type.Object({
  pending_id: Type.String({ minLength: 1, pattern: "^[A-Za-z0-9_-]+$" }),
  fingerprint: Type.String(),
  hostname_collision: Type.Boolean(),
});

/** The exact text each claim request signs; the server (enrolment/announce.ts) verifies the same. */
export function claimMessage(pendingId: string, timestamp: string): string {
  return `fleetback-claim:${pendingId}:${timestamp}`;
}

/** RFC 3339 UTC, whole seconds. */
export function claimTimestamp(now: Date): string {
  return now.toISOString().replace(/\.\d+Z$/, "Z");
}

async function post(target: ServerTarget, path: string, body: unknown): Promise<JsonResponse | Error> {
  try {
    return await requestJson({
      method: "POST",
      url: endpointUrl(target.serverUrl, path),
      tlsPin: target.tlsPin,
      body,
    });
  } catch (cause) {
    return cause instanceof Error ? cause : new Error(String(cause));
  }
}

export async function announceCommand(deps: CliDeps, flags: Flags, paths: AgentPaths): Promise<ExitCode> {
  const checked = checkServerTarget(flags.server ?? "", flags.tlsPin);
  if (!checked.ok) {
    deps.err(`fleetback-agent: ${checked.message}`);
    return EXIT.usage;
  }
  const target = checked.value;
  const labels = labelsOfFlags(flags.labels);
  if (!labels.ok) {
    deps.err(`fleetback-agent: ${labels.message}`);
    return EXIT.usage;
  }
  const keys = await loadOrCreateAnnounceKey(paths.stateDir);
  const ownFingerprint = fingerprint(keys.publicKey);
  const announced = await post(target, "/api/agents/announce", {
    ...deps.identity,
    agent_version: deps.agentVersion,
    tool_version: await detectToolVersion(deps, paths),
    public_key: encodePublicKey(keys.publicKey),
    // Only when given: a server from before labels refuses a field it does not know.
    ...(Object.keys(labels.value).length > 0 ? { labels: labels.value } : {}),
  });
  if (announced instanceof Error) {
    deps.err(`fleetback-agent: announce failed: ${announced.message}`);
    return EXIT.failure;
  }
  if (announced.status < 200 || announced.status > 299 || !Check(Announced, announced.body)) {
    const detail = errorMessageOf(announced.body) ?? "unexpected answer";
    deps.err(`fleetback-agent: the server refused the announcement (HTTP ${announced.status}): ${detail}`);
    return announced.status >= 400 && announced.status < 500 ? EXIT.refused : EXIT.failure;
  }
  const { pending_id: pendingId } = announced.body;
  if (announced.body.fingerprint !== ownFingerprint) {
    // The key was changed on the way: whatever the operator approves would not be this machine.
    deps.err(
      `fleetback-agent: the server reports fingerprint ${announced.body.fingerprint}, not ${ownFingerprint}`,
    );
    return EXIT.failure;
  }
  deps.out(`Announced ${deps.identity.hostname} to ${target.serverUrl}.`);
  deps.out("");
  deps.out(`    Compare this fingerprint on the server's enrol page: ${ownFingerprint}`);
  deps.out("");
  if (announced.body.hostname_collision) {
    deps.out(`Note: the server already has a host named ${deps.identity.hostname}; the operator is warned.`);
  }
  deps.out(`Waiting for approval (checking every ${deps.claimPollIntervalMs / 1000} s; Ctrl-C stops)...`);

  let lastProblem: string | undefined;
  for (;;) {
    await sleep(deps.timers, deps.claimPollIntervalMs);
    const timestamp = claimTimestamp(deps.clock.now());
    const signature = Buffer.from(sign(keys.secretKey, claimMessage(pendingId, timestamp))).toString(
      "base64",
    );
    const claim = await post(target, `/api/agents/announce/${encodeURIComponent(pendingId)}/claim`, {
      timestamp,
      signature,
    });
    let problem: string | undefined;
    if (claim instanceof Error) {
      problem = `server not reachable: ${claim.message}`;
    } else if (claim.status === 200) {
      if (!(await writeIssuedConfig(deps, paths, target, claim.body))) {
        return EXIT.failure;
      }
      await removeAnnounceKey(paths.stateDir);
      return EXIT.ok;
    } else if (claim.status === 403 || claim.status === 410) {
      const detail =
        errorMessageOf(claim.body) ?? (claim.status === 410 ? "the announcement expired" : "rejected");
      deps.err(`fleetback-agent: the server refused the claim (HTTP ${claim.status}): ${detail}`);
      return EXIT.refused;
    } else if (claim.status !== 202 && claim.status !== 404) {
      problem = `unexpected answer HTTP ${claim.status}: ${errorMessageOf(claim.body) ?? "no details"}`;
    }
    // Said once per change, not every five seconds.
    if (problem !== undefined && problem !== lastProblem) {
      deps.err(`fleetback-agent: ${problem}; still waiting`);
    }
    lastProblem = problem;
  }
}
