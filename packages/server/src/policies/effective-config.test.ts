import { describe, expect, it } from "vitest";
import { parseSelector } from "../labels/selector.js";
import { type ActivePolicy, effectiveConfig, type HostConfigInput } from "./effective-config.js";
import type { PolicySpec } from "./policy-spec.js";

function policy(name: string, selector: string, spec: PolicySpec, priority = 100, version = 1): ActivePolicy {
  return { id: `id-${name}`, name, version, priority, selector: parseSelector(selector), spec };
}

function host(labels: Record<string, string>, extra: Partial<HostConfigInput> = {}): HostConfigInput {
  return { labels, ownGroups: new Set(), overrides: new Map(), ...extra };
}

const etc = { name: "etc", includes: ["/etc"] };
const nightly = { name: "nightly", cron: "0 2 * * *", groups: ["etc"] };

describe("a host's effective configuration", () => {
  it("takes the groups and schedules of the policies its labels match, with defaults and where each comes from", () => {
    const prod = policy(
      "prod",
      "env=prod",
      { groups: [{ ...etc, retention_policy: { daily: 7 } }], schedules: [nightly] },
      100,
      3,
    );
    const staging = policy("staging", "env=staging", { groups: [{ name: "srv", includes: ["/srv"] }] });
    const config = effectiveConfig(host({ env: "prod" }), [staging, prod]);
    expect(config.matched).toEqual([{ id: "id-prod", name: "prod", version: 3 }]);
    expect(config.groups).toEqual([
      {
        name: "etc",
        settings: {
          includes: ["/etc"],
          excludes: [],
          retention_policy: { daily: 7 },
          retry_max: 3,
          retry_backoff_seconds: 300,
          grace_seconds: null,
          bandwidth_up_kbps: null,
          bandwidth_down_kbps: null,
          pre_hook: null,
          post_hook: null,
        },
        from: { id: "id-prod", name: "prod", version: 3 },
        overridden: [],
      },
    ]);
    expect(config.schedules).toEqual([
      {
        name: "nightly",
        cron: "0 2 * * *",
        enabled: true,
        groups: ["etc"],
        from: { id: "id-prod", name: "prod", version: 3 },
      },
    ]);
    expect(config.conflicts).toEqual([]);
    expect(effectiveConfig(host({ env: "dev" }), [staging, prod]).groups).toEqual([]);
  });

  it("applies the higher priority's group; equal priorities that differ are a conflict, equal ones that agree are not", () => {
    const base = policy("base", "", { groups: [{ ...etc, excludes: ["*.tmp"] }] }, 10);
    const db = policy("db", "role=db", { groups: [{ ...etc, excludes: ["*.log"] }] }, 50);
    const web = policy("web", "role in (db,web)", { groups: [{ ...etc, excludes: ["*.cache"] }] }, 50);
    const same = policy("same", "role=db", { groups: [{ ...etc, excludes: ["*.log"] }] }, 50);
    expect(
      effectiveConfig(host({ role: "web" }), [base, db, web]).groups.map((g) => [
        g.from.name,
        g.settings.excludes,
      ]),
    ).toEqual([["web", ["*.cache"]]]);
    const clash = effectiveConfig(host({ role: "db" }), [base, db, web]);
    expect(clash.groups).toEqual([]);
    expect(clash.conflicts).toEqual([
      {
        subject: "etc",
        policies: [
          { id: "id-db", name: "db", version: 1 },
          { id: "id-web", name: "web", version: 1 },
        ],
        message: expect.stringMatching(/^policies db, web \(priority 50\) give group etc differently/),
      },
    ]);
    const agreed = effectiveConfig(host({ role: "db" }), [base, db, same]);
    expect(agreed.conflicts).toEqual([]);
    expect(agreed.groups.map((g) => g.from.name)).toEqual(["db"]);
  });

  it("keeps a policy group apart where the host has its own of that name, and applies the host's overrides", () => {
    const prod = policy("prod", "", {
      groups: [etc, { name: "home", includes: ["/home"], retry_max: 1 }],
      schedules: [{ ...nightly, groups: ["etc", "home"] }],
    });
    const config = effectiveConfig(
      host(
        {},
        {
          ownGroups: new Set(["etc"]),
          overrides: new Map([["home", { retry_max: 9, excludes: ["/home/tmp"] }]]),
        },
      ),
      [prod],
    );
    expect(config.keptApart).toEqual([
      {
        group: "etc",
        from: { id: "id-prod", name: "prod", version: 1 },
        message: expect.stringContaining("of its own"),
      },
    ]);
    expect(
      config.groups.map((g) => [g.name, g.settings.retry_max, g.settings.excludes, g.overridden]),
    ).toEqual([["home", 9, ["/home/tmp"], ["excludes", "retry_max"]]]);
    expect(config.schedules.map((s) => s.groups)).toEqual([["home"]]);
  });

  it("does not apply a schedule none of whose groups applied, and says why", () => {
    const a = policy("a", "", { groups: [{ ...etc, excludes: ["x"] }], schedules: [nightly] });
    const b = policy("b", "", { groups: [etc] });
    const config = effectiveConfig(host({}), [a, b]);
    expect(config.schedules).toEqual([]);
    expect(config.conflicts.map((c) => c.subject)).toEqual(["etc", "a/nightly"]);
  });
});
