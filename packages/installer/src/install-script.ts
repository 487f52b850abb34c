/**
 * @module install-script
 * The script the server serves at `/install/install.sh`. It is rendered per server and agent
 * version from `templates/install.sh.tmpl`: the server's URL, the bundle's version and SHA-256,
 * the agent paths and the systemd units of `renderAgentUnit()` are baked in, so the script installs
 * exactly the bundle it was rendered for, from the server it came from. Where the server also has
 * single-executable agents (Node SEA) of that version, their checksums are baked in too, and the
 * script installs the one for the host when it finds no suitable node (or is given `--sea`).
 */
import { readFileSync } from "node:fs";
import { shellLiteral } from "./shell-literal.js";
import {
  DEFAULT_AGENT_PATHS,
  renderAgentUnit,
  renderRestoreHelperUnit,
  renderRestoreSocketUnit,
} from "./systemd-unit.js";

export interface InstallScriptOptions {
  /** The server's public URL (`FLEETBACK_BASE_URL`), http or https; a trailing slash is dropped. */
  baseUrl: string;
  /** Version of the agent bundle the server serves at `/install/agent/{version}`. */
  agentVersion: string;
  /** Hex SHA-256 of that bundle; the script refuses a download that does not match. */
  bundleSha256: string;
  /**
   * Single-executable agents of the same version, served at `/install/agent/{version}/{os}-{arch}`.
   * Only `linux` ones are embedded (the script is for systemd hosts); none: a host without a
   * suitable node is refused, as before there were any.
   */
  seaArtefacts?: ReadonlyArray<InstallSeaArtefact>;
  /**
   * Base64 of the server's restore-order public key, pinned in the restore helper's unit; without
   * it the helper refuses every restore.
   */
  restoreOrderKey?: string;
}

/** A single-executable agent the script may install: `os`/`arch` as Node names them. */
export interface InstallSeaArtefact {
  os: string;
  arch: string;
  /** Hex SHA-256; the script refuses a download that does not match. */
  sha256: string;
}

/** Oldest Node.js major the agent runs on (the packages' `engines`). */
export const MIN_NODE_MAJOR = 20;

/** Stands in for the node path in the embedded unit; the script swaps in `command -v node`. */
const NODE_PATH_TOKEN = "@FLEETBACK_NODE@";
/** The installed single-executable agent: a link the script swaps to `agent-<version>`. */
const SEA_PATH = `${DEFAULT_AGENT_PATHS.bundleDir}/current`;
const UNIT_HEREDOC_END = "FLEETBACK_UNIT_EOF";
/** Scheme, host, port and path only: nothing a shell, a URL parser or systemd reads specially. */
const BASE_URL = /^https?:\/\/[A-Za-z0-9.~:/[\]_-]+$/;
const AGENT_VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
/** `process.platform` / `process.arch` words: linux, x64, arm64, ... */
const PLATFORM_WORD = /^[a-z0-9_]{1,32}$/;

function normaliseBaseUrl(raw: string): string {
  const baseUrl = raw.replace(/\/+$/, "");
  if (!BASE_URL.test(baseUrl) || !URL.canParse(baseUrl) || new URL(baseUrl).hostname === "") {
    throw new RangeError(
      "baseUrl must be an http(s) URL of scheme, host, optional port and path, without credentials, query, fragment or percent-escapes",
    );
  }
  return baseUrl;
}

function checkedValues(options: InstallScriptOptions) {
  const baseUrl = normaliseBaseUrl(options.baseUrl);
  if (!AGENT_VERSION.test(options.agentVersion)) {
    throw new RangeError(
      "agentVersion must be letters, digits and . + _ - (at most 64), starting alphanumeric",
    );
  }
  if (!SHA256_HEX.test(options.bundleSha256)) {
    throw new RangeError("bundleSha256 must be 64 hex digits");
  }
  return {
    baseUrl,
    agentVersion: options.agentVersion,
    bundleSha256: options.bundleSha256.toLowerCase(),
    seaEntries: linuxSeaEntries(options.seaArtefacts ?? []),
  };
}

/** `linux-<arch>=<sha256>` for each Linux SEA, the words of the script's SEA_ARTEFACTS array. */
function linuxSeaEntries(artefacts: ReadonlyArray<InstallSeaArtefact>): string[] {
  const entries = new Map<string, string>();
  for (const { os, arch, sha256 } of artefacts) {
    if (!PLATFORM_WORD.test(os) || !PLATFORM_WORD.test(arch)) {
      throw new RangeError("a SEA artefact's os and arch must be lowercase letters, digits and _");
    }
    if (!SHA256_HEX.test(sha256)) {
      throw new RangeError(`the SHA-256 of the ${os}-${arch} SEA must be 64 hex digits`);
    }
    if (entries.has(`${os}-${arch}`)) {
      throw new RangeError(`two SEA artefacts for ${os}-${arch}`);
    }
    entries.set(`${os}-${arch}`, sha256.toLowerCase());
  }
  return [...entries]
    .filter(([target]) => target.startsWith("linux-"))
    .map(([target, sha]) => `${target}=${sha}`);
}

function unitForScript(
  options: { execPath: string; bundle: string; serverUrl: string; restoreOrderKey?: string },
  render: (o: typeof DEFAULT_AGENT_PATHS & typeof options) => string = renderAgentUnit,
): string {
  const unit = render({ ...DEFAULT_AGENT_PATHS, ...options }).replace(/\n$/, "");
  if (unit.split("\n").includes(UNIT_HEREDOC_END)) {
    throw new RangeError("the agent unit would end the script's heredoc early");
  }
  return unit;
}

/** Renders the install script. Throws a RangeError when an option could not be embedded safely. */
export function renderInstallScript(options: InstallScriptOptions): string {
  const { baseUrl, agentVersion, bundleSha256, seaEntries } = checkedValues(options);
  const orderKey = options.restoreOrderKey === undefined ? {} : { restoreOrderKey: options.restoreOrderKey };
  const values: Record<string, string> = {
    BASE_URL: shellLiteral(baseUrl),
    AGENT_VERSION: shellLiteral(agentVersion),
    BUNDLE_SHA256: shellLiteral(bundleSha256),
    SEA_ARTEFACTS: seaEntries.map(shellLiteral).join(" "),
    NODE_MIN_MAJOR: String(MIN_NODE_MAJOR),
    NODE_TOKEN: shellLiteral(NODE_PATH_TOKEN),
    CONFIG_DIR: shellLiteral(DEFAULT_AGENT_PATHS.configDir),
    STATE_DIR: shellLiteral(DEFAULT_AGENT_PATHS.stateDir),
    RESTORE_DIR: shellLiteral(DEFAULT_AGENT_PATHS.restoreDir),
    BUNDLE_DIR: shellLiteral(DEFAULT_AGENT_PATHS.bundleDir),
    // Inside a heredoc with a quoted delimiter: no expansion, only the delimiter line is special.
    AGENT_UNIT: unitForScript({
      execPath: NODE_PATH_TOKEN,
      bundle: `${DEFAULT_AGENT_PATHS.bundleDir}/current.mjs`,
      serverUrl: baseUrl,
    }),
    SEA_UNIT: unitForScript({ execPath: SEA_PATH, bundle: "", serverUrl: baseUrl }),
    RESTORE_HELPER_UNIT: unitForScript(
      {
        execPath: NODE_PATH_TOKEN,
        bundle: `${DEFAULT_AGENT_PATHS.bundleDir}/current.mjs`,
        serverUrl: baseUrl,
        ...orderKey,
      },
      renderRestoreHelperUnit,
    ),
    SEA_RESTORE_HELPER_UNIT: unitForScript(
      { execPath: SEA_PATH, bundle: "", serverUrl: baseUrl, ...orderKey },
      renderRestoreHelperUnit,
    ),
    RESTORE_SOCKET_UNIT: unitForScript(
      { execPath: "", bundle: "", serverUrl: baseUrl },
      renderRestoreSocketUnit,
    ),
  };
  const template = readFileSync(new URL("../templates/install.sh.tmpl", import.meta.url), "utf8");
  return template.replace(/@@([A-Z0-9_]+)@@/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) {
      throw new Error(`install.sh.tmpl names an unknown value @@${name}@@`);
    }
    return value;
  });
}

/**
 * `token`: enrol with it; `announce`: ask to be approved; `rerun`: no option, for a host that is
 * enrolled already (the script keeps its config and brings the agent and unit up to date).
 */
export type InstallCommandOptions = { baseUrl: string } & (
  | { token: string }
  | { announce: true }
  | { rerun: true }
);

/** The one-liner an operator pastes on a host, as shown with a freshly minted enrolment token. */
export function renderInstallCommand(options: InstallCommandOptions): string {
  const url = shellLiteral(`${normaliseBaseUrl(options.baseUrl)}/install/install.sh`);
  if ("rerun" in options) {
    return `curl -fsSL ${url} | sudo bash`;
  }
  const args = "token" in options ? `--token ${shellLiteral(options.token)}` : "--announce";
  return `curl -fsSL ${url} | sudo bash -s -- ${args}`;
}
