import { mkdtemp, readdir, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadAgentConfig, saveAgentConfig } from "./agent-config.js";
import { resolveAgentPaths } from "./paths.js";

const tempDir = () => mkdtemp(join(tmpdir(), "fleetback-config-"));

describe("agent config", () => {
  it("round-trips through an atomic 0600 write that leaves no temporary file", async () => {
    const dir = join(await tempDir(), "etc");
    const config = {
      server_url: "https://s.example",
      host_id: "01H",
      agent_token: "fa_x",
      tls_pin_sha256: "ab".repeat(32),
    };
    await saveAgentConfig(dir, config);
    await saveAgentConfig(dir, { ...config, host_id: "01I" });
    expect(await loadAgentConfig(dir)).toMatchObject({ ok: true, config: { ...config, host_id: "01I" } });
    expect(await readdir(dir)).toEqual(["agent.json"]);
    expect((await stat(join(dir, "agent.json"))).mode & 0o777).toBe(0o600);
  });

  it("normalises a hand-written pin and refuses a pin with an http URL", async () => {
    const dir = await tempDir();
    const pin = "AB:".repeat(31).concat("AB");
    await writeFile(
      join(dir, "agent.json"),
      JSON.stringify({ server_url: "https://s", host_id: "h", agent_token: "t", tls_pin_sha256: pin }),
    );
    expect(await loadAgentConfig(dir)).toMatchObject({
      ok: true,
      config: { tls_pin_sha256: "ab".repeat(32) },
    });
    await writeFile(
      join(dir, "agent.json"),
      JSON.stringify({ server_url: "http://s", host_id: "h", agent_token: "t", tls_pin_sha256: pin }),
    );
    expect(await loadAgentConfig(dir)).toMatchObject({ ok: false, reason: "invalid" });
  });

  it.each([
    "{",
    "[]",
    '{"server_url":"https://s","host_id":"h"}',
    '{"server_url":"ftp://s","host_id":"h","agent_token":"t"}',
  ])("refuses %s", async (text) => {
    const dir = await tempDir();
    await writeFile(join(dir, "agent.json"), text);
    expect(await loadAgentConfig(dir)).toMatchObject({ ok: false, reason: "invalid" });
  });

  it("says missing when there is no file", async () => {
    expect(await loadAgentConfig(await tempDir())).toMatchObject({ ok: false, reason: "missing" });
  });
});

describe("resolveAgentPaths", () => {
  it("prefers flags, then environment, then defaults", () => {
    expect(resolveAgentPaths({}, {})).toEqual({
      configDir: "/etc/fleetback-agent",
      stateDir: "/var/lib/fleetback-agent",
      restic: "restic",
    });
    const env = {
      FLEETBACK_AGENT_CONFIG_DIR: "/e/c",
      FLEETBACK_AGENT_STATE_DIR: "/e/s",
      FLEETBACK_RESTIC: "/opt/restic",
    };
    expect(resolveAgentPaths({}, env)).toEqual({
      configDir: "/e/c",
      stateDir: "/e/s",
      restic: "/opt/restic",
    });
    expect(resolveAgentPaths({ configDir: "/f/c", stateDir: "/f/s" }, env)).toMatchObject({
      configDir: "/f/c",
      stateDir: "/f/s",
    });
  });
});
