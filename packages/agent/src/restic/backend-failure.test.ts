import { describe, expect, it } from "vitest";
import { OUTAGE_0_14, OUTAGE_0_18 } from "../testing/outage-output.js";
import { networkCauseOf, readBackendLine } from "./backend-failure.js";

describe("readBackendLine", () => {
  it.each([
    ["0.18 upload cut", OUTAGE_0_18.cut, "connection cut"],
    ["0.18 refused", OUTAGE_0_18.refused, "connection refused"],
    ["0.18 opening", OUTAGE_0_18.openRefused, "connection refused"],
    ["0.18 lock removal", OUTAGE_0_18.lockRemoveRefused, "connection refused"],
    ["0.14 upload cut", OUTAGE_0_14.cut, "connection cut"],
    ["0.14 refused", OUTAGE_0_14.refused, "connection refused"],
    ["0.14 giving up", OUTAGE_0_14.gaveUp, "connection refused"],
    ["0.14 opening", OUTAGE_0_14.openRefused, "connection refused"],
  ])("reads restic's %s line as a failure to reach the repository", (_name, line, cause) => {
    expect(readBackendLine(line)).toEqual({ kind: "failure", cause });
  });

  it("reads 0.16+'s success after retries as the repository answering again", () => {
    expect(readBackendLine(OUTAGE_0_18.recovered)).toEqual({ kind: "recovered" });
  });

  it.each([
    ["a status line", OUTAGE_0_18.status],
    ["a cancel's exit", OUTAGE_0_18.cancelled],
    ["a lock message", OUTAGE_0_18.locked[0]],
    // The repository answered: refusing a delete, or missing a file, is not being unreachable.
    [
      "append-only storage",
      "Remove(<snapshot/1344c020a8>) failed: unexpected HTTP response (403): 403 Forbidden",
    ],
    [
      "a missing file",
      "Load(<data/1c45e58356>, 591, 4623948) returned error, retrying after 720.254544ms: <data/1c45e58356> does not exist",
    ],
  ])("leaves %s alone", (_name, line) => {
    expect(readBackendLine(line)).toBeUndefined();
  });

  it("names the other causes of a repository that does not answer", () => {
    expect(
      networkCauseOf('Head "https://backup.example/r/config": dial tcp: lookup backup.example: no such host'),
    ).toBe("no such host");
    expect(networkCauseOf("dial tcp 10.0.0.9:8000: i/o timeout")).toBe("no answer in time");
    expect(networkCauseOf("connect: no route to host")).toBe("no route to the host");
    expect(networkCauseOf("unexpected HTTP response (502): 502 Bad Gateway")).toBe(
      "HTTP 502 from the server",
    );
  });
});
