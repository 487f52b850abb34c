/**
 * @module testing/health-test-support
 * Builders the freshness and health-alert database tests share: a host in a given zone with one
 * group on one schedule, snapshot reports for a tag, and a notifier that records what it was told.
 */
import { randomBytes } from "node:crypto";
import { hosts } from "@fleetback/db";
import { eq } from "drizzle-orm";
import type { NotifiableAlert } from "../notifications/message.js";
import type { Notifier } from "../notifications/notifier-port.js";
import { replaceSnapshots } from "../snapshots/snapshot-store.js";
import { createSchedule } from "../sources/schedules.js";
import { createGroup } from "../sources/source-groups.js";
import { resticHostOf, seedAuditContext, seedHost } from "./seed.js";
import type { TestDeps } from "./test-deps.js";

export async function seedScheduledGroup(
  deps: TestDeps,
  options: {
    hostName?: string;
    timeZone?: string | null;
    cron?: string;
    group?: string;
    graceSeconds?: number;
  } = {},
) {
  const audit = await seedAuditContext(deps);
  const { host } = await seedHost(deps, {
    name: options.hostName ?? "web-1",
    timeZone: options.timeZone ?? null,
    createdAt: deps.clock.now(),
  });
  const group = await createGroup(deps, audit, host.id, {
    name: options.group ?? "etc",
    includes: ["/etc"],
    ...(options.graceSeconds === undefined ? {} : { grace_seconds: options.graceSeconds }),
  });
  const schedule = await createSchedule(deps, audit, host.id, {
    cron: options.cron ?? "0 * * * *",
    source_group_ids: [group.id],
  });
  return { audit, host, group, schedule };
}

/** Reports the repository's snapshots: one per (time, tags), as the agent's snapshots.report would. */
export async function reportSnapshots(
  deps: Pick<TestDeps, "db">,
  hostId: string,
  snapshots: ReadonlyArray<{ time: string; tags: string[] }>,
  refreshedAt = new Date(),
) {
  // Made under the host's own name, as its agent's backups are.
  const hostname = await resticHostOf(deps, hostId);
  await replaceSnapshots(deps.db, hostId, {
    refreshed_at: refreshedAt.toISOString().replace(/\.\d{3}Z$/, "Z"),
    snapshots: snapshots.map((snapshot) => {
      const id = randomBytes(32).toString("hex");
      return {
        id,
        short_id: id.slice(0, 8),
        time: snapshot.time,
        hostname,
        paths: ["/etc"],
        tags: snapshot.tags,
        size_bytes: 1024,
        file_count: 3,
      };
    }),
  });
}

export async function setHostStatus(
  deps: Pick<TestDeps, "db">,
  hostId: string,
  status: "online" | "offline",
  lastSeenAt: Date | null,
) {
  await deps.db.update(hosts).set({ status, lastSeenAt }).where(eq(hosts.id, hostId));
}

export interface RecordedNotice {
  event: "opened" | "resolved";
  kind: string;
  hostName: string;
  group: string | undefined;
  body: string | undefined;
}

/** A Notifier that records instead of delivering (delivery has its own tests). */
export function createRecordingNotifier(): Notifier & { notices: RecordedNotice[] } {
  const notices: RecordedNotice[] = [];
  const record =
    (event: RecordedNotice["event"]) =>
    (
      alert: NotifiableAlert,
      context: {
        hostName: string;
        sourceGroupName?: string | undefined;
        resolvedBecause?: string | undefined;
      },
    ) => {
      notices.push({
        event,
        kind: alert.kind,
        hostName: context.hostName,
        group: context.sourceGroupName,
        body: event === "resolved" ? context.resolvedBecause : alert.message,
      });
    };
  return {
    notices,
    alertOpened: record("opened"),
    alertResolved: record("resolved"),
    sendTest: async () => ({ status: "sent", statusCode: null, error: null }),
    idle: async () => undefined,
    close: async () => undefined,
  };
}
