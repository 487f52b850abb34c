/**
 * @module health/timeline-chart
 * The dashboard's job timeline as server-rendered SVG: one lane per host, one bar per job from
 * its start to its end (running jobs to now), coloured by outcome, each with a tooltip. The outer
 * SVG has no viewBox and is as wide as the page, so its text keeps its size on a phone and on a
 * desktop alike; each lane is a nested SVG in minutes (0 to 1440) stretched to that width. Colours
 * are presentation attributes (the CSP forbids style attributes); operator text is escaped.
 */
import type { JobStatus } from "@fleetback/db";
import { formatDuration, formatTime } from "@fleetback/web";
import { escapeXml } from "../snapshots/chart.js";
import type { JobTimeline, TimelineHost, TimelineJob } from "./job-timeline.js";

/** Colour and legend label per outcome; distinguishable in light and dark themes. */
export const OUTCOME_COLOURS: Readonly<Record<JobStatus, string>> = {
  succeeded: "#43a047",
  failed: "#e53935",
  lost: "#fb8c00",
  cancelled: "#9e9e9e",
  running: "#1e88e5",
  queued: "#90caf9",
};

const LABEL_HEIGHT = 18;
const LANE_HEIGHT = 14;
const ROW_GAP = 8;
const ROW_HEIGHT = LABEL_HEIGHT + LANE_HEIGHT + ROW_GAP;
const AXIS_HEIGHT = 20;
/** The shortest bar drawn, in minutes of the 24 h lane, so a one-second job is still visible. */
const MIN_BAR_MINUTES = 4;

const round = (value: number) => Math.round(value * 100) / 100;

/** The tooltip of one bar: what ran, how it ended, when, and for how long. */
export function jobTooltip(job: TimelineJob, now: Date, timeZone: string): string {
  const end = job.finishedAt ?? now;
  const seconds = Math.max(0, (end.getTime() - job.startedAt.getTime()) / 1000);
  const what = job.groupName ? `${job.kind} ${job.groupName}` : job.kind;
  const until = job.finishedAt ? formatTime(job.finishedAt, timeZone, now) : "now";
  return `${what}: ${job.status}, ${formatTime(job.startedAt, timeZone, now)} – ${until} (${formatDuration(seconds)})`;
}

function hostNote(host: TimelineHost): string {
  const notes = [host.status, ...(host.overdue ? ["overdue"] : []), ...(host.failing ? ["alert open"] : [])];
  return notes.join(", ");
}

function lane(host: TimelineHost, timeline: JobTimeline, timeZone: string, y: number): string {
  const from = timeline.from.getTime();
  const span = timeline.to.getTime() - from;
  const minutes = span / 60_000;
  const scale = (at: number) => Math.min(minutes, Math.max(0, ((at - from) / span) * minutes));
  const bars = host.jobs.map((job) => {
    const start = scale(job.startedAt.getTime());
    const end = scale((job.finishedAt ?? timeline.to).getTime());
    const width = Math.max(MIN_BAR_MINUTES, end - start);
    const x = Math.min(start, minutes - width);
    const colour = OUTCOME_COLOURS[job.status];
    return (
      `<rect class="timeline-bar" data-job-id="${escapeXml(job.id)}" data-status="${job.status}" x="${round(x)}" y="0" width="${round(width)}" height="${LANE_HEIGHT}" fill="${colour}">` +
      `<title>${escapeXml(jobTooltip(job, timeline.to, timeZone))}</title></rect>`
    );
  });
  return (
    `<svg x="0" y="${y}" width="100%" height="${LANE_HEIGHT}" viewBox="0 0 ${round(minutes)} ${LANE_HEIGHT}" preserveAspectRatio="none">` +
    `<rect class="timeline-lane" x="0" y="0" width="${round(minutes)}" height="${LANE_HEIGHT}" fill="currentColor" fill-opacity="0.08"/>` +
    bars.join("") +
    "</svg>"
  );
}

/** The SVG of the timeline; an empty fleet gets a sentence instead of empty lanes. */
export function renderJobTimeline(timeline: JobTimeline, options: { timeZone: string }): string {
  const rows = timeline.hosts.length;
  const height = AXIS_HEIGHT + Math.max(1, rows) * ROW_HEIGHT;
  const label = `Jobs of the last 24 hours, one row per host (${rows} of ${timeline.totalHosts} hosts)`;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="100%" height="${height}" role="img" aria-label="${escapeXml(label)}" data-testid="timeline-svg">`,
    `<title>${escapeXml(label)}</title>`,
  ];
  if (rows === 0) {
    parts.push(
      `<text x="50%" y="${height / 2}" text-anchor="middle" fill="currentColor">No hosts yet</text></svg>`,
    );
    return parts.join("");
  }
  // Hour marks every 6 h, as lines across every lane and labels at the top.
  const ticks = [0, 6, 12, 18, 24];
  parts.push(`<g class="timeline-axis" fill="currentColor" font-size="12">`);
  for (const hour of ticks) {
    const anchor = hour === 0 ? "start" : hour === 24 ? "end" : "middle";
    const text = hour === 24 ? "now" : `${24 - hour} h ago`;
    parts.push(`<text x="${round((hour / 24) * 100)}%" y="13" text-anchor="${anchor}">${text}</text>`);
  }
  parts.push("</g>");
  parts.push(
    `<svg x="0" y="${AXIS_HEIGHT}" width="100%" height="${rows * ROW_HEIGHT}" viewBox="0 0 24 ${rows * ROW_HEIGHT}" preserveAspectRatio="none" aria-hidden="true">`,
    ...ticks.map(
      (hour) =>
        `<line x1="${hour}" y1="0" x2="${hour}" y2="${rows * ROW_HEIGHT}" stroke="currentColor" stroke-opacity="0.2" vector-effect="non-scaling-stroke"/>`,
    ),
    "</svg>",
  );
  timeline.hosts.forEach((host, index) => {
    const top = AXIS_HEIGHT + index * ROW_HEIGHT;
    const problem = host.overdue || host.failing || host.failedJobs;
    parts.push(
      `<g class="timeline-row" data-host-id="${escapeXml(host.id)}">`,
      `<a href="/hosts/${encodeURIComponent(host.id)}"><text x="0" y="${top + LABEL_HEIGHT - 4}" font-size="13" fill="currentColor"${problem ? ' font-weight="600"' : ""}>${escapeXml(host.name)}<tspan fill-opacity="0.7" font-weight="400"> · ${escapeXml(hostNote(host))}</tspan></text></a>`,
      lane(host, timeline, options.timeZone, top + LABEL_HEIGHT),
      "</g>",
    );
  });
  parts.push("</svg>");
  return parts.join("");
}

export interface TimelineSummaryRow {
  host: TimelineHost;
  /** Jobs per outcome, in the legend's order, only outcomes that occurred. */
  counts: Array<{ status: JobStatus; count: number }>;
  /** The jobs worth opening: failed, lost and running ones, newest first, at most five. */
  notable: TimelineJob[];
}

/** The timeline as text, one row per host: the SVG's accessible alternative. */
export function timelineSummary(timeline: JobTimeline): TimelineSummaryRow[] {
  const order = Object.keys(OUTCOME_COLOURS) as JobStatus[];
  return timeline.hosts.map((host) => {
    const counts = new Map<JobStatus, number>();
    for (const job of host.jobs) {
      counts.set(job.status, (counts.get(job.status) ?? 0) + 1);
    }
    return {
      host,
      counts: order.flatMap((status) => {
        const n = counts.get(status);
        return n ? [{ status, count: n }] : [];
      }),
      notable: host.jobs
        .filter((job) => job.status === "failed" || job.status === "lost" || job.status === "running")
        .reverse()
        .slice(0, 5),
    };
  });
}
