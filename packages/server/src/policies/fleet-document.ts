/**
 * @module policies/fleet-document
 * The fleet's configuration as one document (issue 37.4): the hosts' labels and own maintenance
 * cadences (fleet-maintenance.ts), the policies and the notification channels (their secrets
 * never in it: fleet-channels.ts), so a
 * team keeps its backup policy in git. Exported in a stable order; applied back as a whole: a
 * host it names gets exactly its labels (a host it does not name keeps its own; hosts come and go
 * by enrolment), and its policies, when it has the key, are the fleet's policies (one it lacks is
 * deleted; a document without `policies` leaves them as they are). Applying
 * is one transaction: every change, the hosts brought in line once, one audit entry. A dry run
 * computes the same changes and writes nothing; applying the same document twice changes nothing.
 * A bad document is refused whole, naming the path of the bad field.
 */
import { type Database, hosts, policies } from "@fleetback/db";
import { asc, eq, inArray } from "drizzle-orm";
import { type Static, Type } from "typebox";
import { type AuditContext, writeAudit } from "../audit/audit.js";
import type { ServerDeps } from "../deps.js";
import { invalid } from "../errors.js";
import { validate } from "../http/validate.js";
import { checkLabels, type Labels, LabelsSchema, labelsOf } from "../labels/label-rules.js";
import { MaintenanceBody } from "../maintenance/maintenance-record.js";
import { canonical } from "./effective-config.js";
import {
  applyChannelPlan,
  type ChannelPlan,
  DocumentChannel,
  exportChannels,
  planChannels,
} from "./fleet-channels.js";
import {
  applyOwnMaintenance,
  checkOwnMaintenance,
  ownMaintenance,
  ownMaintenanceChanges,
} from "./fleet-maintenance.js";
import { loadMaintenance } from "./maintenance-plan.js";
import { pushSchedules, reconcileHosts } from "./policy-apply.js";
import { exportedContent, shownContent } from "./policy-hooks.js";
import { checkPolicyBody, PolicyBody } from "./policy-spec.js";
import { named, type PlanSummary, sealedSpec, storeVersion, summarise } from "./policy-store.js";
import { type Change, contentChanges, specDiff } from "./spec-diff.js";

export const FLEET_DOCUMENT_VERSION = 1;
const MAX_HOSTS = 20_000;
const MAX_POLICIES = 500;

const { note: _note, ...policyFields } = PolicyBody.properties;

export const FleetDocument = Type.Object(
  {
    version: Type.Literal(FLEET_DOCUMENT_VERSION),
    hosts: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
            labels: LabelsSchema,
            maintenance: Type.Optional(
              Type.Object(MaintenanceBody.properties, {
                additionalProperties: false,
                description:
                  "the host's own maintenance and drill cadences (over its policies'); absent: left as they are",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: MAX_HOSTS,
          description:
            "hosts by id (as exported) or by a name no other host has; a host not listed keeps its labels",
        },
      ),
    ),
    policies: Type.Optional(
      Type.Array(Type.Object(policyFields, { additionalProperties: false }), { maxItems: MAX_POLICIES }),
    ),
    channels: Type.Optional(Type.Array(DocumentChannel, { maxItems: 200 })),
  },
  { additionalProperties: false },
);
export type FleetDocument = Static<typeof FleetDocument>;

export interface DocumentChange extends Change {
  /** `host web-1`, `policy prod`. */
  subject: string;
}

export interface DocumentResult {
  dry_run: boolean;
  changes: DocumentChange[];
  plan: PlanSummary;
}

type DocDeps = Pick<ServerDeps, "db" | "clock" | "ids" | "hub" | "log" | "keys" | "config">;

export async function exportFleet(
  db: Database,
  deps: Pick<ServerDeps, "keys" | "config">,
): Promise<FleetDocument> {
  const hostRows = await db
    .select({ id: hosts.id, name: hosts.name, labels: hosts.labels })
    .from(hosts)
    .orderBy(asc(hosts.name), asc(hosts.id));
  const policyRows = await db.select().from(policies).orderBy(asc(policies.name));
  const cadences = await loadMaintenance(db);
  return {
    version: FLEET_DOCUMENT_VERSION,
    hosts: hostRows.map((row) => ({
      id: row.id,
      name: row.name,
      labels: sorted(labelsOf(row.labels)),
      maintenance: ownMaintenance(cadences.get(row.id)),
    })),
    policies: policyRows.map((row) => ({
      name: row.name,
      selector: row.selector,
      priority: row.priority,
      // Hooks left out, as channel secrets are: applied back, the document keeps them.
      spec: exportedContent(row.spec as Record<string, unknown>) as PolicyBody["spec"],
    })),
    channels: await exportChannels(db, deps),
  };
}

function sorted(labels: Labels): Labels {
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
}

interface Planned {
  changes: DocumentChange[];
  labels: Array<{ id: string; labels: Labels }>;
  maintenance: Array<{ id: string; wanted: MaintenanceBody }>;
  upserts: Array<{ id: string | undefined; checked: ReturnType<typeof checkPolicyBody> }>;
  deletes: string[];
  channels: ChannelPlan | undefined;
}

/** The document checked whole and compared with the fleet: every change it makes, nothing written. */
async function planDocument(
  db: Database,
  deps: Pick<ServerDeps, "keys" | "config">,
  raw: unknown,
): Promise<Planned> {
  const doc = validate(FleetDocument, raw);
  const planned: Planned = {
    changes: [],
    labels: [],
    maintenance: [],
    upserts: [],
    deletes: [],
    channels: undefined,
  };
  const hostRows = await db.select({ id: hosts.id, name: hosts.name, labels: hosts.labels }).from(hosts);
  const byId = new Map(hostRows.map((row) => [row.id, row]));
  const byName = new Map<string, typeof hostRows>();
  for (const row of hostRows) {
    byName.set(row.name, [...(byName.get(row.name) ?? []), row]);
  }
  const seen = new Set<string>();
  const cadences = (doc.hosts ?? []).some((entry) => entry.maintenance !== undefined)
    ? await loadMaintenance(db)
    : new Map();
  (doc.hosts ?? []).forEach((entry, i) => {
    const at = `hosts.${i}`;
    const labels = checkLabels(entry.labels, `${at}.labels`);
    const named = entry.name === undefined ? [] : (byName.get(entry.name) ?? []);
    const host = entry.id !== undefined ? byId.get(entry.id) : named.length === 1 ? named[0] : undefined;
    if (!host) {
      const why =
        entry.id !== undefined
          ? `no host has the id ${entry.id}`
          : entry.name === undefined
            ? "give the host's id or name"
            : named.length > 1
              ? `${named.length} hosts are named ${entry.name}: give the id`
              : `no host is named ${entry.name}`;
      throw invalid(`${at}: ${why}`, [{ field: at, message: why }]);
    }
    if (seen.has(host.id)) {
      throw invalid(`${at}: names host ${host.name} a second time`, [
        { field: at, message: "a second time" },
      ]);
    }
    seen.add(host.id);
    const before = labelsOf(host.labels);
    if (canonical(before) !== canonical(labels)) {
      planned.labels.push({ id: host.id, labels });
      planned.changes.push(
        ...specDiff(before, labels).map((change) => ({
          subject: `host ${host.name}`,
          ...change,
          path: `labels.${change.path}`,
        })),
      );
    }
    if (entry.maintenance !== undefined) {
      const wanted = checkOwnMaintenance(entry.maintenance, `${at}.maintenance`);
      const changes = ownMaintenanceChanges(cadences.get(host.id), wanted);
      if (changes.length > 0) {
        planned.maintenance.push({ id: host.id, wanted });
        planned.changes.push(...changes.map((change) => ({ subject: `host ${host.name}`, ...change })));
      }
    }
  });
  const current = await db.select().from(policies);
  const byPolicyName = new Map(current.map((row) => [row.name, row]));
  const kept = new Set<string>();
  (doc.policies ?? []).forEach((entry, i) => {
    const checked = checkPolicyBody(entry, `policies.${i}.`);
    if (kept.has(checked.name)) {
      throw invalid(`policies.${i}.name: a second policy named ${checked.name}`, [
        { field: `policies.${i}.name`, message: "a second policy of that name" },
      ]);
    }
    kept.add(checked.name);
    const row = byPolicyName.get(checked.name);
    const content = { selector: checked.selector, priority: checked.priority, spec: checked.spec };
    if (!row) {
      planned.upserts.push({ id: undefined, checked });
      // Hooks said as has_ flags: the dry run prints this, and a hook's text is a secret.
      const shown = { ...content, spec: shownContent(sealedSpec(deps.keys.secret, "(new)", checked.spec)) };
      planned.changes.push({ subject: `policy ${checked.name}`, path: "", before: null, after: shown });
      return;
    }
    const stored = { selector: row.selector, priority: row.priority, spec: row.spec };
    // Sealed as storing it would: a hook the document leaves out or repeats is no change.
    const wanted = { ...content, spec: sealedSpec(deps.keys.secret, row.id, checked.spec, row.spec) };
    if (canonical(stored) !== canonical(wanted)) {
      planned.upserts.push({ id: row.id, checked });
      planned.changes.push(
        ...contentChanges(deps.keys.secret, row.id, stored, wanted).map((change) => ({
          subject: `policy ${checked.name}`,
          ...change,
        })),
      );
    }
  });
  for (const row of doc.policies === undefined ? [] : current) {
    if (!kept.has(row.name)) {
      planned.deletes.push(row.id);
      planned.changes.push({
        subject: `policy ${row.name}`,
        path: "",
        before: { selector: row.selector },
        after: null,
      });
    }
  }
  if (doc.channels !== undefined) {
    planned.channels = await planChannels(db, deps, doc.channels);
    planned.changes.push(...planned.channels.changes);
  }
  return planned;
}

/** Applies the document, or with `dryRun` says what applying it would change. */
export async function applyFleetDocument(
  deps: DocDeps,
  audit: AuditContext,
  raw: unknown,
  dryRun: boolean,
): Promise<DocumentResult> {
  const planned = await planDocument(deps.db, deps, raw);
  if (dryRun || planned.changes.length === 0) {
    return {
      dry_run: dryRun,
      changes: planned.changes,
      plan: { hosts_covered: 0, hosts_changed: 0, hosts: [] },
    };
  }
  const now = deps.clock.now();
  const result = await deps.db.transaction(async (tx) => {
    for (const { id, labels } of planned.labels) {
      await tx.update(hosts).set({ labels, updatedAt: now }).where(eq(hosts.id, id));
    }
    for (const { id, wanted } of planned.maintenance) {
      await applyOwnMaintenance(tx, id, wanted, now);
    }
    if (planned.channels) {
      await applyChannelPlan(tx, deps, planned.channels, now);
    }
    // Deleted first, so a policy renamed in the document (one name gone, one new) never clashes.
    const fleet = await reconcileAfter(tx, deps, planned, audit, now);
    await writeAudit(tx, deps, {
      ...audit,
      action: "fleet.apply",
      details: {
        changes: planned.changes.length,
        hosts_labelled: planned.labels.length,
        hosts_maintenance: planned.maintenance.length,
        policies_written: planned.upserts.length,
        policies_deleted: planned.deletes.length,
        channels_written: planned.channels?.writes.length ?? 0,
        channels_deleted: planned.channels?.deletes.length ?? 0,
        hosts_changed: fleet.plan.hosts_changed,
      },
    });
    return fleet;
  });
  await pushSchedules(deps, result.rescheduled);
  return { dry_run: false, changes: planned.changes, plan: result.plan };
}

async function reconcileAfter(tx: Database, deps: DocDeps, planned: Planned, audit: AuditContext, now: Date) {
  const rescheduled = new Set<string>();
  if (planned.deletes.length > 0) {
    // What the deleted policies gave goes before their rows do (policy-store's deletePolicy).
    for (const id of (await reconcileHosts(tx, deps, undefined, planned.deletes)).rescheduled) {
      rescheduled.add(id);
    }
    await tx.delete(policies).where(inArray(policies.id, planned.deletes));
  }
  for (const upsert of planned.upserts) {
    const id = upsert.id ?? deps.ids.ulid(now);
    await named(upsert.checked.name, () =>
      storeVersion(tx, deps.keys.secret, now, audit, id, {
        ...upsert.checked,
        note: "applied from a fleet document",
      }),
    );
  }
  const fleet = await reconcileHosts(tx, deps);
  for (const id of fleet.rescheduled) {
    rescheduled.add(id);
  }
  return { plan: summarise(fleet), rescheduled: [...rescheduled] };
}
