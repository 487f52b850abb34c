/**
 * @module enrolment/mint-request
 * An operator's request for an enrolment token, checked the same way from the page and the JSON
 * API, and what both show of the minted token (once: the secrets are never stored readable). The
 * API's approve step names and checks its paths and schedule as a token's.
 */
import { acceptsUrlCredentials } from "@fleetback/crypto";
import { RequestError } from "../errors.js";
import { PACKAGED_AGENT_DIRS, refuseAgentDirPaths } from "../hosts/agent-dirs.js";
import { checkLabels } from "../labels/label-rules.js";
import type { ApprovedStart } from "./announce.js";
import { checkInitialSchedule, type InitialSchedule } from "./initial-schedule.js";
import type { MintInput, mintEnrolmentToken } from "./tokens.js";

export function checkMintInput(input: MintInput): MintInput {
  const repository = input.repository;
  if (repository?.username && !acceptsUrlCredentials(repository.url)) {
    throw new RequestError(
      "invalid",
      "repository.username: this repository kind takes no username in its URL (only rest: and s3: with http(s)://)",
    );
  }
  // They become the host's first source group before its agent could name its own directories.
  refuseAgentDirPaths("initial_paths", input.initialPaths ?? [], PACKAGED_AGENT_DIRS);
  return {
    ...input,
    initialSchedule: checkInitialSchedule(input.initialSchedule),
    labels: checkLabels(input.labels ?? {}, "labels"),
  };
}

/** The API approve step's choice, checked as a token's: the same paths rule, the same default. */
export function checkApproveInput(
  paths: string[],
  schedule: InitialSchedule | null | undefined,
): ApprovedStart {
  refuseAgentDirPaths("initial_paths", paths, PACKAGED_AGENT_DIRS);
  return { paths, schedule: checkInitialSchedule(schedule) };
}

export function mintJson(minted: Awaited<ReturnType<typeof mintEnrolmentToken>>) {
  return {
    token: minted.token,
    expires_at: minted.expiresAt,
    generated_password: minted.generatedPassword,
    generated_login_password: minted.generatedLoginPassword,
    htpasswd_snippet: minted.htpasswdSnippet,
    htpasswd_new_file_snippet: minted.htpasswdNewFileSnippet,
    install_command: minted.installCommand,
  };
}
