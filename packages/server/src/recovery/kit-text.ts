/**
 * @module recovery/kit-text
 * The recovery kit as one Markdown file a person can read on the day the server is lost: what to
 * install, then per host its restic `--host` names and, per repository, the values and a script
 * to save and run. Plain text on purpose: it prints, it survives any viewer, and nothing in it
 * needs Fleetback to be read.
 */
import { kitScriptName } from "./kit-script.js";
import type { KitHost, KitSlot, RecoveryKit } from "./recovery-kit.js";

/** A fence longer than any run of backticks in `text`, so a value cannot end the block early. */
function fenced(text: string, info = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${info}\n${text.endsWith("\n") ? text : `${text}\n`}${fence}`;
}

function inline(value: string): string {
  const flat = value.replace(/[\r\n]/g, " ");
  const longest = Math.max(0, ...[...flat.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = "`".repeat(longest + 1);
  // Padding only where CommonMark needs it: a value that starts or ends with a backtick.
  const pad = longest > 0 ? " " : "";
  return `${fence}${pad}${flat}${pad}${fence}`;
}

function slotText(host: KitHost, slot: KitSlot): string[] {
  if (slot.state === "unreadable") {
    return [
      `### ${slot.label}`,
      "",
      `Stored, but this server's key cannot open it (${slot.reason}). Take these credentials from where they were made.`,
      "",
    ];
  }
  const script = kitScriptName(host.name, slot.slot);
  const lines = [
    `### ${slot.label}`,
    "",
    "Repository URL:",
    "",
    fenced(slot.url),
    "",
    "Repository password (RESTIC_PASSWORD):",
    "",
    fenced(slot.password),
    "",
  ];
  if (slot.username) {
    lines.push("Repository server login user:", "", fenced(slot.username), "");
    lines.push(
      slot.login_password
        ? "Repository server login password (apart from the repository password):"
        : "Repository server login password: none of its own; the repository password is the login.",
      "",
    );
    if (slot.login_password) {
      lines.push(fenced(slot.login_password), "");
    }
    lines.push(
      "RESTIC_REPOSITORY, the login merged into the URL as the agent does it:",
      "",
      fenced(slot.restic_repository),
      "",
    );
  }
  lines.push(
    `Save this as \`${script}\`, then \`chmod 600 ${script}\`:`,
    "",
    fenced(slot.script, "sh"),
    "",
    `List the snapshots: \`sh ${script}\` (the same as \`sh ${script} snapshots\`).`,
    "",
    "Restore one file from the latest snapshot of this host into /tmp/restore:",
    "",
    fenced(
      `sh ${script} restore latest --host ${host.restic_host} --target /tmp/restore --include /path/to/the/file`,
      "sh",
    ),
    "",
  );
  return lines;
}

function hostText(host: KitHost): string[] {
  const lines = [
    `## Host ${host.name}`,
    "",
    `- Fleetback host id: ${host.id}`,
    `- restic \`--host\` of its backups: ${inline(host.restic_host)}`,
    `- Hostnames its snapshots may carry: ${host.snapshot_hostnames.map(inline).join(", ")}`,
    `- restic version on the host: ${host.restic_version ?? "not reported (restic missing or the agent never connected)"}`,
    "",
  ];
  if (host.repositories.length === 0) {
    lines.push(
      "No repository credentials are stored for this host: it has no backups Fleetback knows of.",
      "",
    );
  }
  for (const slot of host.repositories) {
    lines.push(...slotText(host, slot));
  }
  return lines;
}

export function kitText(kit: RecoveryKit): string {
  const versions = [...new Set(kit.hosts.map((host) => host.restic_version).filter((v) => v !== null))];
  const lines = [
    "# Fleetback recovery kit",
    "",
    `Made ${kit.generated_at} by ${kit.server_url}, for ${kit.scope === "fleet" ? "the whole fleet" : "one host"}.`,
    "",
    "THIS FILE HOLDS THE KEYS TO THE BACKUPS. Keep it offline or in a password manager, readable by you only.",
    "",
    "Everything here works without Fleetback: install restic (https://restic.net, the release your hosts run " +
      `or newer: ${versions.length > 0 ? versions.join(", ") : "none reported"}), save a host's script and run it ` +
      "with `sh`. The script sets RESTIC_REPOSITORY and RESTIC_PASSWORD for restic only and passes its arguments " +
      "on, so the password never appears on a command line. Set RESTIC=/path/to/restic if restic is not on PATH.",
    "",
  ];
  if (kit.hosts.length === 0) {
    lines.push("The fleet has no hosts.", "");
  }
  for (const host of kit.hosts) {
    lines.push(...hostText(host));
  }
  return lines.join("\n");
}

export function kitFileName(kit: RecoveryKit): string {
  const only = kit.scope === "host" ? kit.hosts[0] : undefined;
  const subject = only ? only.name.replace(/[^A-Za-z0-9._-]/g, "_") : "fleet";
  return `fleetback-recovery-kit-${subject}-${kit.generated_at.slice(0, 10)}.md`;
}
