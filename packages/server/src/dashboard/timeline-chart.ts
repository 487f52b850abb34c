/**
 * @module dashboard/timeline-chart
 * The dashboard's job timeline as server-rendered SVG: one lane per host, one bar per job from
 * its start to its end (running jobs to now), coloured by outcome, each with a tooltip. The lane
 * runs on past now (AHEAD_MINUTES) so the last hour's jobs are not pressed against the edge, and
 * bars that would overlap at their shortest drawn width go to a track below, so several jobs run
 * close together today stay several bars, each with its own tooltip. The outer
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
const AXIS_HEIGHT = 20;
/** The shortest bar drawn, in minutes of the 24 h lane: a one-second job is a bar one can point at. */
export const MIN_BAR_MINUTES = 12;
/** Room after now, so jobs of the last minutes are drawn in full rather than against the edge. */
export const AHEAD_MINUTES = 180;
/** Tracks a lane grows to for overlapping bars; beyond that, bars share the last one. */
const MAX_TRACKS = 4;

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

interface PlacedBar {
  job: TimelineJob;
  x: number;
  width: number;
  track: number;
}

/** Minutes of the window: 24 h before now, and the room after it. */
function laneMinutes(timeline: JobTimeline): { past: number; all: number } {
  const past = (timeline.to.getTime() - timeline.from.getTime()) / 60_000;
  return { past, all: past + AHEAD_MINUTES };
}

/** Each job's bar in minutes of the lane, on the first track where it overlaps no other bar. */
function placeBars(host: TimelineHost, timeline: JobTimeline): PlacedBar[] {
  const from = timeline.from.getTime();
  const { past, all } = laneMinutes(timeline);
  const scale = (at: number) => Math.min(past, Math.max(0, (at - from) / 60_000));
  const trackEnds: number[] = [];
  return host.jobs.map((job) => {
    const start = scale(job.startedAt.getTime());
    const end = scale((job.finishedAt ?? timeline.to).getTime());
    const width = Math.max(MIN_BAR_MINUTES, end - start);
    const x = Math.min(start, all - width);
    let track = trackEnds.findIndex((trackEnd) => trackEnd <= x);
    if (track < 0) {
      track = Math.min(trackEnds.length, MAX_TRACKS - 1);
    }
    trackEnds[track] = Math.max(trackEnds[track] ?? 0, x + width);
    return { job, x, width, track };
  });
}

function tracksOf(bars: PlacedBar[]): number {
  return Math.max(1, ...bars.map((bar) => bar.track + 1));
}

function lane(bars: PlacedBar[], timeline: JobTimeline, timeZone: string, y: number): string {
  const { past, all } = laneMinutes(timeline);
  const height = tracksOf(bars) * LANE_HEIGHT;
  const rects = bars.map(({ job, x, width, track }) => {
    const colour = OUTCOME_COLOURS[job.status];
    return (
      `<rect class="timeline-bar" data-job-id="${escapeXml(job.id)}" data-status="${job.status}" x="${round(x)}" y="${track * LANE_HEIGHT}" width="${round(width)}" height="${LANE_HEIGHT - 2}" fill="${colour}">` +
      `<title>${escapeXml(jobTooltip(job, timeline.to, timeZone))}</title></rect>`
    );
  });
  return (
    `<svg x="0" y="${y}" width="100%" height="${height}" viewBox="0 0 ${round(all)} ${height}" preserveAspectRatio="none">` +
    `<rect class="timeline-lane" x="0" y="0" width="${round(past)}" height="${height}" fill="currentColor" fill-opacity="0.08"/>` +
    rects.join("") +
    "</svg>"
  );
}

/** The SVG of the timeline; an empty fleet gets a sentence instead of empty lanes. */
export function renderJobTimeline(timeline: JobTimeline, options: { timeZone: string }): string {
  const rows = timeline.hosts.length;
  const placed = timeline.hosts.map((host) => placeBars(host, timeline));
  const rowHeights = placed.map((bars) => LABEL_HEIGHT + tracksOf(bars) * LANE_HEIGHT + ROW_GAP);
  const lanesHeight = rowHeights.reduce((sum, h) => sum + h, 0);
  const height = AXIS_HEIGHT + Math.max(LABEL_HEIGHT + LANE_HEIGHT + ROW_GAP, lanesHeight);
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
  // Hour marks every 6 h, as lines across every lane and labels at the top; now is a firmer line.
  const { all } = laneMinutes(timeline);
  const hours = all / 60;
  const ticks = [0, 6, 12, 18, 24];
  const percent = (hour: number) => round((hour / hours) * 100);
  parts.push(`<g class="timeline-axis" fill="currentColor" font-size="12">`);
  // "18 h ago" would touch "24 h ago" on a phone; its line stays, its label goes.
  for (const hour of ticks.filter((tick) => tick !== 6)) {
    const anchor = hour === 0 ? "start" : "middle";
    const text = hour === 24 ? "now" : `${24 - hour} h ago`;
    parts.push(`<text x="${percent(hour)}%" y="13" text-anchor="${anchor}">${text}</text>`);
  }
  parts.push("</g>");
  parts.push(
    `<svg x="0" y="${AXIS_HEIGHT}" width="100%" height="${lanesHeight}" viewBox="0 0 ${round(hours)} ${lanesHeight}" preserveAspectRatio="none" aria-hidden="true">`,
    ...ticks.map(
      (hour) =>
        `<line class="${hour === 24 ? "timeline-now" : "timeline-tick"}" x1="${hour}" y1="0" x2="${hour}" y2="${lanesHeight}" stroke="currentColor" stroke-opacity="${hour === 24 ? 0.6 : 0.2}" vector-effect="non-scaling-stroke"/>`,
    ),
    "</svg>",
  );
  let top = AXIS_HEIGHT;
  timeline.hosts.forEach((host, index) => {
    const bars = placed[index] ?? [];
    const problem = host.overdue || host.failing || host.failedJobs;
    parts.push(
      `<g class="timeline-row" data-host-id="${escapeXml(host.id)}">`,
      `<a href="/hosts/${encodeURIComponent(host.id)}"><text x="0" y="${top + LABEL_HEIGHT - 4}" font-size="13" fill="currentColor"${problem ? ' font-weight="600"' : ""}>${escapeXml(host.name)}<tspan fill-opacity="0.7" font-weight="400"> · ${escapeXml(hostNote(host))}</tspan></text></a>`,
      lane(bars, timeline, options.timeZone, top + LABEL_HEIGHT),
      "</g>",
    );
    top += rowHeights[index] ?? 0;
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
