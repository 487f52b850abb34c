import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { renderInstallCommand, renderInstallScript } from "./install-script.js";
import { DEFAULT_AGENT_PATHS, renderAgentUnit } from "./systemd-unit.js";
import { findOnPath } from "./testing/install-sandbox.js";

const SHA = "c0ffee".padEnd(64, "0");
const options = { baseUrl: "https://backup.example.org", agentVersion: "1.2.3", bundleSha256: SHA };
const script = renderInstallScript(options);
const SEA_X64 = "a1".repeat(32);
const SEA_ARM64 = "b2".repeat(32);
const withSea = renderInstallScript({
  ...options,
  seaArtefacts: [
    { os: "linux", arch: "x64", sha256: SEA_X64.toUpperCase() },
    { os: "win32", arch: "x64", sha256: "c3".repeat(32) },
    { os: "linux", arch: "arm64", sha256: SEA_ARM64 },
  ],
});

describe("renderInstallScript", () => {
  it("embeds server, version and checksum as single-quoted shell words", () => {
    expect(script).toContain("FLEETBACK_BASE_URL='https://backup.example.org'\n");
    expect(script).toContain("readonly AGENT_VERSION='1.2.3'\n");
    expect(script).toContain(`readonly BUNDLE_SHA256='${SHA}'\n`);
    expect(script).toContain("readonly CONFIG_DIR='/etc/fleetback-agent'\n");
    expect(script).not.toMatch(/@@[A-Z0-9_]+@@/);
  });

  it("opens with a bash guard that sh can parse", () => {
    const lines = script.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
    // biome-ignore-start lint/suspicious/noTemplateCurlyInString: shell text, not JS templates
    expect(lines.slice(0, 5)).toEqual([
      "FLEETBACK_BASE_URL='https://backup.example.org'",
      'if [ -z "${BASH_VERSION:-}" ]; then',
      '  echo "install.sh needs bash, not sh: curl -fsSL ${FLEETBACK_BASE_URL}/install/install.sh | sudo bash -s -- --token TOKEN" >&2',
      "  exit 1",
      "fi",
    ]);
    // biome-ignore-end lint/suspicious/noTemplateCurlyInString: shell text, not JS templates
    expect(lines[6]).toBe("set -euo pipefail");
  });

  /** The agent unit at the default paths for `options`' server. */
  const unitOf = (execPath: string, bundle: string) =>
    renderAgentUnit({ ...DEFAULT_AGENT_PATHS, execPath, bundle, serverUrl: options.baseUrl });

  it("embeds the unit of renderAgentUnit, with a placeholder for the node path", () => {
    const unit = unitOf("@FLEETBACK_NODE@", "/opt/fleetback-agent/current.mjs");
    expect(script).toContain(`cat <<'FLEETBACK_UNIT_EOF'\n${unit}FLEETBACK_UNIT_EOF\n`);
  });

  it("embeds the unit of the single-executable agent, run from its current link", () => {
    const unit = unitOf("/opt/fleetback-agent/current", "");
    expect(script).toContain(
      `sea_unit_template() {\n  cat <<'FLEETBACK_UNIT_EOF'\n${unit}FLEETBACK_UNIT_EOF\n`,
    );
  });

  it("embeds no single-executable agent unless given", () => {
    expect(script).toContain("readonly SEA_ARTEFACTS=()\n");
  });

  it("embeds the Linux single-executable agents' checksums, lower-cased, and no others", () => {
    expect(withSea).toContain(`readonly SEA_ARTEFACTS=('linux-x64=${SEA_X64}' 'linux-arm64=${SEA_ARM64}')\n`);
    expect(withSea).not.toContain("c3c3");
  });

  it.each([
    [{ os: "linux", arch: "x64", sha256: "abc" }, "64 hex digits"],
    [{ os: "linux", arch: "x64'; id; '", sha256: SEA_X64 }, "lowercase letters"],
    [{ os: "Linux", arch: "x64", sha256: SEA_X64 }, "lowercase letters"],
    [{ os: "", arch: "x64", sha256: SEA_X64 }, "lowercase letters"],
  ])("refuses the SEA artefact %j", (artefact, message) => {
    expect(() => renderInstallScript({ ...options, seaArtefacts: [artefact] })).toThrow(message);
  });

  it("refuses two SEA artefacts for one platform", () => {
    const twice = [
      { os: "linux", arch: "x64", sha256: SEA_X64 },
      { os: "linux", arch: "x64", sha256: SEA_ARM64 },
    ];
    expect(() => renderInstallScript({ ...options, seaArtefacts: twice })).toThrow("two SEA artefacts");
  });

  it("drops a trailing slash of the base URL and lower-cases the checksum", () => {
    const rendered = renderInstallScript({
      ...options,
      baseUrl: "http://[::1]:8080/fleet/",
      bundleSha256: SHA.toUpperCase(),
    });
    expect(rendered).toContain("FLEETBACK_BASE_URL='http://[::1]:8080/fleet'\n");
    expect(rendered).toContain(`readonly BUNDLE_SHA256='${SHA}'\n`);
  });

  it.each([
    ["without", script],
    ["with", withSea],
  ])("is valid bash %s SEA artefacts", (_with, rendered) => {
    const check = spawnSync("bash", ["-n"], { input: rendered, encoding: "utf8" });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  });

  const shellcheck = findOnPath("shellcheck");
  const why = shellcheck ? "" : " (skipped: shellcheck not installed; Debian package shellcheck)";
  it.skipIf(!shellcheck).each([
    ["without", script],
    ["with", withSea],
  ])(`passes shellcheck %s SEA artefacts${why}`, (_with, rendered) => {
    const check = spawnSync(shellcheck ?? "", ["-s", "bash", "-"], { input: rendered, encoding: "utf8" });
    expect(check.stdout).toBe("");
    expect(check.status).toBe(0);
  });

  it.each([
    "https://x.example/'; touch /tmp/pwned; '",
    "https://x.example/$(id)",
    "https://x.example/`id`",
    "https://x.example/\nrm -rf /",
    "https://x.example/ space",
    'https://x.example/"',
    "https://x.example/a\\b",
    "https://user:pass@x.example",
    "https://x.example/?q=1",
    "https://x.example/#frag",
    "https://x.example/%0a",
    "ftp://x.example",
    "javascript:alert(1)",
    "https://",
    "",
  ])("refuses the base URL %j", (baseUrl) => {
    expect(() => renderInstallScript({ ...options, baseUrl })).toThrow(RangeError);
  });

  it.each(["", "1.0/../../x", "1 0", "$(id)", "1'2", "-1", "1\n2", "v".repeat(65)])(
    "refuses the agent version %j",
    (agentVersion) => {
      expect(() => renderInstallScript({ ...options, agentVersion })).toThrow(RangeError);
    },
  );

  it.each(["", "abc", SHA.slice(1), `${SHA}0`, `${SHA.slice(1)}g`, `${SHA.slice(1)}\n`])(
    "refuses the checksum %j",
    (bundleSha256) => {
      expect(() => renderInstallScript({ ...options, bundleSha256 })).toThrow(RangeError);
    },
  );
});

describe("renderInstallCommand", () => {
  it("pipes the server's script to bash with a quoted token", () => {
    expect(renderInstallCommand({ baseUrl: "https://backup.example.org/", token: "abc-123" })).toBe(
      "curl -fsSL 'https://backup.example.org/install/install.sh' | sudo bash -s -- --token 'abc-123'",
    );
  });

  it("announces when there is no token", () => {
    expect(renderInstallCommand({ baseUrl: "http://10.0.0.1:8080", announce: true })).toBe(
      "curl -fsSL 'http://10.0.0.1:8080/install/install.sh' | sudo bash -s -- --announce",
    );
  });

  it("re-runs with no option for a host that is enrolled already", () => {
    expect(renderInstallCommand({ baseUrl: "https://backup.example.org/", rerun: true })).toBe(
      "curl -fsSL 'https://backup.example.org/install/install.sh' | sudo bash",
    );
  });

  it("quotes a hostile token into one harmless word", () => {
    const token = "x'; touch /tmp/pwned; echo '";
    const command = renderInstallCommand({ baseUrl: "https://b.example", token });
    const words = command.slice(command.indexOf("--token"));
    const echoed = spawnSync("bash", ["-c", `printf '%s\\0' ${words}`], { encoding: "utf8" });
    expect(echoed.stdout).toBe(`--token\0${token}\0`);
  });
});
