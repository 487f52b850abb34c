/**
 * @module snapshots/chart
 * Server-rendered SVG line charts (no chart library, no client code). The CSP
 * forbids style attributes, so colours are SVG presentation attributes and classes of app.css.
 * Every text that comes from an operator (group names) is XML-escaped.
 */
import { formatBytes, formatDuration } from "@fleetback/web";

export interface ChartPoint {
  at: Date;
  value: number;
}

export interface ChartSeries {
  name: string;
  points: ChartPoint[];
}

export interface ChartOptions {
  title: string;
  /** Formats a y value for the axis labels. */
  format: (value: number) => string;
  width?: number;
  height?: number;
}

/** Distinguishable in light and dark themes; the series index picks one, cycling. */
const PALETTE = ["#1e88e5", "#e53935", "#43a047", "#fb8c00", "#8e24aa", "#00897b", "#6d4c41", "#c0ca33"];

export function escapeXml(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

const round = (value: number) => Math.round(value * 10) / 10;
const day = (date: Date) => date.toISOString().slice(0, 10);

export function renderLineChart(series: readonly ChartSeries[], options: ChartOptions): string {
  const width = options.width ?? 640;
  const height = options.height ?? 240;
  const left = 72;
  const right = 12;
  const top = 24;
  const bottom = 40;
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const title = escapeXml(options.title);
  const all = series.flatMap((s) => s.points);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="${title}">`,
    `<title>${title}</title>`,
  ];
  if (all.length === 0) {
    parts.push(
      `<text x="${width / 2}" y="${height / 2}" text-anchor="middle" class="chart-empty" fill="currentColor">No data yet</text>`,
      "</svg>",
    );
    return parts.join("");
  }
  const times = all.map((p) => p.at.getTime());
  const minT = Math.min(...times);
  const maxT = Math.max(...times);
  const maxV = Math.max(...all.map((p) => p.value), 0) || 1;
  const x = (at: Date) =>
    round(left + (maxT === minT ? plotWidth / 2 : ((at.getTime() - minT) / (maxT - minT)) * plotWidth));
  const y = (value: number) => round(top + plotHeight - (value / maxV) * plotHeight);

  // Axes and labels: 0 and the maximum on y, first and last day on x.
  parts.push(
    `<g class="chart-axis" stroke="currentColor" stroke-width="1" fill="none">`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}"/>`,
    `<line x1="${left}" y1="${top + plotHeight}" x2="${left + plotWidth}" y2="${top + plotHeight}"/>`,
    "</g>",
    `<g class="chart-labels" fill="currentColor" font-size="11">`,
    `<text x="${left - 6}" y="${top + 4}" text-anchor="end">${escapeXml(options.format(maxV))}</text>`,
    `<text x="${left - 6}" y="${top + plotHeight}" text-anchor="end">${escapeXml(options.format(0))}</text>`,
    `<text x="${left}" y="${height - bottom + 16}" text-anchor="start">${day(new Date(minT))}</text>`,
    `<text x="${left + plotWidth}" y="${height - bottom + 16}" text-anchor="end">${day(new Date(maxT))}</text>`,
    "</g>",
  );
  series.forEach((s, index) => {
    const colour = PALETTE[index % PALETTE.length] ?? "currentColor";
    const points = [...s.points].sort((a, b) => a.at.getTime() - b.at.getTime());
    const d = points.map((p, i) => `${i === 0 ? "M" : "L"}${x(p.at)},${y(p.value)}`).join(" ");
    const name = escapeXml(s.name);
    parts.push(
      `<path class="chart-line" data-series="${name}" d="${d}" fill="none" stroke="${colour}" stroke-width="2"><title>${name}</title></path>`,
    );
    for (const p of points) {
      parts.push(`<circle cx="${x(p.at)}" cy="${y(p.value)}" r="2.5" fill="${colour}"/>`);
    }
  });
  // Legend below the x labels, one entry per series.
  series.forEach((s, index) => {
    const colour = PALETTE[index % PALETTE.length] ?? "currentColor";
    const lx = left + (index % 4) * 140;
    const ly = height - 8;
    parts.push(
      `<g class="chart-legend" font-size="11"><rect x="${lx}" y="${ly - 9}" width="10" height="10" fill="${colour}"/>`,
      `<text x="${lx + 14}" y="${ly}" fill="currentColor">${escapeXml(s.name)}</text></g>`,
    );
  });
  parts.push("</svg>");
  return parts.join("");
}

export interface BackupRun {
  group: string;
  finishedAt: Date;
  bytes: number | undefined;
  durationSeconds: number | undefined;
}

/** Groups backup runs into one series per source group, for the size and duration charts. */
export function backupCharts(runs: readonly BackupRun[]): { size: string; duration: string } {
  const bySize = new Map<string, ChartPoint[]>();
  const byDuration = new Map<string, ChartPoint[]>();
  for (const run of runs) {
    if (run.bytes !== undefined) {
      bySize.set(run.group, [...(bySize.get(run.group) ?? []), { at: run.finishedAt, value: run.bytes }]);
    }
    if (run.durationSeconds !== undefined) {
      byDuration.set(run.group, [
        ...(byDuration.get(run.group) ?? []),
        { at: run.finishedAt, value: run.durationSeconds },
      ]);
    }
  }
  const toSeries = (map: Map<string, ChartPoint[]>) =>
    [...map].sort(([a], [b]) => a.localeCompare(b)).map(([name, points]) => ({ name, points }));
  return {
    size: renderLineChart(toSeries(bySize), { title: "Backup size per source group", format: formatBytes }),
    duration: renderLineChart(toSeries(byDuration), {
      title: "Backup duration per source group",
      format: formatDuration,
    }),
  };
}
