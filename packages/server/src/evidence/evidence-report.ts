/**
 * @module evidence/evidence-report
 * The audit evidence report (issue 39.2): for a range of UTC days and the hosts a selector
 * matches, per host and day whether a snapshot of each group was made (as the server first saw
 * it), whether the host's last check and last drill by then had passed, and the gaps. Read from
 * evidence_days only (evidence-record.ts), never from today's snapshot list, so forgetting
 * snapshots or deleting a host leaves the report of the past unchanged. A deleted host is
 * reported under its last known name and labels.
 *
 * A day before a group existed (before it was made, and before its first recorded snapshot) is
 * "not yet", not a gap; a group with snapshots recorded but no longer configured is still
 * reported, so removing a group does not hide the days it was missed.
 */
import { type Database, evidenceDays, evidenceHosts, hosts, sourceGroups } from "@fleetback/db";
import { and, asc, between, eq, inArray, lt, notInArray, sql } from "drizzle-orm";
import { utcDay } from "../clock.js";
import { invalid } from "../errors.js";
import type { Labels } from "../labels/label-rules.js";
import type { Selector } from "../labels/selector.js";
import { selectorSql } from "../labels/selector-sql.js";

export const EVIDENCE_MAX_DAYS = 400;
export const EVIDENCE_MAX_HOSTS = 2_000;

export type DayMark = "yes" | "no" | "not yet";
export type ResultMark = "passed" | "failed" | "none";

export interface EvidenceQuery {
  from: string;
  to: string;
  selector: Selector;
  /** Only these group names, when given. */
  groups?: readonly string[];
}

export interface GroupEvidence {
  name: string;
  /** One mark per day of the range. */
  days: DayMark[];
  /** Snapshots first seen per day. */
  snapshots: number[];
  gaps: Array<{ from: string; to: string; days: number }>;
}

export interface HostEvidence {
  host_id: string;
  name: string;
  deleted: boolean;
  labels: Labels;
  groups: GroupEvidence[];
  /** Per day: how the host's last check by the end of that day ended. */
  check: ResultMark[];
  drill: ResultMark[];
}

export interface EvidenceReport {
  from: string;
  to: string;
  days: string[];
  hosts: HostEvidence[];
  totals: { hosts: number; group_days: number; covered: number; gaps: number };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function dayRange(from: string, to: string): string[] {
  for (const [field, value] of [
    ["from", from],
    ["to", to],
  ] as const) {
    if (!DAY.test(value) || utcDay(new Date(`${value}T00:00:00Z`)) !== value) {
      throw invalid(`${field}: a day as YYYY-MM-DD`, [{ field, message: "a day as YYYY-MM-DD" }]);
    }
  }
  if (to < from) {
    throw invalid("to: before from", [{ field: "to", message: "before from" }]);
  }
  const days: string[] = [];
  for (let at = new Date(`${from}T00:00:00Z`); utcDay(at) <= to; at = new Date(at.getTime() + 86_400_000)) {
    days.push(utcDay(at));
    if (days.length > EVIDENCE_MAX_DAYS) {
      throw invalid(`to: at most ${EVIDENCE_MAX_DAYS} days from from`, [
        { field: "to", message: `at most ${EVIDENCE_MAX_DAYS} days from from` },
      ]);
    }
  }
  return days;
}

function gapsOf(days: readonly string[], marks: readonly DayMark[]): GroupEvidence["gaps"] {
  const gaps: GroupEvidence["gaps"] = [];
  let start = -1;
  marks.forEach((mark, i) => {
    if (mark === "no" && start < 0) {
      start = i;
    }
    if (mark !== "no" && start >= 0) {
      gaps.push({ from: days[start] as string, to: days[i - 1] as string, days: i - start });
      start = -1;
    }
  });
  if (start >= 0) {
    gaps.push({
      from: days[start] as string,
      to: days[days.length - 1] as string,
      days: days.length - start,
    });
  }
  return gaps;
}

async function reportedHosts(db: Database, selector: Selector) {
  const current = await db
    .select({ id: hosts.id, name: hosts.name, labels: hosts.labels, createdAt: hosts.createdAt })
    .from(hosts)
    .where(selectorSql(hosts.labels, selector))
    .orderBy(asc(hosts.name), asc(hosts.id))
    .limit(EVIDENCE_MAX_HOSTS + 1);
  // A deleted host by its last known labels; a live host by its labels now.
  const gone = await db
    .select({ id: evidenceHosts.hostId, name: evidenceHosts.name, labels: evidenceHosts.labels })
    .from(evidenceHosts)
    .where(
      and(
        selectorSql(evidenceHosts.labels, selector),
        notInArray(evidenceHosts.hostId, db.select({ id: hosts.id }).from(hosts)),
      ),
    )
    .orderBy(asc(evidenceHosts.name), asc(evidenceHosts.hostId))
    .limit(EVIDENCE_MAX_HOSTS + 1);
  const all = [
    ...current.map((row) => ({ ...row, deleted: false })),
    ...gone.map((row) => ({ ...row, createdAt: undefined, deleted: true })),
  ];
  if (all.length > EVIDENCE_MAX_HOSTS) {
    throw invalid(`selector: matches more than ${EVIDENCE_MAX_HOSTS} hosts; narrow it`, [
      { field: "selector", message: `matches more than ${EVIDENCE_MAX_HOSTS} hosts; narrow it` },
    ]);
  }
  return all;
}

function byHost<T extends { hostId: string }>(rows: readonly T[]): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const row of rows) {
    const list = map.get(row.hostId);
    if (list) {
      list.push(row);
    } else {
      map.set(row.hostId, [row]);
    }
  }
  return map;
}

export async function evidenceReport(db: Database, query: EvidenceQuery): Promise<EvidenceReport> {
  const days = dayRange(query.from, query.to);
  const index = new Map(days.map((day, i) => [day, i]));
  const listed = await reportedHosts(db, query.selector);
  const ids = listed.map((host) => host.id);
  const report: EvidenceReport = {
    from: query.from,
    to: query.to,
    days,
    hosts: [],
    totals: { hosts: listed.length, group_days: 0, covered: 0, gaps: 0 },
  };
  if (ids.length === 0) {
    return report;
  }
  const wanted = query.groups && query.groups.length > 0 ? new Set(query.groups) : undefined;
  const groupRows = await db
    .select({ hostId: sourceGroups.hostId, name: sourceGroups.name, createdAt: sourceGroups.createdAt })
    .from(sourceGroups)
    .where(inArray(sourceGroups.hostId, ids));
  const inRange = await db
    .select({
      hostId: evidenceDays.hostId,
      day: evidenceDays.day,
      kind: evidenceDays.kind,
      subject: evidenceDays.subject,
      runs: evidenceDays.runs,
      lastPassed: evidenceDays.lastPassed,
    })
    .from(evidenceDays)
    .where(and(inArray(evidenceDays.hostId, ids), between(evidenceDays.day, query.from, query.to)));
  // The last check and drill before the range carry into its first days.
  const before = await db
    .selectDistinctOn([evidenceDays.hostId, evidenceDays.kind], {
      hostId: evidenceDays.hostId,
      kind: evidenceDays.kind,
      lastPassed: evidenceDays.lastPassed,
    })
    .from(evidenceDays)
    .where(
      and(
        inArray(evidenceDays.hostId, ids),
        inArray(evidenceDays.kind, ["check", "drill"]),
        lt(evidenceDays.day, query.from),
      ),
    )
    .orderBy(evidenceDays.hostId, evidenceDays.kind, sql`${evidenceDays.day} desc`);
  const firstSeen = await db
    .select({
      hostId: evidenceDays.hostId,
      subject: evidenceDays.subject,
      first: sql<string>`min(${evidenceDays.day})::text`,
    })
    .from(evidenceDays)
    .where(and(inArray(evidenceDays.hostId, ids), eq(evidenceDays.kind, "snapshot")))
    .groupBy(evidenceDays.hostId, evidenceDays.subject);

  const groupsOf = byHost(groupRows);
  const rowsOf = byHost(inRange);
  const firstOf = byHost(firstSeen);
  const beforeOf = byHost(before);
  for (const host of listed) {
    // Each group's first day: when it was made or first snapshotted, whichever is earlier.
    const starts = new Map<string, string>();
    for (const row of groupsOf.get(host.id) ?? []) {
      starts.set(row.name, utcDay(row.createdAt));
    }
    for (const row of (firstOf.get(host.id) ?? []).filter((f) => f.subject !== "")) {
      const made = starts.get(row.subject);
      starts.set(row.subject, made === undefined || row.first < made ? row.first : made);
    }
    const rows = rowsOf.get(host.id) ?? [];
    const groups: GroupEvidence[] = [...starts.entries()]
      .filter(([name]) => wanted === undefined || wanted.has(name))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, start]) => {
        const snapshots = days.map(() => 0);
        for (const row of rows) {
          const i = index.get(row.day);
          if (row.kind === "snapshot" && row.subject === name && i !== undefined) {
            snapshots[i] = row.runs;
          }
        }
        const marks: DayMark[] = days.map((day, i) =>
          (snapshots[i] as number) > 0 ? "yes" : day < start ? "not yet" : "no",
        );
        return { name, days: marks, snapshots, gaps: gapsOf(days, marks) };
      });
    const results = (kind: "check" | "drill"): ResultMark[] => {
      const carried = (beforeOf.get(host.id) ?? []).find((row) => row.kind === kind);
      let last: ResultMark = carried === undefined ? "none" : carried.lastPassed ? "passed" : "failed";
      const byDay = new Map(
        rows
          .filter((row) => row.kind === kind)
          .map((row) => [row.day, row.lastPassed ? "passed" : "failed"] as const),
      );
      return days.map((day) => {
        last = byDay.get(day) ?? last;
        return last;
      });
    };
    for (const group of groups) {
      for (const mark of group.days) {
        if (mark !== "not yet") {
          report.totals.group_days += 1;
          report.totals.covered += mark === "yes" ? 1 : 0;
        }
      }
      report.totals.gaps += group.gaps.length;
    }
    report.hosts.push({
      host_id: host.id,
      name: host.name,
      deleted: host.deleted,
      labels: host.labels as Labels,
      groups,
      check: results("check"),
      drill: results("drill"),
    });
  }
  return report;
}

function csvCell(value: string | number): string {
  const text = String(value);
  // A leading =, +, - or @ would be a formula in a spreadsheet: quoted with a leading apostrophe.
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) || safe !== text ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const EVIDENCE_CSV_HEADER = [
  "day",
  "host",
  "host_id",
  "deleted",
  "group",
  "snapshot",
  "snapshots",
  "last_check",
  "last_drill",
] as const;

/** One line per host, group and day (a host with no group: one line per day, group empty). */
export function evidenceCsv(report: EvidenceReport): string {
  const lines = [EVIDENCE_CSV_HEADER.join(",")];
  for (const host of report.hosts) {
    const groups = host.groups.length > 0 ? host.groups : [undefined];
    for (const group of groups) {
      report.days.forEach((day, i) => {
        lines.push(
          [
            day,
            host.name,
            host.host_id,
            host.deleted ? "yes" : "no",
            group?.name ?? "",
            group?.days[i] ?? "",
            group?.snapshots[i] ?? 0,
            host.check[i] as string,
            host.drill[i] as string,
          ]
            .map(csvCell)
            .join(","),
        );
      });
    }
  }
  return `${lines.join("\r\n")}\r\n`;
}
