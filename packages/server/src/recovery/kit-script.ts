/**
 * @module recovery/kit-script
 * The few lines of POSIX sh in the recovery kit that open one repository with the real restic.
 * The repository password goes to restic as RESTIC_PASSWORD, set inside the script and exported:
 * never on a command line (where `ps` shows it to every user), and byte for byte the way the agent
 * hands it over. A password file would be trimmed of surrounding white space by restic and left
 * on disk if the script is interrupted. The script's arguments go to restic, `snapshots` when
 * there are none, so one script serves listing, restoring and checking.
 */
import { mergeUrlCredentials } from "@fleetback/crypto";
import type { CredentialSlot, Repository } from "../hosts/credentials.js";

/** The repository string restic is given, the login merged in as the agent's restic.ts does. */
export function resticUrl(repository: Repository): string {
  if (!repository.username) {
    return repository.url;
  }
  try {
    return mergeUrlCredentials(
      repository.url,
      repository.username,
      repository.login_password ?? repository.password,
    );
  } catch {
    // Not well-formed Unicode: the agent cannot use it either; the kit shows the fields apart.
    return repository.url;
  }
}

/** Single quotes keep every byte literal in sh; a quote itself is closed, escaped and reopened. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

export interface KitScriptInput {
  hostName: string;
  slot: CredentialSlot;
  repository: string;
  password: string;
}

export function kitScriptName(hostName: string, slot: CredentialSlot): string {
  const safe = hostName.replace(/[^A-Za-z0-9._-]/g, "_");
  return `restic-${safe}-${slot}.sh`;
}

export function kitScript(input: KitScriptInput): string {
  return [
    "#!/bin/sh",
    `# ${input.hostName.replace(/[\r\n]/g, " ")}: ${input.slot} slot. Holds the repository password: keep it private (chmod 600).`,
    `# Usage: sh ${kitScriptName(input.hostName, input.slot)} [restic arguments]   (default: snapshots)`,
    "set -eu",
    `RESTIC_REPOSITORY=${shellQuote(input.repository)}`,
    `RESTIC_PASSWORD=${shellQuote(input.password)}`,
    "export RESTIC_REPOSITORY RESTIC_PASSWORD",
    'if [ "$#" -eq 0 ]; then set -- snapshots; fi',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell default, not a template
    'exec "${RESTIC:-restic}" "$@"',
    "",
  ].join("\n");
}
