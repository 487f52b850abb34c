import type { Snapshot } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { newestFirst, groupSnapshot as snapshot } from "../testing/tree-index.js";
import { CATALOG_CATCH_UP_MAX, planCatalogue } from "./catalog-plan.js";

const GROUP = { tag: "docs", hostname: "web1" };

const ids = (snapshots: Snapshot[]) => snapshots.map((s) => s.id);

describe("which snapshots the file catalogue owes", () => {
  it("plans every snapshot of the group past its base, oldest first", () => {
    const own = [1, 2, 3, 4].map((n) => snapshot(n));
    const base = own[0] as Snapshot;
    const plan = planCatalogue(newestFirst(own), GROUP, { snapshot_id: base.id, time: base.time });
    expect(ids(plan.snapshots)).toEqual(ids(own.slice(1)));
    expect(plan.skipped).toBe(0);
  });

  it("plans nothing when the base is the newest", () => {
    const own = [1, 2].map((n) => snapshot(n));
    const newest = own[1] as Snapshot;
    expect(planCatalogue(newestFirst(own), GROUP, { snapshot_id: newest.id, time: newest.time })).toEqual({
      snapshots: [],
      skipped: 0,
    });
  });

  it("plans only the newest without a base: no backfill", () => {
    const own = [1, 2, 3].map((n) => snapshot(n));
    expect(ids(planCatalogue(newestFirst(own), GROUP, undefined).snapshots)).toEqual([own[2]?.id]);
    expect(planCatalogue([], GROUP, undefined)).toEqual({ snapshots: [], skipped: 0 });
  });

  it("keeps this host's snapshots of the tag only", () => {
    const own = [snapshot(2), snapshot(5)];
    const listed = newestFirst([
      snapshot(1),
      ...own,
      snapshot(3, "docs", "web2"),
      snapshot(4, "mail", "web1"),
      { ...snapshot(6), tags: ["docs-old"] },
    ]);
    const plan = planCatalogue(listed, GROUP, {
      snapshot_id: snapshot(1).id,
      time: snapshot(1).time,
    });
    expect(ids(plan.snapshots)).toEqual(ids(own));
    // Without a base the newest of the group is this host's, not another's newer one.
    expect(ids(planCatalogue(listed, { tag: "docs", hostname: "web2" }, undefined).snapshots)).toEqual([
      snapshot(3, "docs", "web2").id,
    ]);
  });

  it("takes a forgotten base's time as the start", () => {
    const own = [3, 4].map((n) => snapshot(n));
    const gone = snapshot(2);
    expect(
      ids(planCatalogue(newestFirst(own), GROUP, { snapshot_id: gone.id, time: gone.time }).snapshots),
    ).toEqual(ids(own));
  });

  it(`caps the catch-up at the newest ${CATALOG_CATCH_UP_MAX}, counting the older ones skipped`, () => {
    const own = Array.from({ length: 12 }, (_, n) => snapshot(n));
    const base = own[0] as Snapshot;
    const plan = planCatalogue(newestFirst(own), GROUP, { snapshot_id: base.id, time: base.time });
    expect(ids(plan.snapshots)).toEqual(ids(own.slice(-CATALOG_CATCH_UP_MAX)));
    expect(plan.skipped).toBe(11 - CATALOG_CATCH_UP_MAX);
    expect(
      ids(planCatalogue(newestFirst(own), GROUP, { snapshot_id: base.id, time: base.time }, 2).snapshots),
    ).toEqual(ids(own.slice(-2)));
  });

  it("keeps restic's order for snapshots of the same time", () => {
    const first = snapshot(1);
    const twin = { ...snapshot(2), time: first.time };
    // restic lists oldest first; the report reverses that and sorts newest first, stably.
    const listed = newestFirst([twin, first]);
    expect(
      ids(planCatalogue(listed, GROUP, { snapshot_id: snapshot(0).id, time: snapshot(0).time }).snapshots),
    ).toEqual([first.id, twin.id]);
  });
});
