import { describe, expect, it } from "vitest";
import { backupCharts, escapeXml, renderLineChart, seriesColour, timeTicks } from "./chart.js";

const at = (day: number, hour = 0) => new Date(Date.UTC(2026, 10, day, hour));

function tickLabels(svg: string): string[] {
  return [...svg.matchAll(/<text class="chart-tick"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1] ?? "");
}

describe("backup charts", () => {
  it("draws the repository size from the range's start, leaving days before the first figure empty (issue 35)", () => {
    const sizes = [
      { day: "2026-11-20", storedBytes: 1024 },
      { day: "2026-11-21", storedBytes: 2048 },
    ];
    const narrow = backupCharts([], sizes).repositorySize.svg;
    const ranged = backupCharts([], sizes, { from: at(1), to: at(21) }).repositorySize.svg;
    // Without the range the axis starts at the first figure; with it, at the range's first days.
    expect(tickLabels(narrow).every((label) => /(^|-)(11-2[01])/.test(label))).toBe(true);
    expect(tickLabels(ranged).some((label) => /(^|-)11-0[1-5]/.test(label))).toBe(true);
    // One line, from the first figure: no point is made up for the days before it.
    const path = /<path [^>]*d="M([0-9.]+)/.exec(ranged);
    const axis = /<line x1="([0-9.]+)"/.exec(ranged);
    expect(Number(path?.[1])).toBeGreaterThan(Number(axis?.[1]) + 100);
    // The stretch before it says it has no figure; without a range there is no such stretch.
    expect(ranged).toContain(">no data before 2026-11-20</text>");
    expect(narrow).not.toContain("no data before");
  });

  it("draws data added and duration per source group, escaped, and the repository size per day", () => {
    const evil = `<script>alert("x")</script> & co`;
    const { dataAdded, duration, repositorySize } = backupCharts(
      [
        { group: "etc", finishedAt: at(1), dataAdded: 1024, durationSeconds: 30 },
        { group: "etc", finishedAt: at(2), dataAdded: 2048, durationSeconds: 45 },
        { group: evil, finishedAt: at(1), dataAdded: 4096, durationSeconds: 90 },
        { group: "home", finishedAt: at(3), dataAdded: undefined, durationSeconds: 10 },
      ],
      [
        { day: "2026-11-01", storedBytes: 10 * 1024 * 1024 },
        { day: "2026-11-02", storedBytes: 12 * 1024 * 1024 },
      ],
    );
    expect(dataAdded.svg.match(/<path /g)).toHaveLength(2);
    expect(duration.svg.match(/<path /g)).toHaveLength(3);
    expect(repositorySize.svg.match(/<path /g)).toHaveLength(1);
    for (const svg of [dataAdded.svg, duration.svg, repositorySize.svg]) {
      expect(svg.startsWith("<svg ")).toBe(true);
      expect(svg).not.toContain("<script>");
      expect(svg).not.toContain("style=");
      // The tooltips print moments as every page does (the year only when it is not this one).
      expect(svg).toMatch(/ · 1 Nov(?: 2026)?, 00:00 UTC · /);
    }
    expect(dataAdded.svg).toContain(escapeXml(evil));
    expect(dataAdded.svg).toContain("4.00 KiB");
    expect(dataAdded.svg).toContain("0 B");
    expect(duration.svg).toContain("1 min 30 s");
    expect(repositorySize.svg).toContain("12.0 MiB");
    // The page draws the legends: one entry per series, with the colour of its line.
    expect(dataAdded.legend.map((entry) => entry.name)).toEqual(
      [evil, "etc"].sort((a, b) => a.localeCompare(b)),
    );
    expect(duration.legend.find((entry) => entry.name === "home")?.colour).toBe(seriesColour("home"));
  });

  it("keeps a group's colour whatever other groups exist", () => {
    const alone = backupCharts([{ group: "home", finishedAt: at(1), dataAdded: 1, durationSeconds: 1 }]);
    const crowded = backupCharts(
      ["aaa", "bbb", "home", "zzz"].map((group) => ({
        group,
        finishedAt: at(1),
        dataAdded: 1,
        durationSeconds: 1,
      })),
    );
    const colourOf = (svg: string) => /data-series="home"[^>]*stroke="(#[0-9a-f]{6})"/.exec(svg)?.[1];
    expect(colourOf(alone.dataAdded.svg)).toBe(seriesColour("home"));
    expect(colourOf(crowded.dataAdded.svg)).toBe(seriesColour("home"));
    expect(colourOf(crowded.duration.svg)).toBe(seriesColour("home"));
    expect(new Set(["etc", "home", "srv", "db"].map(seriesColour)).size).toBeGreaterThan(1);
  });

  it("labels the time axis with distinct dates, or times within a day, never one label twice", () => {
    // Many backups a day over three days: the old chart printed the first and last day only;
    // these must be distinct labels on whole days.
    const points = [1, 2, 3].flatMap((day) =>
      [0, 6, 12, 18].map((hour) => ({ at: at(day, hour), value: hour })),
    );
    const days = tickLabels(renderLineChart([{ name: "a", points }], { title: "t", format: String }));
    expect(days.length).toBeGreaterThanOrEqual(2);
    expect(new Set(days).size).toBe(days.length);
    expect(days).toContain("2026-11-02");
    // Within one day: hours, still distinct.
    const hours = timeTicks(at(5, 1).getTime(), at(5, 9).getTime()).map((tick) => tick.label);
    expect(hours.length).toBeGreaterThanOrEqual(2);
    expect(new Set(hours).size).toBe(hours.length);
    expect(hours.every((label) => /^\d\d:\d\d$/.test(label))).toBe(true);
    // A long span: at most five dates.
    const year = timeTicks(at(1).getTime(), at(1).getTime() + 400 * 86_400_000).map((tick) => tick.label);
    expect(year.length).toBeLessThanOrEqual(5);
    expect(new Set(year).size).toBe(year.length);
  });

  it("says there is no data instead of drawing empty axes", () => {
    const svg = renderLineChart([], { title: "t", format: String });
    expect(svg).toContain("No data yet");
    expect(svg).not.toContain("<path");
    expect(backupCharts([]).repositorySize.svg).toContain("No data yet");
  });

  it("places a single point in the middle without dividing by zero", () => {
    const svg = renderLineChart([{ name: "a", points: [{ at: at(1), value: 0 }] }], {
      title: "t",
      format: String,
    });
    expect(svg).not.toMatch(/NaN|Infinity/);
    expect(tickLabels(svg)).toEqual(["2026-11-01"]);
  });
});
