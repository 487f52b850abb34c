import { describe, expect, it } from "vitest";
import { backupCharts, escapeXml, renderLineChart } from "./chart.js";

const at = (day: number) => new Date(Date.UTC(2026, 10, day));

describe("backup charts", () => {
  it("draws one path per source group, with axis labels and escaped group names", () => {
    const evil = `<script>alert("x")</script> & co`;
    const { size, duration } = backupCharts([
      { group: "etc", finishedAt: at(1), bytes: 1024, durationSeconds: 30 },
      { group: "etc", finishedAt: at(2), bytes: 2048, durationSeconds: 45 },
      { group: evil, finishedAt: at(1), bytes: 4096, durationSeconds: 90 },
      { group: "home", finishedAt: at(3), bytes: undefined, durationSeconds: 10 },
    ]);
    expect(size.match(/<path /g)).toHaveLength(2);
    expect(duration.match(/<path /g)).toHaveLength(3);
    for (const svg of [size, duration]) {
      expect(svg.startsWith("<svg ")).toBe(true);
      expect(svg).not.toContain("<script>");
      expect(svg).toContain(escapeXml(evil));
      expect(svg).not.toContain("style=");
      expect(svg).toContain("2026-11-01");
    }
    expect(size).toContain("4.00 KiB");
    expect(size).toContain("0 B");
    expect(duration).toContain("1 min 30 s");
  });

  it("says there is no data instead of drawing empty axes", () => {
    const svg = renderLineChart([], { title: "t", format: String });
    expect(svg).toContain("No data yet");
    expect(svg).not.toContain("<path");
  });

  it("places a single point in the middle without dividing by zero", () => {
    const svg = renderLineChart([{ name: "a", points: [{ at: at(1), value: 0 }] }], {
      title: "t",
      format: String,
    });
    expect(svg).not.toMatch(/NaN|Infinity/);
  });
});
