/**
 * @module hosts/presence
 * Host rows as the agent channel sees them: the hello's facts, online and offline, last_seen_at,
 * and the schedule version the agent applied.
 */
import { type Database, hostConnections, hosts } from "@fleetback/db";
import type { Hello } from "@fleetback/protocol";
import { and, eq, gte, inArray, notExists, sql } from "drizzle-orm";
import { isTimeZone } from "../config.js";
import { addSnapshotHostname } from "./snapshot-owner.js";

export interface RecordedHello {
  /** The name the host was enrolled under. */
  name: string;
  /** The hostname reported before (the enrolled name before the first hello), when this one differs. */
  renamedFrom: string | undefined;
}

/**
 * Stores the hello's versions and facts and marks the host online. The token hash is checked
 * again, so a token revoked between the upgrade and the hello does not bring the host online.
 * Undefined when the host is gone or its token no longer matches.
 *
 * The reported hostname is stored beside the host's name, never over it: the name is what the
 * host was enrolled under, and an agent must not be able to take another host's name.
 */
export async function recordHello(
  db: Database,
  hostId: string,
  tokenHash: string,
  hello: Hello,
  now: Date,
): Promise<RecordedHello | undefined> {
  // What the row held before this hello, read in the UPDATE's own statement (one round trip of
  // the hello's ~25): the statement's snapshot, as a select just before it would have read.
  const before = db.$with("before").as(
    db
      .select({
        name: hosts.name,
        reportedHostname: hosts.reportedHostname,
        snapshotHostnames: hosts.snapshotHostnames,
      })
      .from(hosts)
      .where(eq(hosts.id, hostId)),
  );
  const [row] = await db
    .with(before)
    .update(hosts)
    .set({
      reportedHostname: hello.hostname,
      os: hello.os,
      arch: hello.arch,
      agentVersion: hello.agent_version,
      toolVersion: hello.tool_version,
      protocolVersion: hello.protocol_version,
      agentKind: hello.agent_kind ?? "bundle",
      // A zone this server's Intl does not know is dropped: freshness then reads FLEETBACK_TZ.
      timeZone: hello.time_zone !== undefined && isTimeZone(hello.time_zone) ? hello.time_zone : null,
      // Refused as data besides the packaged defaults (agent-dirs.ts); an older agent names none.
      agentDirs: hello.agent_dirs ?? [],
      // Accepted now: a refusal as too old (shown on the host page) is history.
      refusedProtocolVersion: null,
      refusedAt: null,
      status: "online",
      lastSeenAt: now,
      updatedAt: now,
    })
    .from(before)
    .where(and(eq(hosts.id, hostId), eq(hosts.agentTokenHash, tokenHash)))
    .returning({
      name: before.name,
      reportedHostname: before.reportedHostname,
      snapshotHostnames: before.snapshotHostnames,
    });
  if (row === undefined) {
    return undefined;
  }
  // A hostname this host's snapshots may carry from now on (snapshot-owner.ts): nearly always
  // known already, so the hello storm pays one array lookup.
  if (!row.snapshotHostnames.includes(hello.hostname)) {
    await addSnapshotHostname(db, hostId, hello.hostname);
  }
  const previous = row.reportedHostname ?? row.name;
  return { name: row.name, renamedFrom: previous !== hello.hostname ? previous : undefined };
}

/** Remembers a hello refused as ErrProtocolTooOld, so the host page can say how to upgrade. */
export async function recordRefusedHello(
  db: Database,
  hostId: string,
  protocolVersion: number,
  now: Date,
): Promise<void> {
  await db
    .update(hosts)
    .set({ refusedProtocolVersion: protocolVersion, refusedAt: now })
    .where(eq(hosts.id, hostId));
}

/**
 * Marks the host offline unless a replica records a live socket for it (host_connections): with
 * several replicas, the agent may already be connected to another one when this socket closes.
 */
export function markHostOffline(db: Database, hostId: string, now: Date): Promise<void> {
  return markHostsOffline(db, [hostId], now);
}

/** markHostOffline for many hosts, a statement per thousand (the agent channel shutting down). */
export async function markHostsOffline(db: Database, hostIds: readonly string[], now: Date): Promise<void> {
  for (let i = 0; i < hostIds.length; i += 1_000) {
    const chunk = hostIds.slice(i, i + 1_000);
    await db
      .update(hosts)
      .set({ status: "offline", updatedAt: now })
      .where(
        and(
          inArray(hosts.id, chunk),
          eq(hosts.status, "online"),
          notExists(
            db.select({ one: sql`1` }).from(hostConnections).where(eq(hostConnections.hostId, hosts.id)),
          ),
        ),
      );
  }
}

/** Versions are an `integer` column: anything larger was never sent (and would fail the query). */
const MAX_SCHEDULE_VERSION = 2 ** 31 - 1;

/** Records the applied schedule version; a version the server never sent is ignored (false). */
export async function acknowledgeSchedule(db: Database, hostId: string, version: number): Promise<boolean> {
  // The wire allows any integer >= 0; found by the agent-channel fuzz (2^53 and 1e308 failed the UPDATE).
  if (!Number.isSafeInteger(version) || version > MAX_SCHEDULE_VERSION) {
    return false;
  }
  const rows = await db
    .update(hosts)
    .set({ scheduleAckedVersion: version })
    .where(and(eq(hosts.id, hostId), gte(hosts.scheduleVersion, version)))
    .returning({ id: hosts.id });
  return rows.length > 0;
}
