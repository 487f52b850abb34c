import type { ForgetGroup, Keep } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import {
  type GroupPlan,
  planRetention,
  type RetentionInput,
  type RetentionSnapshot,
} from "./plan-retention.js";

const NOW = new Date("2024-03-31T12:00:00Z");
const HOUR = 3_600_000;

function snap(
  id: string,
  time: string,
  fields: { tags?: string[]; hostname?: string; firstSeenAt?: Date | null } = {},
): RetentionSnapshot {
  return {
    id,
    time,
    hostname: fields.hostname ?? "web-1",
    tags: fields.tags ?? ["g"],
    firstSeenAt: fields.firstSeenAt ?? null,
  };
}

function plan(snapshots: RetentionSnapshot[], groups: ForgetGroup[], extra: Partial<RetentionInput> = {}) {
  const result = planRetention({ snapshots, groups, now: NOW, ...extra });
  if (!result.ok) {
    throw new Error(result.error);
  }
  return result;
}

/** Sorted: the plan lists restic's groups (hostname, tag set) one after the other. */
function ids(group: GroupPlan | undefined) {
  const sorted = (list: { id: string }[] | undefined) => list?.map(({ id }) => id).sort();
  return { keep: sorted(group?.keep), remove: sorted(group?.remove), suspect: sorted(group?.suspect) };
}

describe("planning a host's retention", () => {
  it("plans each hostname and whole tag set apart, among the snapshots carrying the group's tag", () => {
    const snapshots = [
      snap("g-new", "2024-03-30T00:00:00Z"),
      snap("g-old", "2024-03-29T00:00:00Z"),
      snap("manual-new", "2024-03-28T00:00:00Z", { tags: ["manual", "g"] }),
      snap("manual-old", "2024-03-27T00:00:00Z", { tags: ["g", "manual"] }),
      snap("alias-old", "2024-03-26T00:00:00Z", { hostname: "web-1.lan" }),
      snap("other", "2024-03-31T00:00:00Z", { tags: ["other"] }),
    ];
    const result = plan(snapshots, [{ tag: "g", keep: { last: 1 } }]);
    expect(ids(result.groups[0])).toEqual({
      keep: ["alias-old", "g-new", "manual-new"],
      remove: ["g-old", "manual-old"],
      suspect: [],
    });
    expect(result.removeIds.sort()).toEqual(["g-old", "manual-old"]);
  });

  it("reproduces restic 0.14's rules when asked", () => {
    const snapshots = [snap("new", "2024-03-30T10:00:00Z"), snap("old", "2024-03-30T08:00:00Z")];
    const groups = [{ tag: "g", keep: { daily: 2 } }];
    expect(plan(snapshots, groups).removeIds).toEqual([]);
    expect(plan(snapshots, groups, { rules: "restic-0.14" }).removeIds).toEqual(["old"]);
  });

  it("leaves a snapshot to the group whose policy keeps it", () => {
    const snapshots = [
      snap("both-new", "2024-03-30T00:00:00Z", { tags: ["a", "b"] }),
      snap("both-old", "2024-03-20T00:00:00Z", { tags: ["b", "a"] }),
      snap("a-old", "2024-03-10T00:00:00Z", { tags: ["a"] }),
    ];
    const result = plan(snapshots, [
      { tag: "a", keep: { within: "1d" } },
      { tag: "b", keep: { within: "30d" } },
    ]);
    expect(ids(result.groups[0])).toEqual({ keep: ["a-old", "both-new"], remove: ["both-old"], suspect: [] });
    expect(ids(result.groups[1])).toEqual({ keep: ["both-new", "both-old"], remove: [], suspect: [] });
    expect(result.removeIds).toEqual([]);
  });
});

describe("suspect snapshots", () => {
  const seen = new Date("2024-03-20T00:00:00Z");
  const honest = [
    snap("h3", "2024-03-19T00:00:00Z", { firstSeenAt: seen }),
    snap("h2", "2024-03-18T00:00:00Z", { firstSeenAt: new Date("2024-03-18T06:00:00Z") }),
    snap("h1", "2024-03-17T00:00:00Z", { firstSeenAt: new Date("2024-03-17T06:00:00Z") }),
  ];

  it("lists a future-dated snapshot, keeps it, and plans the rest as if it were not there", () => {
    const forged = snap("forged", "2024-03-30T00:00:00Z", { firstSeenAt: seen });
    const result = plan([forged, ...honest], [{ tag: "g", keep: { last: 1 } }]);
    expect(ids(result.groups[0])).toEqual({ keep: ["h3"], remove: ["h1", "h2"], suspect: ["forged"] });
    expect(result.groups[0]?.suspect[0]).toEqual({
      id: "forged",
      claimed: "2024-03-30T00:00:00Z",
      firstSeen: seen,
    });
    expect(result.removeIds).toEqual(["h2", "h1"]);
  });

  it("never lets a back-dated snapshot take a count, nor removes it", () => {
    const backdated = snap("backdated", "2023-06-01T00:00:00Z", { firstSeenAt: seen });
    const older = snap("y2022", "2022-06-01T00:00:00Z");
    const result = plan([backdated, older, ...honest], [{ tag: "g", keep: { yearly: 2 } }]);
    expect(ids(result.groups[0])).toEqual({
      keep: ["h3", "y2022"],
      remove: ["h1", "h2"],
      suspect: ["backdated"],
    });
    expect(result.removeIds).not.toContain("backdated");
  });

  it("trusts a snapshot the server saw before it recorded first sightings", () => {
    const result = plan(
      [snap("early", "2023-01-01T00:00:00Z"), ...honest],
      [{ tag: "g", keep: { last: 1 } }],
    );
    expect(ids(result.groups[0]).suspect).toEqual([]);
    expect(result.removeIds).toContain("early");
  });

  it.each([
    [-36 * HOUR, false],
    [-36 * HOUR - 1, true],
    [HOUR, false],
    [HOUR + 1, true],
  ])("with the default tolerance, a time %i ms from the first sighting is suspect: %s", (offset, suspect) => {
    const time = new Date(seen.getTime() + offset).toISOString();
    const result = plan([snap("s", time, { firstSeenAt: seen })], [{ tag: "g", keep: { last: 1 } }]);
    expect(ids(result.groups[0]).suspect).toEqual(suspect ? ["s"] : []);
  });

  it("takes the tolerance it is given", () => {
    const late = snap("late", "2024-03-19T12:00:00Z", { firstSeenAt: seen });
    const tolerance = { pastMs: HOUR, futureMs: 0 };
    expect(ids(plan([late], [{ tag: "g", keep: { last: 1 } }], { tolerance }).groups[0]).suspect).toEqual([
      "late",
    ]);
  });
});

describe("refusals", () => {
  const snapshots = [snap("a", "2024-03-30T00:00:00Z")];
  it.each<[string, Keep, RegExp]>([
    ["an empty policy", {}, /empty retention policy/],
    ["only zero durations", { within: "0d", within_daily: "0y0h" }, /empty retention policy/],
    ["a count below 1", { last: 0 }, /keep last must be an integer/],
    [
      "a duration restic would read differently",
      { within: "7days" },
      /keep within must be a restic duration/,
    ],
    ["an unknown key", { forever: 1 } as Keep, /unknown keep dimension forever/],
  ])("refuses %s", (_name, keep, error) => {
    const result = planRetention({ snapshots, groups: [{ tag: "g", keep }], now: NOW });
    expect(result).toEqual({ ok: false, error: expect.stringMatching(error) });
    expect(result.ok ? "" : result.error).toMatch(/nothing is planned for removal/);
  });

  it.each<[string, RetentionSnapshot[], ForgetGroup[], RegExp]>([
    ["an empty tag", snapshots, [{ tag: " ", keep: { last: 1 } }], /empty tag/],
    [
      "two groups of one tag",
      snapshots,
      [
        { tag: "g", keep: { last: 1 } },
        { tag: "g", keep: { daily: 1 } },
      ],
      /two groups/,
    ],
    [
      "a time restic would not write",
      [snap("a", "2024-03-30 00:00:00")],
      [{ tag: "g", keep: { last: 1 } }],
      /has the time/,
    ],
    [
      "a snapshot listed twice",
      [...snapshots, ...snapshots],
      [{ tag: "g", keep: { last: 1 } }],
      /listed twice/,
    ],
  ])("refuses %s", (_name, list, groups, error) => {
    expect(planRetention({ snapshots: list, groups, now: NOW })).toEqual({
      ok: false,
      error: expect.stringMatching(error),
    });
  });
});
