import { describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { bearerToken } from "../hosts/agent-auth.js";
import { createInvalidFrameLimiter } from "./invalid-frame-limiter.js";
import { tooOldHelloVersion } from "./old-hello.js";

describe("bearerToken", () => {
  it("reads the token of a Bearer header and nothing else", () => {
    expect(bearerToken("Bearer fba_abc")).toBe("fba_abc");
    expect(bearerToken("bearer   fba_abc ")).toBe("fba_abc");
    expect(bearerToken("Basic dXNlcjpwdw==")).toBeUndefined();
    expect(bearerToken("Bearer")).toBeUndefined();
    expect(bearerToken("Bearer a b")).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

describe("tooOldHelloVersion", () => {
  it("finds an integer version below the minimum in a hello of any shape", () => {
    expect(tooOldHelloVersion('{"type":"hello","payload":{"protocol_version":0}}')).toBe(0);
    expect(
      tooOldHelloVersion(new TextEncoder().encode('{"type":"hello","payload":{"protocol_version":-3}}')),
    ).toBe(-3);
    expect(tooOldHelloVersion('{"type":"hello","payload":{"protocol_version":1}}')).toBeUndefined();
    expect(tooOldHelloVersion('{"type":"hello","payload":{"protocol_version":"0"}}')).toBeUndefined();
    expect(tooOldHelloVersion('{"type":"heartbeat","payload":{"protocol_version":0}}')).toBeUndefined();
    expect(tooOldHelloVersion("not json")).toBeUndefined();
  });
});

describe("invalid frame limiter", () => {
  it("trips at the twentieth invalid frame within a minute, not over a longer span", () => {
    const clock = createManualClock();
    const limiter = createInvalidFrameLimiter(clock);
    for (let i = 0; i < 19; i++) {
      expect(limiter.record()).toBe(false);
      clock.advance(3_000);
    }
    // The first of the nineteen is now 57 s old: the twentieth trips.
    expect(limiter.record()).toBe(true);

    const slow = createInvalidFrameLimiter(clock);
    for (let i = 0; i < 40; i++) {
      expect(slow.record()).toBe(false);
      clock.advance(3_200);
    }
  });
});
