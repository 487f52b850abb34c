import { createHash } from "node:crypto";
/**
 * @module testing/seed
 * Rows that server tests build on: an enrolled host with its agent token, bound credentials,
 * jobs in a given state, scheduled source groups, a host's reported snapshots (and the wire
 * snapshots a report carries). Inserted through
 * the same schema and sealing the server uses; a source group a test configures goes through
 * createGroup itself (createTestGroup).
 */
import { hashToken, randomToken } from "@fleetback/crypto";
import {
  type Host,
  hostCredentials,
  hosts,
  type Job,
  jobs,
  type NewHost,
  type NewJob,
  scheduleSourceGroups,
  schedules,
  sourceGroups,
  users,
} from "@fleetback/db";
import type { Repository, Snapshot as WireSnapshot } from "@fleetback/protocol";
import { eq } from "drizzle-orm";
import { ulid } from "ulidx";
import type { AuditContext } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { sealHostCredentials } from "../hosts/credentials.js";
import { createJob, type NewJobInput } from "../jobs/create-job.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import type { CreateGroupBody } from "../sources/source-group-schema.js";
import { createGroup } from "../sources/source-groups.js";

export async function seedHost(
  deps: Pick<ServerDeps, "db">,
  fields: Partial<NewHost> = {},
): Promise<{ host: Host; token: string }> {
  const token = randomToken("fba");
  const id = fields.id ?? ulid();
  const name = fields.name ?? "web-1";
  // Unique per host as enrolment makes it; the name stays one of its snapshot hostnames, as the
  // hello of an agent on that machine would add it.
  const resticHost = fields.resticHost ?? `${name}-${id.slice(-6).toLowerCase()}`;
  const [host] = await deps.db
    .insert(hosts)
    .values({
      id,
      name,
      os: "linux",
      arch: "amd64",
      agentVersion: "0.0.9",
      agentTokenHash: hashToken(token),
      resticHost,
      snapshotHostnames: [resticHost, name],
      ...fields,
    })
    .returning();
  if (!host) {
    throw new Error("insert into hosts returned no row");
  }
  return { host, token };
}

/** An admin to act as in a domain test: the audit trail refers to a user row. */
export async function seedAuditContext(deps: Pick<ServerDeps, "db">): Promise<AuditContext> {
  const id = ulid();
  const username = `admin-${id.toLowerCase()}`;
  await deps.db.insert(users).values({ id, username, passwordHash: "unused", role: "admin" });
  return { actor: { userId: id, username, role: "admin", via: "session" }, ip: undefined };
}

/**
 * Creates a source group the way the API does, as a fresh admin: "etc" backing up /etc unless
 * `fields` say otherwise.
 */
export async function createTestGroup(
  deps: Parameters<typeof createGroup>[0],
  hostId: string,
  fields: Partial<CreateGroupBody> = {},
) {
  return createGroup(deps, await seedAuditContext(deps), hostId, {
    name: "etc",
    includes: ["/etc"],
    ...fields,
  });
}

export async function bindCredentials(
  deps: Pick<ServerDeps, "db" | "keys">,
  hostId: string,
  slots: { repo?: Repository; admin?: Repository; mirror?: Repository },
): Promise<void> {
  await deps.db.insert(hostCredentials).values({
    hostId,
    repoSealed: slots.repo ? sealHostCredentials(deps.keys.secret, hostId, slots.repo) : null,
    adminSealed: slots.admin ? sealHostCredentials(deps.keys.secret, hostId, slots.admin) : null,
    mirrorSealed: slots.mirror ? sealHostCredentials(deps.keys.secret, hostId, slots.mirror) : null,
  });
}

export async function seedJob(
  deps: Pick<ServerDeps, "db" | "clock" | "ids">,
  input: NewJobInput,
  fields: Partial<NewJob> = {},
): Promise<Job> {
  const job = await createJob(deps, input);
  if (Object.keys(fields).length === 0) {
    return job;
  }
  const [updated] = await deps.db.update(jobs).set(fields).where(eq(jobs.id, job.id)).returning();
  if (!updated) {
    throw new Error("job vanished");
  }
  return updated;
}

export async function readHost(deps: Pick<ServerDeps, "db">, hostId: string): Promise<Host | undefined> {
  const [host] = await deps.db.select().from(hosts).where(eq(hosts.id, hostId));
  return host;
}

export async function readJob(deps: Pick<ServerDeps, "db">, jobId: string): Promise<Job | undefined> {
  const [job] = await deps.db.select().from(jobs).where(eq(jobs.id, jobId));
  return job;
}

/** The hostname a host's own snapshots are made under: a test's snapshot report uses it. */
export async function resticHostOf(deps: Pick<ServerDeps, "db">, hostId: string): Promise<string> {
  const [host] = await deps.db.select({ name: hosts.resticHost }).from(hosts).where(eq(hosts.id, hostId));
  if (!host) {
    throw new Error(`no host ${hostId}`);
  }
  return host.name;
}

/**
 * Snapshot `index` of host web-1, its id the index in hex and taken `index` minutes into 2026, so
 * that a test names it, and orders it, by number; `fields` give what the test is about.
 */
export function numberedSnapshot(index: number, fields: Partial<WireSnapshot> = {}): WireSnapshot {
  const id = index.toString(16).padStart(64, "0");
  return {
    id,
    short_id: id.slice(0, 8),
    time: new Date(Date.UTC(2026, 0, 1) + index * 60_000).toISOString(),
    hostname: "web-1",
    paths: ["/etc"],
    tags: [],
    size_bytes: 1_000 + index,
    file_count: 10 + index,
    ...fields,
  };
}

/** A one-file snapshot of `tag` made at `time`, its id derived from both (evidence tests). */
export function snapshotAt(hostname: string, time: Date, tag: string): WireSnapshot {
  const id = createHash("sha256").update(`${hostname}/${tag}/${time.toISOString()}`).digest("hex");
  return {
    id,
    short_id: id.slice(0, 8),
    time: time.toISOString(),
    hostname,
    paths: [`/${tag}`],
    tags: [tag],
    size_bytes: 1,
    file_count: 1,
  };
}

/**
 * Reports one empty snapshot of `paths`, taken an hour before the list was refreshed, as the
 * host's only one: what the restore tree and download tests browse and fetch from.
 */
export async function seedEmptySnapshot(
  deps: Pick<ServerDeps, "db">,
  hostId: string,
  snapshot: { id: string; hostname: string; paths: string[] },
): Promise<void> {
  const { id, hostname, paths } = snapshot;
  await replaceSnapshots(deps.db, hostId, {
    refreshed_at: "2026-11-21T11:00:00Z",
    snapshots: [
      {
        id,
        short_id: id.slice(0, 8),
        time: "2026-11-21T10:00:00Z",
        hostname,
        paths,
        tags: [],
        size_bytes: 0,
        file_count: 0,
      },
    ],
  });
}

/**
 * A source group backing up `/${name}`, on a schedule of its own unless `cron` is null, written as
 * rows: fleet views judge a group's freshness from these and its snapshots. Both ids are minted at
 * `idsAt`; the group's creation time is the column default unless given.
 */
export async function seedScheduledGroup(
  deps: Pick<ServerDeps, "db" | "ids">,
  hostId: string,
  group: { name: string; cron: string | null; idsAt: Date; createdAt?: Date; scheduleUpdatedAt: Date },
): Promise<void> {
  const { name, cron, idsAt, createdAt, scheduleUpdatedAt } = group;
  const groupId = deps.ids.ulid(idsAt);
  await deps.db
    .insert(sourceGroups)
    .values({ id: groupId, hostId, name, includes: [`/${name}`], ...(createdAt ? { createdAt } : {}) });
  if (cron !== null) {
    const scheduleId = deps.ids.ulid(idsAt);
    await deps.db.insert(schedules).values({ id: scheduleId, hostId, cron, updatedAt: scheduleUpdatedAt });
    await deps.db.insert(scheduleSourceGroups).values({ scheduleId, sourceGroupId: groupId });
  }
}
