import { describe, expect, it } from "vitest";
import { loadConfig, parseDuration } from "./config.js";

const base = { FLEETBACK_DATA_DIR: "/nonexistent" };

describe("fleet health and maintenance intervals", () => {
  it("defaults to an agent_offline alert after 1 h, an evaluation and a maintenance look every 60 s", () => {
    const loaded = loadConfig(base);
    expect(loaded.ok && loaded.config).toMatchObject({
      agentOfflineAlertAfterMs: 3_600_000,
      healthIntervalMs: 60_000,
      maintenanceIntervalMs: 60_000,
    });
  });

  it("reads durations and off", () => {
    const loaded = loadConfig({
      ...base,
      FLEETBACK_AGENT_OFFLINE_ALERT_AFTER: "off",
      FLEETBACK_HEALTH_INTERVAL: "15s",
      FLEETBACK_MAINTENANCE_INTERVAL: "1s",
    });
    expect(loaded.ok && loaded.config).toMatchObject({
      agentOfflineAlertAfterMs: null,
      healthIntervalMs: 15_000,
      maintenanceIntervalMs: 1_000,
    });
    expect(parseDuration("90m", { minMs: 60_000, maxMs: 86_400_000 })).toBe(5_400_000);
    expect(parseDuration(" 2D ", { minMs: 60_000, maxMs: 30 * 86_400_000 })).toBe(172_800_000);
  });

  it("names each bad value and its variable", () => {
    const loaded = loadConfig({
      ...base,
      FLEETBACK_AGENT_OFFLINE_ALERT_AFTER: "9s",
      FLEETBACK_HEALTH_INTERVAL: "off",
      FLEETBACK_MAINTENANCE_INTERVAL: "2h",
    });
    expect(loaded.ok).toBe(false);
    expect(!loaded.ok && loaded.errors).toEqual([
      'FLEETBACK_AGENT_OFFLINE_ALERT_AFTER: "9s" is not off or a duration from 10s to 30d (examples: 90s, 30m, 1h, 2d)',
      'FLEETBACK_HEALTH_INTERVAL: "off" is not a duration from 5s to 1h (examples: 90s, 30m, 1h, 2d)',
      'FLEETBACK_MAINTENANCE_INTERVAL: "2h" is not a duration from 1s to 1h (examples: 90s, 30m, 1h, 2d)',
    ]);
  });
});
