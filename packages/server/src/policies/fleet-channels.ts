/**
 * @module policies/fleet-channels
 * Notification channels in the fleet document (issue 37.4). A channel's secrets (URLs with
 * tokens, webhook secrets, passwords: SECRET_FIELDS) never leave the server: the export leaves
 * them out, a document that leaves them out keeps the stored ones, and a change to one is said
 * as "(changed)", never with its value. A new channel must bring its secrets; a channel's kind is
 * not changed in place. With the `channels` key, the document's list is the fleet's list.
 */
import { sealJson } from "@fleetback/crypto";
import { type Database, notificationChannels } from "@fleetback/db";
import { eq, inArray } from "drizzle-orm";
import { type Static, Type } from "typebox";
import type { ServerDeps } from "../deps.js";
import { invalid, isRequestError } from "../errors.js";
import { createAddressPolicy } from "../notifications/address-policy.js";
import {
  ChannelKind,
  type ChannelSettings,
  mergeChannelConfig,
  type NotificationChannelKind,
  parseChannelConfig,
  publicConfig,
  SECRET_FIELDS,
} from "../notifications/channel-config.js";
import { channelAad, openChannel } from "../notifications/channels.js";
import { canonical } from "./effective-config.js";
import type { Change } from "./spec-diff.js";

export const DocumentChannel = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    kind: Type.Unsafe<NotificationChannelKind>(ChannelKind),
    enabled: Type.Optional(Type.Boolean()),
    notify_resolved: Type.Optional(Type.Boolean()),
    config: Type.Record(Type.String(), Type.Unknown(), {
      description: "the channel's settings; its secrets may be left out to keep the stored ones",
    }),
  },
  { additionalProperties: false },
);
export type DocumentChannel = Static<typeof DocumentChannel>;

type ChannelDeps = Pick<ServerDeps, "keys" | "config">;

export interface ChannelWrite {
  id: string | undefined;
  name: string;
  kind: DocumentChannel["kind"];
  enabled: boolean;
  notifyResolved: boolean;
  settings: ChannelSettings;
}

export interface ChannelPlan {
  changes: Array<Change & { subject: string }>;
  writes: ChannelWrite[];
  deletes: string[];
}

export async function exportChannels(db: Database, deps: ChannelDeps) {
  const rows = await db.select().from(notificationChannels).orderBy(notificationChannels.name);
  return rows.map((row) => {
    const opened = openChannel(deps.keys.secret, row);
    return {
      name: row.name,
      kind: row.kind,
      enabled: row.enabled,
      notify_resolved: row.notifyResolved,
      config: opened.settings ? publicConfig(opened.settings).config : {},
    };
  });
}

/** `fn`'s field error said at `prefix` + its field (config.url → channels.0.config.url). */
function at<T>(prefix: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (isRequestError(err) && err.code === "invalid") {
      const message = `${prefix}${err.message}`;
      const field = /^([^:]+):/.exec(message)?.[1] ?? prefix.slice(0, -1);
      throw invalid(message, [{ field, message: message.slice(field.length + 2) }]);
    }
    throw err;
  }
}

function configChanges(subject: string, before: ChannelSettings, after: ChannelSettings) {
  const secret = SECRET_FIELDS[after.kind];
  const fields = [...new Set([...Object.keys(before.config), ...Object.keys(after.config)])].sort();
  const changes: Array<Change & { subject: string }> = [];
  for (const field of fields) {
    const a = (before.config as Record<string, unknown>)[field];
    const b = (after.config as Record<string, unknown>)[field];
    if (canonical(a) === canonical(b)) {
      continue;
    }
    changes.push(
      secret.includes(field)
        ? {
            subject,
            path: `config.${field}`,
            before: a === undefined ? null : "(set)",
            after: b === undefined ? null : "(changed)",
          }
        : { subject, path: `config.${field}`, before: a ?? null, after: b ?? null },
    );
  }
  return changes;
}

export async function planChannels(
  db: Database,
  deps: ChannelDeps,
  channels: readonly DocumentChannel[],
): Promise<ChannelPlan> {
  const policy = createAddressPolicy(deps.config.notifyAllowNetworks);
  const rows = await db.select().from(notificationChannels);
  const byName = new Map(rows.map((row) => [row.name, row]));
  const plan: ChannelPlan = { changes: [], writes: [], deletes: [] };
  const seen = new Set<string>();
  channels.forEach((entry, i) => {
    const prefix = `channels.${i}.`;
    if (seen.has(entry.name)) {
      throw invalid(`${prefix}name: a second channel named ${entry.name}`, [
        { field: `${prefix}name`, message: "a second channel of that name" },
      ]);
    }
    seen.add(entry.name);
    const subject = `channel ${entry.name}`;
    const row = byName.get(entry.name);
    const enabled = entry.enabled ?? true;
    const notifyResolved = entry.notify_resolved ?? false;
    if (!row) {
      const settings = at(prefix, () => parseChannelConfig(entry.kind, entry.config, policy));
      plan.writes.push({
        id: undefined,
        name: entry.name,
        kind: entry.kind,
        enabled,
        notifyResolved,
        settings,
      });
      plan.changes.push({ subject, path: "", before: null, after: { kind: entry.kind } });
      return;
    }
    if (row.kind !== entry.kind) {
      throw invalid(
        `${prefix}kind: channel ${entry.name} is a ${row.kind} channel; delete it and add a new one to change its kind`,
        [{ field: `${prefix}kind`, message: "a channel's kind does not change" }],
      );
    }
    const current = openChannel(deps.keys.secret, row).settings;
    const settings = at(prefix, () =>
      current
        ? mergeChannelConfig(current, entry.config, policy)
        : parseChannelConfig(entry.kind, entry.config, policy),
    );
    const changes = [
      ...(current
        ? configChanges(subject, current, settings)
        : [{ subject, path: "config", before: "(unreadable)", after: "(replaced)" }]),
      ...(row.enabled === enabled ? [] : [{ subject, path: "enabled", before: row.enabled, after: enabled }]),
      ...(row.notifyResolved === notifyResolved
        ? []
        : [{ subject, path: "notify_resolved", before: row.notifyResolved, after: notifyResolved }]),
    ];
    if (changes.length > 0) {
      plan.writes.push({ id: row.id, name: entry.name, kind: entry.kind, enabled, notifyResolved, settings });
      plan.changes.push(...changes);
    }
  });
  for (const row of rows) {
    if (!seen.has(row.name)) {
      plan.deletes.push(row.id);
      plan.changes.push({
        subject: `channel ${row.name}`,
        path: "",
        before: { kind: row.kind },
        after: null,
      });
    }
  }
  return plan;
}

export async function applyChannelPlan(
  tx: Database,
  deps: ChannelDeps & Pick<ServerDeps, "ids">,
  plan: ChannelPlan,
  now: Date,
): Promise<void> {
  if (plan.deletes.length > 0) {
    await tx.delete(notificationChannels).where(inArray(notificationChannels.id, plan.deletes));
  }
  for (const write of plan.writes) {
    const id = write.id ?? deps.ids.ulid(now);
    const values = {
      name: write.name,
      kind: write.kind,
      enabled: write.enabled,
      notifyResolved: write.notifyResolved,
      sealedConfig: sealJson(deps.keys.secret, write.settings.config, channelAad(id)),
      updatedAt: now,
    };
    if (write.id === undefined) {
      await tx.insert(notificationChannels).values({ id, ...values, createdAt: now });
    } else {
      await tx.update(notificationChannels).set(values).where(eq(notificationChannels.id, id));
    }
  }
}
