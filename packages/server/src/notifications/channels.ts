/**
 * @module notifications/channels
 * Notification channels at rest: the config is sealed with the channel id as additional data, so
 * a blob copied onto another channel's row does not open. Reads hand back the opened settings (or
 * why they could not be opened); `channelJson` is the only shape that leaves the server.
 */
import { openJson, sealJson } from "@fleetback/crypto";
import {
  channelDigests,
  type Database,
  type NotificationChannel,
  type NotificationChannelKind,
  notificationChannels,
} from "@fleetback/db";
import { asc, eq } from "drizzle-orm";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import { notFound } from "../errors.js";
import type { Ids } from "../ids.js";
import { presentFields } from "../present-fields.js";
import { withUniqueName } from "../unique-name.js";
import { createAddressPolicy } from "./address-policy.js";
import {
  type ChannelSettings,
  channelTarget,
  checkChannelConfig,
  mergeChannelConfig,
  parseChannelConfig,
  publicConfig,
} from "./channel-config.js";
import {
  type DigestSetting,
  describeDigest,
  digestColumns,
  digestOf,
  sameDigest,
} from "./digest-schedule.js";
import type { Notifier, TestOutcome } from "./notifier-port.js";

const NAME_CONSTRAINT = "notification_channels_name_key";

export interface ChannelStoreDeps {
  db: Database;
  clock: Clock;
  ids: Ids;
  keys: { secret: Uint8Array };
  config: Pick<Config, "notifyAllowNetworks">;
}

export interface StoredChannel {
  row: NotificationChannel;
  /** Undefined when the sealed config cannot be opened or no longer validates. */
  settings: ChannelSettings | undefined;
  problem?: string;
}

export function channelAad(channelId: string): string {
  return `channel:${channelId}`;
}

export function openChannel(key: Uint8Array, row: NotificationChannel): StoredChannel {
  const opened = openJson(key, row.sealedConfig, channelAad(row.id));
  if (!opened.ok) {
    return { row, settings: undefined, problem: `stored config cannot be opened (${opened.reason})` };
  }
  const checked = checkChannelConfig(row.kind, opened.value);
  if (!checked.ok) {
    return { row, settings: undefined, problem: "stored config is no longer valid" };
  }
  return { row, settings: checked.settings };
}

export interface NewChannelInput {
  name: string;
  kind: NotificationChannelKind;
  enabled?: boolean | undefined;
  notifyResolved?: boolean | undefined;
  /** The fleet digest this channel gets; none when left out. */
  digest?: DigestSetting | null | undefined;
  config: unknown;
}

export interface ChannelPatch {
  name?: string | undefined;
  enabled?: boolean | undefined;
  notifyResolved?: boolean | undefined;
  /** A new digest setting, `null` for none; left out keeps the current one. */
  digest?: DigestSetting | null | undefined;
  /** Fields to change; fields left out keep their value, `null` removes an optional one. */
  config?: Record<string, unknown> | undefined;
}

function auditChannel(
  db: Database,
  deps: Pick<ChannelStoreDeps, "clock" | "ids">,
  audit: AuditContext,
  action: string,
  id: string,
  details: Record<string, unknown>,
): Promise<void> {
  return writeAudit(db, deps, {
    ...audit,
    action,
    targetKind: "notification_channel",
    targetId: id,
    details,
  });
}

export async function createChannel(
  deps: ChannelStoreDeps,
  audit: AuditContext,
  input: NewChannelInput,
): Promise<StoredChannel> {
  const settings = parseChannelConfig(
    input.kind,
    input.config,
    createAddressPolicy(deps.config.notifyAllowNetworks),
  );
  const now = deps.clock.now();
  const id = deps.ids.ulid(now);
  return withUniqueName(NAME_CONSTRAINT, "a notification channel", input.name, () =>
    deps.db.transaction(async (tx) => {
      const [row] = await tx
        .insert(notificationChannels)
        .values({
          id,
          name: input.name,
          kind: input.kind,
          sealedConfig: sealJson(deps.keys.secret, settings.config, channelAad(id)),
          enabled: input.enabled ?? true,
          notifyResolved: input.notifyResolved ?? false,
          ...digestColumns(input.digest ?? null),
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      if (!row) {
        throw new Error("insert into notification_channels returned no row");
      }
      if (input.digest) {
        await startDigestClock(tx, id, now);
      }
      await auditChannel(tx, deps, audit, "notification_channel.create", id, {
        name: row.name,
        kind: row.kind,
        fields: Object.keys(input.config as Record<string, unknown>),
        digest: describeDigest(input.digest ?? null),
      });
      return { row, settings };
    }),
  );
}

export async function findChannel(
  db: Database,
  key: Uint8Array,
  id: string,
): Promise<StoredChannel | undefined> {
  const [row] = await db.select().from(notificationChannels).where(eq(notificationChannels.id, id));
  return row ? openChannel(key, row) : undefined;
}

export async function getChannel(
  deps: Pick<ChannelStoreDeps, "db" | "keys">,
  id: string,
): Promise<StoredChannel> {
  const found = await findChannel(deps.db, deps.keys.secret, id);
  if (!found) {
    throw notFound(`No notification channel ${id}.`);
  }
  return found;
}

export async function listChannels(
  deps: Pick<ChannelStoreDeps, "db" | "keys">,
  options: { enabledOnly?: boolean } = {},
): Promise<StoredChannel[]> {
  const rows = await deps.db
    .select()
    .from(notificationChannels)
    .where(options.enabledOnly ? eq(notificationChannels.enabled, true) : undefined)
    .orderBy(asc(notificationChannels.name));
  return rows.map((row) => openChannel(deps.keys.secret, row));
}

export async function updateChannel(
  deps: ChannelStoreDeps,
  audit: AuditContext,
  id: string,
  patch: ChannelPatch,
): Promise<StoredChannel> {
  const current = await getChannel(deps, id);
  let settings = current.settings;
  if (patch.config !== undefined) {
    const policy = createAddressPolicy(deps.config.notifyAllowNetworks);
    // An unreadable stored config can only be replaced whole.
    settings = settings
      ? mergeChannelConfig(settings, patch.config, policy)
      : parseChannelConfig(current.row.kind, patch.config, policy);
  }
  const values: Partial<typeof notificationChannels.$inferInsert> = {
    ...presentFields<ChannelPatch, typeof notificationChannels.$inferInsert>(patch, {
      name: "name",
      enabled: "enabled",
      notifyResolved: "notifyResolved",
    }),
    updatedAt: deps.clock.now(),
  };
  const digestChanged = patch.digest !== undefined && !sameDigest(digestOf(current.row), patch.digest);
  if (digestChanged) {
    Object.assign(values, digestColumns(patch.digest ?? null));
  }
  if (patch.config !== undefined && settings) {
    values.sealedConfig = sealJson(deps.keys.secret, settings.config, channelAad(id));
  }
  const changed = Object.entries({
    name: patch.name,
    enabled: patch.enabled,
    notify_resolved: patch.notifyResolved,
    digest: digestChanged ? patch.digest : undefined,
  })
    .filter(([, value]) => value !== undefined)
    .map(([key]) => key);
  return withUniqueName(NAME_CONSTRAINT, "a notification channel", patch.name ?? "so", () =>
    deps.db.transaction(async (tx) => {
      const [row] = await tx
        .update(notificationChannels)
        .set(values)
        .where(eq(notificationChannels.id, id))
        .returning();
      if (!row) {
        throw notFound(`No notification channel ${id}.`);
      }
      if (digestChanged && patch.digest) {
        await startDigestClock(tx, id, values.updatedAt as Date);
      }
      await auditChannel(tx, deps, audit, "notification_channel.update", id, {
        fields: changed,
        config_fields: Object.keys(patch.config ?? {}),
        ...(digestChanged ? { digest: describeDigest(patch.digest ?? null) } : {}),
      });
      return { row, settings, ...(settings ? {} : { problem: current.problem }) };
    }),
  );
}

export async function deleteChannel(
  deps: Pick<ChannelStoreDeps, "db" | "clock" | "ids">,
  audit: AuditContext,
  id: string,
): Promise<NotificationChannel> {
  return deps.db.transaction(async (tx) => {
    const [row] = await tx.delete(notificationChannels).where(eq(notificationChannels.id, id)).returning();
    if (!row) {
      throw notFound(`No notification channel ${id}.`);
    }
    await auditChannel(tx, deps, audit, "notification_channel.delete", id, {
      name: row.name,
      kind: row.kind,
    });
    return row;
  });
}

/**
 * A digest set or changed counts its slots from now: the first goes out at the next chosen time,
 * not at once for a time already passed today. What the last digest saw is kept, so the next one
 * still says what changed.
 */
async function startDigestClock(db: Database, channelId: string, now: Date): Promise<void> {
  await db
    .insert(channelDigests)
    .values({ channelId, slotAt: now })
    .onConflictDoUpdate({ target: channelDigests.channelId, set: { slotAt: now } });
}

/** One test send, awaited; audited with its outcome, since what it proves is when it was tried. */
export async function testChannel(
  deps: Pick<ChannelStoreDeps, "db" | "clock" | "ids"> & { notifier: Pick<Notifier, "sendTest"> },
  audit: AuditContext,
  id: string,
): Promise<TestOutcome> {
  const outcome = await deps.notifier.sendTest(id);
  await auditChannel(deps.db, deps, audit, "notification_channel.test", id, { status: outcome.status });
  return outcome;
}

/** The API's view of a channel: no secret, only whether each is set and the target host. */
export function channelJson(channel: StoredChannel) {
  const shown = channel.settings ? publicConfig(channel.settings) : { config: {}, secrets: {} };
  return {
    id: channel.row.id,
    name: channel.row.name,
    kind: channel.row.kind,
    enabled: channel.row.enabled,
    notify_resolved: channel.row.notifyResolved,
    digest: digestOf(channel.row),
    target: channel.settings ? channelTarget(channel.settings) : null,
    config: shown.config,
    secrets: shown.secrets,
    problem: channel.problem ?? null,
    created_at: channel.row.createdAt,
    updated_at: channel.row.updatedAt,
  };
}
export type ChannelJson = ReturnType<typeof channelJson>;
