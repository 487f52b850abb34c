/**
 * @module install-script
 * The script the server serves at `/install/install.sh`. It is rendered per server and agent
 * version from `templates/install.sh.tmpl`: the server's URL, the bundle's version and SHA-256,
 * the agent paths and the systemd unit of `renderAgentUnit()` are baked in, so the script installs
 * exactly the bundle it was rendered for, from the server it came from.
 */
import { readFileSync } from "node:fs";
import { shellLiteral } from "./shell-literal.js";
import { DEFAULT_AGENT_PATHS, renderAgentUnit } from "./systemd-unit.js";

export interface InstallScriptOptions {
  /** The server's public URL (`FLEETBACK_BASE_URL`), http or https; a trailing slash is dropped. */
  baseUrl: string;
  /** Version of the agent bundle the server serves at `/install/agent/{version}`. */
  agentVersion: string;
  /** Hex SHA-256 of that bundle; the script refuses a download that does not match. */
  bundleSha256: string;
}

/** Oldest Node.js major the agent runs on (the packages' `engines`). */
export const MIN_NODE_MAJOR = 20;

/** Stands in for the node path in the embedded unit; the script swaps in `command -v node`. */
const NODE_PATH_TOKEN = "@FLEETBACK_NODE@";
const UNIT_HEREDOC_END = "FLEETBACK_UNIT_EOF";
/** Scheme, host, port and path only: nothing a shell, a URL parser or systemd reads specially. */
const BASE_URL = /^https?:\/\/[A-Za-z0-9.~:/[\]_-]+$/;
const AGENT_VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

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
  return { baseUrl, agentVersion: options.agentVersion, bundleSha256: options.bundleSha256.toLowerCase() };
}

/** Renders the install script. Throws a RangeError when an option could not be embedded safely. */
export function renderInstallScript(options: InstallScriptOptions): string {
  const { baseUrl, agentVersion, bundleSha256 } = checkedValues(options);
  const unit = renderAgentUnit({
    execPath: NODE_PATH_TOKEN,
    bundle: `${DEFAULT_AGENT_PATHS.bundleDir}/current.mjs`,
    configDir: DEFAULT_AGENT_PATHS.configDir,
    stateDir: DEFAULT_AGENT_PATHS.stateDir,
    restoreDir: DEFAULT_AGENT_PATHS.restoreDir,
    serverUrl: baseUrl,
  }).replace(/\n$/, "");
  if (unit.split("\n").includes(UNIT_HEREDOC_END)) {
    throw new RangeError("the agent unit would end the script's heredoc early");
  }
  const values: Record<string, string> = {
    BASE_URL: shellLiteral(baseUrl),
    AGENT_VERSION: shellLiteral(agentVersion),
    BUNDLE_SHA256: shellLiteral(bundleSha256),
    NODE_MIN_MAJOR: String(MIN_NODE_MAJOR),
    NODE_TOKEN: shellLiteral(NODE_PATH_TOKEN),
    CONFIG_DIR: shellLiteral(DEFAULT_AGENT_PATHS.configDir),
    STATE_DIR: shellLiteral(DEFAULT_AGENT_PATHS.stateDir),
    RESTORE_DIR: shellLiteral(DEFAULT_AGENT_PATHS.restoreDir),
    BUNDLE_DIR: shellLiteral(DEFAULT_AGENT_PATHS.bundleDir),
    // Inside a heredoc with a quoted delimiter: no expansion, only the delimiter line is special.
    AGENT_UNIT: unit,
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

export type InstallCommandOptions = { baseUrl: string } & ({ token: string } | { announce: true });

/** The one-liner an operator pastes on a host, as shown with a freshly minted enrolment token. */
export function renderInstallCommand(options: InstallCommandOptions): string {
  const url = shellLiteral(`${normaliseBaseUrl(options.baseUrl)}/install/install.sh`);
  const args = "token" in options ? `--token ${shellLiteral(options.token)}` : "--announce";
  return `curl -fsSL ${url} | sudo bash -s -- ${args}`;
}
