import { describe, expect, it } from "vitest";
import { applyExpirePolicy, type ForgetRules, type PolicySnapshot } from "./expire-policy.js";
import { type KeepPolicy, readKeepPolicy } from "./keep-policy.js";
import { instantOf, parseResticTime } from "./restic-time.js";

function snap(id: string, text: string): PolicySnapshot {
  const time = parseResticTime(text);
  if (time === undefined) {
    throw new Error(`unparsed ${text}`);
  }
  return { id, time };
}

function policyOf(keep: Parameters<typeof readKeepPolicy>[0]): KeepPolicy {
  const policy = readKeepPolicy(keep);
  if ("refused" in policy) {
    throw new Error(policy.refused);
  }
  return policy;
}

function apply(
  list: PolicySnapshot[],
  keep: Parameters<typeof readKeepPolicy>[0],
  { rules = "restic-0.18", now = "2030-01-01T00:00:00Z" }: { rules?: ForgetRules; now?: string } = {},
) {
  return applyExpirePolicy(list, policyOf(keep), instantOf(new Date(now)), rules);
}

const TWO_DAYS = [
  snap("b", "2024-01-01T08:00:00Z"),
  snap("d", "2024-01-02T09:00:00Z"),
  snap("a", "2024-01-01T10:00:00Z"),
  snap("c", "2024-01-02T12:00:00Z"),
];

describe("restic's forget rules", () => {
  it("walks newest first whatever the input order", () => {
    expect(apply(TWO_DAYS, { last: 2 })).toEqual({
      keep: [
        { id: "c", reasons: ["last snapshot"] },
        { id: "d", reasons: ["last snapshot"] },
      ],
      remove: ["a", "b"],
    });
  });

  it("keeps the newest snapshot of each day while counts are left", () => {
    expect(apply(TWO_DAYS, { daily: 2 })).toEqual({
      keep: [
        { id: "c", reasons: ["daily snapshot"] },
        { id: "a", reasons: ["daily snapshot"] },
      ],
      remove: ["d", "b"],
    });
  });

  it("keeps the oldest snapshot while counts are left since 0.16, and 0.18 says so", () => {
    expect(apply(TWO_DAYS, { daily: 3 }).keep.at(-1)).toEqual({
      id: "b",
      reasons: ["oldest daily snapshot"],
    });
    expect(apply(TWO_DAYS, { daily: 3 }, { rules: "restic-0.14" })).toEqual({
      keep: [
        { id: "c", reasons: ["daily snapshot"] },
        { id: "a", reasons: ["daily snapshot"] },
      ],
      remove: ["d", "b"],
    });
  });

  it("measures windows from the newest snapshot, not from now", () => {
    const list = [
      snap("new", "2024-01-10T00:00:00Z"),
      snap("mid", "2024-01-05T00:00:00Z"),
      snap("old", "2024-01-01T00:00:00Z"),
    ];
    expect(apply(list, { within: "7d" })).toEqual({
      keep: [
        { id: "new", reasons: ["within 7d"] },
        { id: "mid", reasons: ["within 7d"] },
      ],
      remove: ["old"],
    });
  });

  it("leaves the window open at its start", () => {
    const list = [snap("new", "2024-01-10T00:00:00Z"), snap("edge", "2024-01-03T00:00:00Z")];
    expect(apply(list, { within: "7d" }).remove).toEqual(["edge"]);
  });

  it("measures windows from the newest snapshot before now, and keeps all when every one is later", () => {
    const list = [
      snap("future", "2031-01-01T00:00:00Z"),
      snap("new", "2024-01-10T00:00:00Z"),
      snap("old", "2024-01-01T00:00:00Z"),
    ];
    expect(apply(list, { within: "7d" }).remove).toEqual(["old"]);
    expect(apply(list, { within: "7d" }, { now: "2000-01-01T00:00:00Z" }).remove).toEqual([]);
  });

  it("keeps the first snapshot of each bucket inside a windowed rule's window, without a count", () => {
    const list = [...TWO_DAYS, snap("e", "2023-12-25T12:00:00Z")];
    expect(apply(list, { within_daily: "2d" }, { rules: "restic-0.14" })).toEqual({
      keep: [
        { id: "c", reasons: ["daily within 2d"] },
        { id: "a", reasons: ["daily within 2d"] },
      ],
      remove: ["d", "b", "e"],
    });
  });

  it("gives reasons in restic's order: within, the counts, then the windowed rules", () => {
    const keep = { last: 1, daily: 1, within: "1d", within_daily: "1d" };
    expect(apply(TWO_DAYS, keep).keep[0]).toEqual({
      id: "c",
      reasons: ["within 1d", "last snapshot", "daily snapshot", "daily within 1d"],
    });
  });

  it("orders snapshots of the same instant by id", () => {
    const tied = [snap("b", "2024-01-01T00:00:00Z"), snap("a", "2024-01-01T05:30:00+05:30")];
    expect(apply(tied, { last: 1 }, { rules: "restic-0.14" })).toEqual({
      keep: [{ id: "a", reasons: ["last snapshot"] }],
      remove: ["b"],
    });
  });
});
