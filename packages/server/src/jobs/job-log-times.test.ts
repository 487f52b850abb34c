/**
 * @module jobs/job-log-times.test
 * A log line's time: the agent's when JavaScript reads it, the arrival time otherwise.
 */
import { expect, it } from "vitest";
import { createLineTimes } from "./job-log-times.js";

it("reads the agent's time, reuses it for the same text, and takes now for one it cannot read", () => {
  const timeOf = createLineTimes(() => Date.parse("2026-11-21T12:00:05Z"));
  const first = timeOf("2026-11-21T12:00:00.123Z");
  expect(first.text).toBe("2026-11-21T12:00:00.123Z");
  expect(timeOf("2026-11-21T12:00:00.123Z")).toBe(first);
  expect(timeOf("2026-11-21T13:00:00+01:00").text).toBe("2026-11-21T12:00:00.000Z");
  // Second 60 passes the protocol's pattern; JavaScript cannot read it.
  const leap = timeOf("2026-12-31T23:59:60Z");
  expect(leap.text).toBe("2026-11-21T12:00:05.000Z");
  expect(timeOf("2026-12-31T23:59:60Z").ts.getTime()).toBe(Date.parse("2026-11-21T12:00:05Z"));
});
