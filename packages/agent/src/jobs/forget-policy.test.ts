import type { Keep } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { FORGET_GROUP_BY, forgetArgs, keepFlags, planForget } from "./forget-policy.js";

describe("keepFlags", () => {
  it("maps every keep dimension to its restic flag, counts first, in the contract's key order", () => {
    const keep: Keep = {
      within_yearly: "10y",
      yearly: 3,
      last: 2,
      within: "30d",
      daily: 7,
      hourly: 24,
      weekly: 4,
      monthly: 12,
      within_hourly: "2d",
      within_daily: "1m",
      within_weekly: "6m",
      within_monthly: "1y6m",
    };
    expect(keepFlags(keep)).toEqual([
      "--keep-last",
      "2",
      "--keep-hourly",
      "24",
      "--keep-daily",
      "7",
      "--keep-weekly",
      "4",
      "--keep-monthly",
      "12",
      "--keep-yearly",
      "3",
      "--keep-within",
      "30d",
      "--keep-within-hourly",
      "2d",
      "--keep-within-daily",
      "1m",
      "--keep-within-weekly",
      "6m",
      "--keep-within-monthly",
      "1y6m",
      "--keep-within-yearly",
      "10y",
    ]);
  });

  it("refuses an empty policy, also one whose keys are all undefined", () => {
    expect(keepFlags({})).toEqual({ refused: expect.stringContaining("empty retention policy") });
    expect(keepFlags({ last: undefined, within: undefined })).toEqual({
      refused: expect.stringContaining("empty retention policy"),
    });
  });

  it("refuses values restic would read differently instead of dropping them", () => {
    expect(keepFlags({ last: 0, daily: 7 })).toEqual({
      refused: "keep last must be an integer of at least 1",
    });
    expect(keepFlags({ daily: 1.5 })).toEqual({ refused: "keep daily must be an integer of at least 1" });
    expect(keepFlags({ within: "-1d" })).toEqual({
      refused: "keep within must be a restic duration such as 30d or 1y6m",
    });
    expect(keepFlags({ within: "" })).toEqual({
      refused: "keep within must be a restic duration such as 30d or 1y6m",
    });
  });

  it("refuses a dimension it does not know: dropping it would widen the deletion", () => {
    const keep: Keep = JSON.parse('{"last":1,"tags":"keep-me"}');
    expect(keepFlags(keep)).toEqual({ refused: "unknown keep dimension tags" });
  });
});

describe("planForget", () => {
  it("restricts every group to the host's names, one --host each (protocol 11)", () => {
    const plan = planForget([{ tag: "etc", keep: { last: 2 } }], ["web", "web.old"]);
    expect(plan).toEqual({
      ok: true,
      runs: [
        {
          tag: "etc",
          args: [
            "--host=web",
            "--host=web.old",
            "--tag",
            "etc",
            "--group-by",
            FORGET_GROUP_BY,
            "--keep-last",
            "2",
          ],
        },
      ],
    });
    expect(planForget([{ tag: "etc", keep: { last: 2 } }], [""])).toMatchObject({ ok: false });
  });

  it("builds one argv per group: --tag, --group-by host,tags, keep flags; never --prune", () => {
    const plan = planForget([
      { tag: "docs", keep: { last: 3, daily: 7 } },
      { tag: "db", keep: { within: "30d" } },
    ]);
    expect(plan).toEqual({
      ok: true,
      runs: [
        {
          tag: "docs",
          args: ["--tag", "docs", "--group-by", "host,tags", "--keep-last", "3", "--keep-daily", "7"],
        },
        { tag: "db", args: ["--tag", "db", "--group-by", "host,tags", "--keep-within", "30d"] },
      ],
    });
    expect(FORGET_GROUP_BY).toBe("host,tags");
    expect(forgetArgs("x", ["--keep-last", "1"])).not.toContain("--prune");
  });

  it("one empty policy refuses the whole job, naming the group", () => {
    const plan = planForget([
      { tag: "docs", keep: { last: 3 } },
      { tag: "db", keep: {} },
    ]);
    expect(plan).toEqual({
      ok: false,
      error:
        'tag "db": empty retention policy (it would delete every snapshot of the group); nothing was deleted',
    });
  });

  it("refuses a command without groups and a tag restic would split", () => {
    expect(planForget([])).toEqual({
      ok: false,
      error: "the forget command names no groups (forget_groups); nothing was deleted",
    });
    expect(planForget(undefined)).toMatchObject({ ok: false });
    expect(planForget([{ tag: "a,b", keep: { last: 1 } }])).toEqual({
      ok: false,
      error: 'invalid tag "a,b"; nothing was deleted',
    });
  });
});
