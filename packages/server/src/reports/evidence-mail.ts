/**
 * @module reports/evidence-mail
 * A scheduled evidence report as a mail (issue 39.3): the verdict in the subject, the totals and
 * the hosts with gaps or failed checks and drills in the body (the first REPORT_MAIL_HOSTS by
 * name; the rest is one link away), and the whole report as the CSV the API serves, attached
 * while it stays under REPORT_ATTACHMENT_MAX_BYTES (else the mail links to it).
 */
import type { QueuedNotification } from "@fleetback/db";
import { evidenceFileName } from "../evidence/evidence-query.js";
import { type EvidenceQuery, type EvidenceReport, evidenceCsv } from "../evidence/evidence-report.js";
import { mailHtml } from "../notifications/mail-html.js";

export const REPORT_MAIL_HOSTS = 25;
/** A mail server's usual limit is 10–25 MiB; a CSV past this goes as a link. */
export const REPORT_ATTACHMENT_MAX_BYTES = 5 * 1024 * 1024;

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

interface HostLine {
  name: string;
  text: string;
}

/** Hosts a reader must look at: a gap in some group, or a failed last check or drill on some day. */
function troubled(report: EvidenceReport): HostLine[] {
  const lines: HostLine[] = [];
  for (const host of report.hosts) {
    const gaps = host.groups.flatMap((group) =>
      group.gaps.map((gap) => `${group.name} ${gap.from === gap.to ? gap.from : `${gap.from} to ${gap.to}`}`),
    );
    const checks = host.check.filter((mark) => mark === "failed").length;
    const drills = host.drill.filter((mark) => mark === "failed").length;
    const parts = [
      ...(host.groups.length === 0 ? ["no group backed up"] : []),
      ...(gaps.length > 0 ? [`gaps: ${gaps.join("; ")}`] : []),
      ...(checks > 0 ? [`last check failed on ${plural(checks, "day")}`] : []),
      ...(drills > 0 ? [`last drill failed on ${plural(drills, "day")}`] : []),
    ];
    if (parts.length > 0) {
      lines.push({
        name: host.name,
        text: `${host.name}${host.deleted ? " (deleted)" : ""}: ${parts.join(", ")}`,
      });
    }
  }
  return lines.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function reportQueryString(query: {
  from: string;
  to: string;
  selector: string;
  groups: string;
}): string {
  return new URLSearchParams({
    from: query.from,
    to: query.to,
    ...(query.selector ? { selector: query.selector } : {}),
    ...(query.groups ? { groups: query.groups } : {}),
  }).toString();
}

export function reportNotification(input: {
  scheduleName: string;
  recipients: string[];
  report: EvidenceReport;
  query: EvidenceQuery;
  selector: string;
  groups: string;
  baseUrl: string;
  sentAt: Date;
}): QueuedNotification {
  const { report } = input;
  const qs = reportQueryString({
    from: report.from,
    to: report.to,
    selector: input.selector,
    groups: input.groups,
  });
  const link = `${input.baseUrl}/reports/evidence?${qs}`;
  const csvLink = `${input.baseUrl}/api/reports/evidence.csv?${qs}`;
  const t = report.totals;
  const problems = troubled(report);
  const verdict =
    problems.length === 0
      ? "every host covered every day"
      : `${plural(problems.length, "host")} with gaps or failures`;
  const title = `Evidence ${report.from} to ${report.to}: ${plural(t.hosts, "host")}, ${verdict}`;
  const csv = evidenceCsv(report);
  const attach = Buffer.byteLength(csv) <= REPORT_ATTACHMENT_MAX_BYTES;
  const lines = [
    `Evidence report "${input.scheduleName}" for ${report.from} to ${report.to} (UTC days)${
      input.selector ? `, hosts matching ${input.selector}` : ""
    }${input.groups ? `, groups ${input.groups}` : ""}.`,
    `${plural(t.hosts, "host")}; ${t.covered} of ${t.group_days} group-days had a snapshot; ${plural(t.gaps, "gap")}.`,
    ...(problems.length === 0
      ? ["No gaps, and no failed check or drill."]
      : problems.slice(0, REPORT_MAIL_HOSTS).map((line) => line.text)),
    ...(problems.length > REPORT_MAIL_HOSTS
      ? [`And ${plural(problems.length - REPORT_MAIL_HOSTS, "more host")}: see the report.`]
      : []),
    attach
      ? `The whole report, one line per host, group and day, is attached as ${evidenceFileName(input.query)}.`
      : `The whole report is too large to attach; download it (signed in) from ${csvLink}`,
  ];
  const [first, second, ...rest] = lines;
  const html = mailHtml({
    title,
    allWell: problems.length === 0,
    paragraphs: [first ?? "", second ?? ""],
    items: rest,
    link,
    linkText: "The report in Fleetback",
  });
  return {
    title,
    body: lines.join("\n"),
    link,
    html,
    to: input.recipients,
    ...(attach
      ? { attachment: { filename: evidenceFileName(input.query), contentType: "text/csv", content: csv } }
      : {}),
    data: {
      event: "report",
      sent_at: input.sentAt.toISOString(),
      url: link,
      schedule: input.scheduleName,
      from: report.from,
      to: report.to,
      totals: t,
      hosts_with_problems: problems.length,
    },
  };
}

/** The mail sent when the report could not be built: the schedule still says something. */
export function reportFailureNotification(input: {
  scheduleName: string;
  recipients: string[];
  from: string;
  to: string;
  reason: string;
  baseUrl: string;
  sentAt: Date;
}): QueuedNotification {
  const title = `Evidence ${input.from} to ${input.to}: the report could not be built`;
  const body = `The scheduled evidence report "${input.scheduleName}" could not be built: ${input.reason}. Change the schedule's selector or groups on the Notifications page.`;
  const link = `${input.baseUrl}/settings/notifications`;
  return {
    title,
    body,
    link,
    to: input.recipients,
    data: {
      event: "report",
      sent_at: input.sentAt.toISOString(),
      url: link,
      schedule: input.scheduleName,
      error: input.reason,
    },
  };
}
