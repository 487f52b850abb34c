import { createScrubber } from "@fleetback/crypto";
import { describe, expect, it } from "vitest";
import {
  type ChannelSettings,
  channelTarget,
  checkChannelConfig,
  mergeChannelConfig,
  parseChannelConfig,
  publicConfig,
  secretValues,
} from "./channel-config.js";

const CANARY = "canary-SECRET-123";

describe("channel config", () => {
  const ntfy: ChannelSettings = {
    kind: "ntfy",
    config: { server_url: "https://ntfy.example", topic: CANARY, token: `tk_${CANARY}`, priority: 2 },
  };

  it("shows plain fields, says which secrets are set, and names only the target host", () => {
    expect(publicConfig(ntfy)).toEqual({
      config: { server_url: "https://ntfy.example", priority: 2 },
      secrets: { topic: true, token: true },
    });
    const slack = parseChannelConfig("slack", { url: `https://hooks.slack.com/services/T/B/${CANARY}` });
    expect(publicConfig(slack)).toEqual({ config: {}, secrets: { url: true } });
    expect(channelTarget(slack)).toBe("hooks.slack.com");
    const mail = parseChannelConfig("email", {
      host: "smtp.example.com",
      port: 587,
      security: "starttls",
      from: "a@example.com",
      to: ["b@example.com"],
    });
    expect(publicConfig(mail).secrets).toEqual({ password: false });
    expect(channelTarget(mail)).toBe("smtp.example.com:587");
  });

  it("merges an update over the stored config: left out keeps, null removes, the result is validated", () => {
    const merged = mergeChannelConfig(ntfy, { priority: null, server_url: "https://other.example" });
    expect(merged.config).toEqual({
      server_url: "https://other.example",
      topic: CANARY,
      token: `tk_${CANARY}`,
    });
    expect(() => mergeChannelConfig(ntfy, { topic: null })).toThrow(/^config\.topic: is required/);
    expect(() => mergeChannelConfig(ntfy, { extra: 1 })).toThrow(/^config\.extra: is not a known field/);
  });

  it("refuses URLs that fetch cannot send or that are not http(s), without echoing them", () => {
    for (const url of ["javascript:alert(1)", "not a url", `https://user:${CANARY}@example.com/hook`]) {
      const checked = checkChannelConfig("discord", { url });
      expect(checked.ok).toBe(false);
      expect(JSON.stringify(checked)).not.toContain(CANARY);
    }
  });

  it("lists every spelling of a secret URL an error could echo", () => {
    const settings = parseChannelConfig("webhook", {
      url: `https://example.com/hooks/${CANARY}?token=tok-${CANARY}`,
      secret: "0123456789abcdef",
    });
    const scrub = createScrubber(secretValues(settings));
    const echoed = `POST https://example.com/hooks/${CANARY}?token=tok-${CANARY} failed; path /hooks/${encodeURIComponent(CANARY)}; hmac 0123456789abcdef`;
    expect(scrub(echoed)).not.toMatch(/canary|0123456789abcdef/i);
  });
});
