/**
 * Issue 31: a repository shared with other machines (or made by hand before Fleetback). Only the
 * host's own snapshots count (its count, the per-tag projection freshness reads), other machines'
 * are listed as such and cannot be forgotten from this host; a hostname the agent reports later
 * makes its snapshots the host's; backups and policy forgets carry the host's names.
 */
import { hosts, snapshotTags } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { type CommandRun, FORGET_HOSTS_MAX, type Snapshot as WireSnapshot } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { withSnapshotOwner } from "../jobs/owner-command.js";
import { listSnapshots, replaceSnapshots, snapshotJson } from "../snapshots/snapshot-store.js";
import { seedHost } from "../testing/seed.js";
import { addSnapshotHostname, newHostIdentity, withHostname } from "./snapshot-owner.js";

function wireSnapshot(index: number, hostname: string, tags = ["default"]): WireSnapshot {
  const id = index.toString(16).padStart(64, "0");
  return {
    id,
    short_id: id.slice(0, 8),
    time: new Date(Date.UTC(2026, 0, 1, index)).toISOString(),
    hostname,
    paths: ["/srv"],
    tags,
    size_bytes: 1,
    file_count: 1,
  };
}

it("keeps the restic host first and at most FORGET_HOSTS_MAX names, dropping the oldest reported", () => {
  expect(withHostname(["web"], "web", "web.lab")).toEqual(["web", "web.lab"]);
  expect(withHostname(["web", "old"], "web", "web")).toEqual(["web", "old"]);
  const many = Array.from({ length: FORGET_HOSTS_MAX + 3 }, (_, i) => `name-${i}`);
  const names = many.reduce((acc, name) => withHostname(acc, "web", name), ["web"]);
  expect(names).toHaveLength(FORGET_HOSTS_MAX);
  expect(names[0]).toBe("web");
  expect(names.at(-1)).toBe(`name-${FORGET_HOSTS_MAX + 2}`);
  expect(names).not.toContain("name-0");
});

runDbSuite("snapshot owner", (getDb) => {
  it("counts, tags and marks only the host's own snapshots in a shared repository", async () => {
    const db = getDb();
    const { host } = await seedHost({ db }, { name: "web", resticHost: "web", snapshotHostnames: ["web"] });
    // alpha's is the newest: a host that stopped backing up must not look fresh because of it.
    const result = await replaceSnapshots(db, host.id, {
      snapshots: [
        wireSnapshot(9, "alpha", ["default"]),
        wireSnapshot(8, "beta", ["default", "beta-only"]),
        wireSnapshot(2, "web"),
        wireSnapshot(1, "web"),
      ],
      refreshed_at: "2026-01-02T00:00:00Z",
    });
    expect(result).toMatchObject({ count: 2, otherCount: 2 });
    const [row] = await db.select().from(hosts).where(eq(hosts.id, host.id));
    expect(row).toMatchObject({ snapshotCount: 2, otherSnapshotCount: 2 });
    const tags = await db.select().from(snapshotTags).where(eq(snapshotTags.hostId, host.id));
    expect(tags.map((t) => [t.tag, t.snapshotCount, t.latestAt.toISOString()])).toEqual([
      ["default", 2, wireSnapshot(2, "web").time],
    ]);
    const listed = (await listSnapshots(db, host.id, { limit: 10 })).map(snapshotJson);
    expect(listed.map((s) => [s.hostname, s.own])).toEqual([
      ["alpha", false],
      ["beta", false],
      ["web", true],
      ["web", true],
    ]);
  });

  it("makes a newly reported hostname's snapshots the host's own, and recounts", async () => {
    const db = getDb();
    const { host } = await seedHost({ db }, { name: "web", resticHost: "web", snapshotHostnames: ["web"] });
    await replaceSnapshots(db, host.id, {
      snapshots: [wireSnapshot(5, "alpha"), wireSnapshot(3, "web-old", ["etc"]), wireSnapshot(1, "web")],
      refreshed_at: "2026-01-02T00:00:00Z",
    });
    expect(await addSnapshotHostname(db, host.id, "web-old")).toBe(true);
    expect(await addSnapshotHostname(db, host.id, "web-old")).toBe(false);
    const [row] = await db.select().from(hosts).where(eq(hosts.id, host.id));
    expect(row).toMatchObject({
      snapshotCount: 2,
      otherSnapshotCount: 1,
      snapshotHostnames: ["web", "web-old"],
    });
    const tags = await db.select().from(snapshotTags).where(eq(snapshotTags.hostId, host.id));
    expect(tags.map((t) => [t.tag, t.snapshotCount]).sort()).toEqual([
      ["default", 1],
      ["etc", 1],
    ]);
    const listed = (await listSnapshots(db, host.id, { limit: 10 })).map((s) => [s.hostname, s.isOwn]);
    expect(listed).toEqual([
      ["alpha", false],
      ["web-old", true],
      ["web", true],
    ]);
  });

  it("gives a second host of the same name its own restic host", async () => {
    const db = getDb();
    const first = await newHostIdentity(db, "01KFIRSTAAAAAAAAAAAAAAAAAA", "web");
    expect(first).toEqual({ resticHost: "web", snapshotHostnames: ["web"] });
    await seedHost({ db }, { id: "01KFIRSTAAAAAAAAAAAAAAAAAA", name: "web", ...first });
    const second = await newHostIdentity(db, "01KSECONDBBBBBBBBBBBBXYZ12", "web");
    // The id's tail: unique, and readable in restic's own listing.
    expect(second).toEqual({ resticHost: "web-bxyz12", snapshotHostnames: ["web-bxyz12", "web"] });
  });

  it("names the host in a backup and a policy forget, and refuses an old agent's forget in a shared repository", async () => {
    const db = getDb();
    const { host } = await seedHost(
      { db },
      { name: "web", resticHost: "web", snapshotHostnames: ["web", "web.lab"], protocolVersion: 11 },
    );
    const backup = {
      job_id: "01KJOBAAAAAAAAAAAAAAAAAAAA",
      kind: "backup",
      requires_admin_creds: false,
      includes: ["/srv"],
      excludes: [],
      tag: "default",
    } satisfies CommandRun;
    const forget = {
      job_id: "01KJOBBBBBBBBBBBBBBBBBBBBB",
      kind: "forget",
      requires_admin_creds: false,
      forget_groups: [{ tag: "default", keep: { last: 1 } }],
    } satisfies CommandRun;
    const byId: CommandRun = { ...forget, forget_groups: [], snapshot_ids: ["a".repeat(64)] };
    expect(await withSnapshotOwner(db, host.id, backup)).toEqual({
      ok: true,
      command: { ...backup, host: "web" },
    });
    expect(await withSnapshotOwner(db, host.id, forget)).toEqual({
      ok: true,
      command: { ...forget, hosts: ["web", "web.lab"] },
    });
    // By id the server already named only the host's own snapshots.
    expect(await withSnapshotOwner(db, host.id, byId)).toEqual({ ok: true, command: byId });

    await db.update(hosts).set({ protocolVersion: 10 }).where(eq(hosts.id, host.id));
    expect(await withSnapshotOwner(db, host.id, backup)).toEqual({ ok: true, command: backup });
    expect(await withSnapshotOwner(db, host.id, forget)).toEqual({ ok: true, command: forget });
    await db.update(hosts).set({ otherSnapshotCount: 1 }).where(eq(hosts.id, host.id));
    expect(await withSnapshotOwner(db, host.id, forget)).toEqual({
      ok: false,
      reason: "shared_repository_old_agent",
    });
  });
});
