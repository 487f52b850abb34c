/**
 * @module hosts/snapshot-owner
 * Which snapshots of a host's repository are the host's own (issue 31). A repository may be shared
 * by several machines or made by hand before Fleetback; restic tells snapshots apart by the
 * hostname they were made under. A host's backups are made under its `restic_host` (sent as
 * `command.run.host`, restic `--host`): fixed at enrolment and unique in the fleet, so renaming
 * the machine keeps one history and two hosts sharing a repository never mix theirs. Its own
 * snapshots are those under any of its `snapshot_hostnames`: the restic_host and every hostname
 * its agent reported (snapshots from before Fleetback, or from before this rule, were made under
 * the machine's hostname). Everything else in the repository is another machine's: listed and
 * marked as such, never counted for freshness, never forgotten by this host's retention.
 */
import { type Database, executeRows, hosts, snapshots, snapshotTags } from "@fleetback/db";
import { FORGET_HOSTS_MAX, HOSTNAME_MAX_LENGTH } from "@fleetback/protocol";
import { and, eq, ne, sql } from "drizzle-orm";

/** The first name a host's backups may be made under that no other host has. */
export async function uniqueResticHost(db: Database, hostId: string, name: string): Promise<string> {
  const [taken] = await db.select({ id: hosts.id }).from(hosts).where(eq(hosts.resticHost, name)).limit(1);
  if (taken === undefined) {
    return name;
  }
  // The id's random tail; a ULID's last six characters collide once in a billion.
  return `${name.slice(0, HOSTNAME_MAX_LENGTH - 7)}-${hostId.slice(-6).toLowerCase()}`;
}

/** The identity columns of a new host row. */
export async function newHostIdentity(db: Database, hostId: string, name: string) {
  const resticHost = await uniqueResticHost(db, hostId, name);
  return { resticHost, snapshotHostnames: resticHost === name ? [name] : [resticHost, name] };
}

/**
 * The names with `hostname` added, the restic_host always first and kept: at most
 * FORGET_HOSTS_MAX, the oldest reported names dropping out first.
 */
export function withHostname(names: readonly string[], resticHost: string, hostname: string): string[] {
  const others = names.filter((name) => name !== resticHost && name !== hostname);
  const reported = hostname === resticHost ? others : [...others, hostname];
  return [resticHost, ...reported.slice(-(FORGET_HOSTS_MAX - 1))];
}

export function isOwnSnapshot(names: ReadonlySet<string>, hostname: string): boolean {
  return names.has(hostname);
}

/**
 * Records a hostname the host's agent reported, when it is new: its snapshots under that name
 * become the host's own, and the counts and the per-tag projection follow from the stored rows.
 * The host row is held meanwhile, as a snapshot report holds it, so neither classifies rows the
 * other is rewriting.
 */
export function addSnapshotHostname(db: Database, hostId: string, hostname: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [host] = await tx
      .select({ resticHost: hosts.resticHost, names: hosts.snapshotHostnames })
      .from(hosts)
      .where(eq(hosts.id, hostId))
      .for("update");
    if (host === undefined || host.names.includes(hostname)) {
      return false;
    }
    const names = withHostname(host.names, host.resticHost, hostname);
    await tx.update(hosts).set({ snapshotHostnames: names }).where(eq(hosts.id, hostId));
    // A new host's first hello, or a rename: nearly always no stored snapshot changes side, and a
    // hello storm of new hosts should not rewrite their (empty) projections one by one.
    const [changes] = await tx
      .select({ id: snapshots.id })
      .from(snapshots)
      .where(
        and(
          eq(snapshots.hostId, hostId),
          sql`(${snapshots.hostname} = any(${sql.param(names)}::text[])) <> ${snapshots.isOwn}`,
        ),
      )
      .limit(1);
    if (changes !== undefined) {
      await reclassifySnapshots(tx, hostId, names);
    }
    return true;
  });
}

/** Sets is_own of the host's stored snapshots from `names` and recounts from the rows. */
async function reclassifySnapshots(db: Database, hostId: string, names: readonly string[]): Promise<void> {
  const own = sql`(${snapshots.hostname} = any(${sql.param(names)}::text[]))`;
  await db
    .update(snapshots)
    .set({ isOwn: own })
    .where(and(eq(snapshots.hostId, hostId), ne(snapshots.isOwn, own)));
  await executeRows(
    db,
    sql`update ${hosts} set
          snapshot_count = (select count(*) from ${snapshots} s where s.host_id = ${hostId} and s.is_own),
          other_snapshot_count = (select count(*) from ${snapshots} s where s.host_id = ${hostId} and not s.is_own)
        where id = ${hostId}`,
  );
  await db.delete(snapshotTags).where(eq(snapshotTags.hostId, hostId));
  await executeRows(
    db,
    sql`insert into ${snapshotTags} (host_id, tag, latest_at, snapshot_count)
        select s.host_id, tag, max(s.time), count(*)::int
        from ${snapshots} s cross join lateral jsonb_array_elements_text(s.tags) as tag
        where s.host_id = ${hostId} and s.is_own
        group by s.host_id, tag`,
  );
}
