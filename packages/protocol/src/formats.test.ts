/**
 * @module formats.test
 * The string formats of the contract.
 */
import { describe, expect, it } from "vitest";
import { isResticDuration, isRestoreTarget, isUlid, RFC3339_UTC_PATTERN } from "./formats.js";

describe("string formats", () => {
  it.each(["30d", "1y6m", "2y5m7d3h", "12h", "0d"])("accepts duration %s", (value) => {
    expect(isResticDuration(value)).toBe(true);
  });

  it.each(["", "d", "30", "30x", "6m1y", "1.5d", " 30d", "30d "])("refuses duration %j", (value) => {
    expect(isResticDuration(value)).toBe(false);
  });

  it.each([
    "/",
    "/srv/restore",
    "$HOME",
    "$HOME/fleetback-restore/x/",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell variable form, not a template
    "${HOME}/r",
    "~/r",
    "C:\\restore",
    "D:/r",
  ])("accepts restore target %s", (value) => {
    expect(isRestoreTarget(value)).toBe(true);
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell variable form, not a template
  it.each(["", "relative", "~", "$HOMEX/r", "$USER/r", "/srv/$USER", "${HOME}x"])(
    "refuses restore target %j",
    (value) => {
      expect(isRestoreTarget(value)).toBe(false);
    },
  );

  it.each(["2026-11-21T23:41:14Z", "2026-11-21T23:41:14.4087913Z", "2016-12-31T23:59:60Z"])(
    "accepts timestamp %s",
    (value) => {
      expect(new RegExp(RFC3339_UTC_PATTERN).test(value)).toBe(true);
    },
  );

  it.each([
    "2026-11-21T23:41:14+01:00",
    "2026-11-21 23:41:14Z",
    "2026-13-01T00:00:00Z",
    "2026-11-21T23:41:14z",
    "",
  ])("refuses timestamp %j", (value) => {
    expect(new RegExp(RFC3339_UTC_PATTERN).test(value)).toBe(false);
  });

  it("checks ULIDs strictly: 26 upper-case Crockford characters, time within 48 bits", () => {
    expect(isUlid("01ARZ3NDEKTSV4RRFFQ69G5FAV")).toBe(true);
    expect(isUlid("01arz3ndektsv4rrffq69g5fav")).toBe(false);
    expect(isUlid("81ARZ3NDEKTSV4RRFFQ69G5FAV")).toBe(false);
    expect(isUlid("01ARZ3NDEKTSV4RRFFQ69G5FAI")).toBe(false);
    expect(isUlid("01ARZ3NDEKTSV4RRFFQ69G5FA")).toBe(false);
  });
});
