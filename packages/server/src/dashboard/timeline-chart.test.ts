import { describe, expect, it } from "vitest";
import type { JobTimeline, TimelineHost, TimelineJob } from "./job-timeline.js";
import {
  AHEAD_MINUTES,
  jobTooltip,
  MIN_BAR_MINUTES,
  OUTCOME_COLOURS,
  renderJobTimeline,
  timelineSummary,
} from "./timeline-chart.js";

const NOW = new Date("2026-11-21T12:00:00Z");
const FROM = new Date("2026-11-20T12:00:00Z");
const at = (hoursAgo: number) => new Date(NOW.getTime() - hoursAgo * 3_600_000);

function job(id: string, fields: Partial<TimelineJob>): TimelineJob {
  return {
    id,
    kind: "backup",
    status: "succeeded",
    groupName: "etc",
    startedAt: at(2),
    finishedAt: at(1),
    ...fields,
  };
}

function host(name: string, jobs: TimelineJob[], fields: Partial<TimelineHost> = {}): TimelineHost {
  return {
    id: `id-${name}`,
    name,
    status: "online",
    overdue: false,
    failing: false,
    failedJobs: false,
    jobs,
    ...fields,
  };
}

function timeline(hosts: TimelineHost[], totalHosts = hosts.length): JobTimeline {
  return { from: FROM, to: NOW, hosts, totalHosts };
}

/** A bar's x and width in minutes of the lane (its track: `y`, below the first one). */
function placed(svg: string, jobId: string): { x: number; width: number; fill: string; y: number } {
  const match = new RegExp(
    `data-job-id="${jobId}"[^>]* x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)"[^>]* fill="([^"]+)"`,
  ).exec(svg);
  if (!match) {
    throw new Error(`no bar for ${jobId}`);
  }
  return { x: Number(match[1]), y: Number(match[2]), width: Number(match[3]), fill: match[4] ?? "" };
}

function bar(svg: string, jobId: string): { x: number; width: number; fill: string } {
  const { x, width, fill } = placed(svg, jobId);
  return { x, width, fill };
}

describe("job timeline chart", () => {
  it("draws each job from its start to its end in minutes of the day, running ones to now, coloured by outcome", () => {
    const svg = renderJobTimeline(
      timeline([
        host("web-1", [
          job("done", { startedAt: at(6), finishedAt: at(5) }),
          job("broke", { status: "failed", startedAt: at(3), finishedAt: at(2.5) }),
          job("busy", { status: "running", startedAt: at(0.5), finishedAt: null }),
        ]),
      ]),
      { timeZone: "UTC" },
    );
    expect(bar(svg, "done")).toEqual({ x: 1080, width: 60, fill: OUTCOME_COLOURS.succeeded });
    expect(bar(svg, "broke")).toEqual({ x: 1260, width: 30, fill: OUTCOME_COLOURS.failed });
    expect(bar(svg, "busy")).toEqual({ x: 1410, width: 30, fill: OUTCOME_COLOURS.running });
    expect(svg).toContain("<title>backup etc: running, 21 Nov, 11:30 UTC – now (30 min 0 s)</title>");
    expect(svg).not.toMatch(/style=|NaN|Infinity/);
  });

  it("clips a job that started before the window and keeps a one-second job visible", () => {
    const svg = renderJobTimeline(
      timeline([
        host("db", [
          job("long", { startedAt: at(30), finishedAt: at(23) }),
          job("blink", { startedAt: at(0), finishedAt: new Date(NOW.getTime() + 1_000) }),
        ]),
      ]),
      { timeZone: "UTC" },
    );
    expect(bar(svg, "long")).toEqual({ x: 0, width: 60, fill: OUTCOME_COLOURS.succeeded });
    // A job of this very minute is drawn from now into the room after it, not pushed back.
    expect(bar(svg, "blink")).toEqual({ x: 1440, width: MIN_BAR_MINUTES, fill: OUTCOME_COLOURS.succeeded });
    expect(svg).toContain(`viewBox="0 0 ${1440 + AHEAD_MINUTES} `);
  });

  it("gives several jobs of the last hour each a bar of their own, none hidden under another", () => {
    const minutesAgo = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000);
    const recent = [50, 46, 45, 30, 29, 5, 1].map((ago, index) =>
      job(`r${index}`, {
        status: index === 3 ? "failed" : "succeeded",
        startedAt: minutesAgo(ago),
        finishedAt: minutesAgo(ago - 0.5),
      }),
    );
    const svg = renderJobTimeline(timeline([host("web-1", recent)]), { timeZone: "UTC" });
    const bars = recent.map((j) => placed(svg, j.id));
    for (const one of bars) {
      expect(one.width).toBeGreaterThanOrEqual(MIN_BAR_MINUTES);
      expect(one.x + one.width).toBeLessThanOrEqual(1440 + AHEAD_MINUTES);
    }
    for (const [i, a] of bars.entries()) {
      for (const b of bars.slice(i + 1)) {
        const overlap = a.y === b.y && a.x < b.x + b.width && b.x < a.x + a.width;
        expect(overlap).toBe(false);
      }
    }
    // Each bar starts where its job started: no bar was moved left to fit before now.
    expect(bars.map((b) => b.x)).toEqual([1390, 1394, 1395, 1410, 1411, 1435, 1439]);
    // "now" is a line inside the chart, with room on its right.
    expect(svg).toMatch(/<text x="88\.89%" y="13" text-anchor="middle">now<\/text>/);
    expect(svg).not.toContain(">18 h ago<");
  });

  it("escapes host and group names, links each host and says why a host is listed", () => {
    const evil = `<script>alert("x")</script>`;
    const svg = renderJobTimeline(
      timeline([
        host(evil, [job("j", { groupName: evil })], { overdue: true, failing: true, status: "offline" }),
      ]),
      { timeZone: "Europe/Berlin" },
    );
    expect(svg).not.toContain("<script>");
    expect(svg).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(svg).toContain(`<a href="/hosts/id-${encodeURIComponent(evil)}">`);
    expect(svg).toContain("offline, overdue, alert open");
    expect(svg).toContain("CET");
  });

  it("says so for an empty fleet and states how many hosts are shown", () => {
    expect(renderJobTimeline(timeline([]), { timeZone: "UTC" })).toContain("No hosts yet");
    const capped = renderJobTimeline(timeline([host("a", [])], 80), { timeZone: "UTC" });
    expect(capped).toContain('aria-label="Jobs of the last 24 hours, one row per host (1 of 80 hosts)"');
  });

  it("summarises each host as text: counts per outcome and the failed, lost or running jobs newest first", () => {
    const rows = timelineSummary(
      timeline([
        host("a", [
          job("1", { status: "failed", startedAt: at(5) }),
          job("2", { startedAt: at(4) }),
          job("3", { status: "lost", startedAt: at(3) }),
          job("4", { status: "running", startedAt: at(1), finishedAt: null }),
        ]),
        host("b", []),
      ]),
    );
    expect(rows[0]?.counts).toEqual([
      { status: "succeeded", count: 1 },
      { status: "failed", count: 1 },
      { status: "lost", count: 1 },
      { status: "running", count: 1 },
    ]);
    expect(rows[0]?.notable.map((j) => j.id)).toEqual(["4", "3", "1"]);
    expect(rows[1]?.counts).toEqual([]);
  });

  it("words a tooltip without a group as the job kind alone", () => {
    expect(jobTooltip(job("x", { kind: "prune", groupName: null }), NOW, "UTC")).toBe(
      "prune: succeeded, 21 Nov, 10:00 UTC – 21 Nov, 11:00 UTC (1 h 0 min)",
    );
  });
});
