/** Every string of hello is bounded since protocol 5: one unit over a bound is invalid_message. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decodeAgentMessage } from "./codec.js";
import {
  AGENT_DIR_MAX_LENGTH,
  AGENT_DIRS_MAX,
  HOSTNAME_MAX_LENGTH,
  PLATFORM_NAME_MAX_LENGTH,
  VERSION_MAX_LENGTH,
} from "./constants.js";

const longest = JSON.parse(
  readFileSync(new URL("../fixtures/agent-to-server/hello.longest.json", import.meta.url), "utf8"),
) as { payload: Record<string, unknown> };

const BOUNDS = {
  hostname: HOSTNAME_MAX_LENGTH,
  agent_version: VERSION_MAX_LENGTH,
  tool_version: VERSION_MAX_LENGTH,
  os: PLATFORM_NAME_MAX_LENGTH,
  arch: PLATFORM_NAME_MAX_LENGTH,
} as const;

describe("hello string bounds", () => {
  it("accepts every string at its bound (the hello.longest fixture)", () => {
    for (const [field, max] of Object.entries(BOUNDS)) {
      expect(String(longest.payload[field]).length, field).toBe(max);
    }
    expect(decodeAgentMessage(JSON.stringify(longest)).ok).toBe(true);
  });

  it.each(Object.entries(BOUNDS))("refuses a %s one unit longer, naming the field", (field, max) => {
    const frame = { ...longest, payload: { ...longest.payload, [field]: "a".repeat(max + 1) } };
    const result = decodeAgentMessage(JSON.stringify(frame));
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.error.message).toContain(`payload/${field}`);
  });

  it("refuses a 900 KB hostname from an agent of an old protocol version too", () => {
    const frame = {
      ...longest,
      payload: { ...longest.payload, protocol_version: 1, hostname: "h".repeat(900_000) },
    };
    expect(decodeAgentMessage(JSON.stringify(frame)).ok).toBe(false);
  });
});

describe("hello.agent_dirs bounds (protocol 12)", () => {
  const withDirs = (agent_dirs: unknown) =>
    JSON.stringify({ ...longest, payload: { ...longest.payload, protocol_version: 12, agent_dirs } });

  it("accepts AGENT_DIRS_MAX absolute paths of AGENT_DIR_MAX_LENGTH", () => {
    const longestPath = `/${"d".repeat(AGENT_DIR_MAX_LENGTH - 1)}`;
    expect(decodeAgentMessage(withDirs(Array(AGENT_DIRS_MAX).fill(longestPath))).ok).toBe(true);
  });

  it.each([
    ["one entry too many", Array(AGENT_DIRS_MAX + 1).fill("/etc/fleetback-agent")],
    ["an entry one unit too long", [`/${"d".repeat(AGENT_DIR_MAX_LENGTH)}`]],
    ["a relative path", ["etc/fleetback-agent"]],
  ])("refuses %s, naming the field", (_name, dirs) => {
    const result = decodeAgentMessage(withDirs(dirs));
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.error.message).toContain("payload/agent_dirs");
  });
});
