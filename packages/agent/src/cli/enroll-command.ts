/**
 * @module cli/enroll-command
 * `fleetback-agent enroll --server URL --token TOKEN`: trades a one-time enrolment token for the
 * host's id and long-lived agent token, and writes them to the config file. The token may come
 * from FLEETBACK_ENROLL_TOKEN instead, so an installer can keep it out of the process list.
 */
import type { AgentPaths } from "../config/paths.js";
import { errorMessageOf, requestJson } from "../net/json-request.js";
import { endpointUrl } from "../net/server-url.js";
import type { Flags } from "./argv.js";
import type { CliDeps } from "./cli-deps.js";
import { checkServerTarget, detectToolVersion, labelsOfFlags, writeIssuedConfig } from "./common.js";
import { EXIT, type ExitCode } from "./exit-codes.js";

export async function enrollCommand(deps: CliDeps, flags: Flags, paths: AgentPaths): Promise<ExitCode> {
  const target = checkServerTarget(flags.server ?? "", flags.tlsPin);
  if (!target.ok) {
    deps.err(`fleetback-agent: ${target.message}`);
    return EXIT.usage;
  }
  const token = flags.token ?? deps.env.FLEETBACK_ENROLL_TOKEN;
  if (!token) {
    deps.err("fleetback-agent: enroll needs --token TOKEN (or FLEETBACK_ENROLL_TOKEN in the environment)");
    return EXIT.usage;
  }
  const labels = labelsOfFlags(flags.labels);
  if (!labels.ok) {
    deps.err(`fleetback-agent: ${labels.message}`);
    return EXIT.usage;
  }
  const toolVersion = await detectToolVersion(deps, paths);
  if (toolVersion === "") {
    deps.err(`fleetback-agent: warning: restic not found (${paths.restic}); enrolling anyway`);
  }
  const response = await requestJson({
    method: "POST",
    url: endpointUrl(target.value.serverUrl, "/api/agents/enroll"),
    tlsPin: target.value.tlsPin,
    body: {
      token,
      ...deps.identity,
      agent_version: deps.agentVersion,
      tool_version: toolVersion,
      // Only when given: a server from before labels refuses a field it does not know.
      ...(Object.keys(labels.value).length > 0 ? { labels: labels.value } : {}),
    },
  }).catch((cause: unknown) => (cause instanceof Error ? cause : new Error(String(cause))));
  if (response instanceof Error) {
    deps.err(`fleetback-agent: enrolment failed: ${response.message}`);
    return EXIT.failure;
  }
  if (response.status !== 200 && response.status !== 201) {
    const detail = errorMessageOf(response.body) ?? "no details";
    deps.err(`fleetback-agent: the server refused the enrolment (HTTP ${response.status}): ${detail}`);
    return response.status >= 400 && response.status < 500 ? EXIT.refused : EXIT.failure;
  }
  return (await writeIssuedConfig(deps, paths, target.value, response.body)) ? EXIT.ok : EXIT.failure;
}
