/**
 * @module snapshots/chart
 * Server-rendered SVG line charts (no chart library, no client code). The CSP
 * forbids style attributes, so colours are SVG presentation attributes and classes of app.css.
 * Every text that comes from an operator (group names) is XML-escaped.
 */
import { formatBytes, formatDuration, formatTime } from "@fleetback/web";

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
  /** Draw the legend inside the SVG (default); off when the page lists the series itself. */
  legend?: boolean;
  /**
   * The time the x axis spans at least, whatever the points: days before the first figure stay
   * on the chart as a stretch with no line (no data), instead of being left out.
   */
  range?: { from: Date; to: Date };
}

/**
 * Distinguishable in light and dark themes. A series' colour is picked by a hash of its name, so a
 * source group keeps its colour from chart to chart and from day to day, whatever other groups
 * come and go (two groups may share one; the legend and the tooltips tell them apart).
 */
const PALETTE = [
  "#1e88e5",
  "#e53935",
  "#43a047",
  "#fb8c00",
  "#8e24aa",
  "#00897b",
  "#6d4c41",
  "#c0ca33",
  "#d81b60",
  "#3949ab",
  "#f4511e",
  "#00acc1",
];

/** FNV-1a of the name: stable across processes and releases, unlike an insertion order. */
export function seriesColour(name: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return PALETTE[hash % PALETTE.length] ?? "#1e88e5";
}

export function escapeXml(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

const round = (value: number) => Math.round(value * 10) / 10;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Tick spacings, smallest first; the first that gives at most MAX_TICKS ticks is used. */
const STEPS = [
  MINUTE,
  5 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  4 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  3 * DAY,
  4 * DAY,
  7 * DAY,
  10 * DAY,
  14 * DAY,
  30 * DAY,
  91 * DAY,
  182 * DAY,
  365 * DAY,
];
const MAX_TICKS = 5;
/** Axis text in viewBox units: at 390 px a 480-wide chart is drawn at 3/4, so still 12 px. */
const FONT_SIZE = 16;

export interface AxisTick {
  at: number;
  label: string;
}

function tickLabel(at: number, step: number, spansDays: boolean): string {
  const iso = new Date(at).toISOString();
  if (step >= DAY) {
    return iso.slice(0, 10);
  }
  return spansDays ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
}

/**
 * Time ticks between minT and maxT (UTC), on whole minutes, hours or days, at most maxTicks, and
 * never two with the same label: days are written as dates, shorter steps with their time.
 */
export function timeTicks(minT: number, maxT: number, maxTicks = MAX_TICKS): AxisTick[] {
  if (maxT <= minT) {
    return [{ at: minT, label: new Date(minT).toISOString().slice(0, 10) }];
  }
  const span = maxT - minT;
  const step = STEPS.find((candidate) => span / candidate <= maxTicks) ?? span / maxTicks;
  const spansDays = Math.floor(minT / DAY) !== Math.floor(maxT / DAY);
  const ticks: AxisTick[] = [];
  const seen = new Set<string>();
  for (let at = Math.ceil(minT / step) * step; at <= maxT; at += step) {
    const label = tickLabel(at, step, spansDays);
    if (!seen.has(label)) {
      seen.add(label);
      ticks.push({ at, label });
    }
  }
  if (ticks.length === 0) {
    ticks.push({ at: minT, label: tickLabel(minT, Math.min(step, HOUR), spansDays) });
  }
  return ticks;
}

export function renderLineChart(series: readonly ChartSeries[], options: ChartOptions): string {
  const width = options.width ?? 640;
  const legend = options.legend ?? true;
  const legendRows = legend ? Math.ceil(series.length / 3) : 0;
  const height = (options.height ?? 240) + Math.max(0, legendRows - 1) * 18;
  const left = 96;
  const right = 48;
  const top = 16;
  const bottom = 36 + legendRows * 18;
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
      `<text x="${width / 2}" y="${height / 2}" text-anchor="middle" class="chart-empty" fill="currentColor" font-size="${FONT_SIZE}">No data yet</text>`,
      "</svg>",
    );
    return parts.join("");
  }
  const times = all.map((p) => p.at.getTime());
  const bounds = options.range ? [options.range.from.getTime(), options.range.to.getTime()] : [];
  const minT = Math.min(...times, ...bounds);
  const maxT = Math.max(...times, ...bounds);
  const maxV = Math.max(...all.map((p) => p.value), 0) || 1;
  const xOf = (at: number) =>
    round(left + (maxT === minT ? plotWidth / 2 : ((at - minT) / (maxT - minT)) * plotWidth));
  const y = (value: number) => round(top + plotHeight - (value / maxV) * plotHeight);

  // Axes, a light grid at half height, y labels at 0, half and the maximum, distinct time ticks.
  parts.push(
    `<g class="chart-axis" stroke="currentColor" stroke-width="1" fill="none">`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}"/>`,
    `<line x1="${left}" y1="${top + plotHeight}" x2="${left + plotWidth}" y2="${top + plotHeight}"/>`,
    `<line x1="${left}" y1="${y(maxV / 2)}" x2="${left + plotWidth}" y2="${y(maxV / 2)}" stroke-opacity="0.2"/>`,
    `<line x1="${left}" y1="${top}" x2="${left + plotWidth}" y2="${top}" stroke-opacity="0.2"/>`,
    "</g>",
    `<g class="chart-labels" fill="currentColor" font-size="${FONT_SIZE}">`,
  );
  for (const value of [maxV, maxV / 2, 0]) {
    parts.push(
      `<text x="${left - 8}" y="${y(value) + 5}" text-anchor="end">${escapeXml(options.format(value))}</text>`,
    );
  }
  // A date is about 6 em wide: as many ticks as fit without touching, at most MAX_TICKS.
  const fit = Math.max(2, Math.min(MAX_TICKS, Math.floor(plotWidth / (FONT_SIZE * 7))));
  for (const tick of timeTicks(minT, maxT, fit)) {
    const tx = xOf(tick.at);
    parts.push(
      `<line x1="${tx}" y1="${top + plotHeight}" x2="${tx}" y2="${top + plotHeight + 4}" stroke="currentColor"/>`,
      `<text class="chart-tick" x="${tx}" y="${top + plotHeight + 22}" text-anchor="middle">${escapeXml(tick.label)}</text>`,
    );
  }
  parts.push("</g>");
  // The range's days before the first figure: a marked stretch that says so, never a made-up line.
  const firstT = Math.min(...times);
  if (options.range && options.range.from.getTime() < firstT) {
    const x0 = xOf(options.range.from.getTime());
    const x1 = xOf(firstT);
    const day = new Date(firstT).toISOString().slice(0, 10);
    parts.push(
      `<g class="chart-no-data" data-testid="chart-no-data"><rect x="${x0}" y="${top}" width="${round(x1 - x0)}" height="${plotHeight}" fill="currentColor" fill-opacity="0.06"/>`,
      `<text x="${round((x0 + x1) / 2)}" y="${round(top + plotHeight / 2)}" text-anchor="middle" fill="currentColor" fill-opacity="0.75" font-size="${FONT_SIZE}">no data before ${day}</text></g>`,
    );
  }
  for (const s of series) {
    const colour = seriesColour(s.name);
    const points = [...s.points].sort((a, b) => a.at.getTime() - b.at.getTime());
    const d = points.map((p, i) => `${i === 0 ? "M" : "L"}${xOf(p.at.getTime())},${y(p.value)}`).join(" ");
    const name = escapeXml(s.name);
    parts.push(
      `<path class="chart-line" data-series="${name}" d="${d}" fill="none" stroke="${colour}" stroke-width="2.5"><title>${name}</title></path>`,
    );
    for (const p of points) {
      // UTC like the axis: the chart's days are UTC days.
      const tip = `${s.name} · ${formatTime(p.at, "UTC")} · ${options.format(p.value)}`;
      parts.push(
        `<circle cx="${xOf(p.at.getTime())}" cy="${y(p.value)}" r="3.5" fill="${colour}"><title>${escapeXml(tip)}</title></circle>`,
      );
    }
  }
  if (legend) {
    // Three entries a row below the time labels; a long name is cut, its full text in a tooltip.
    series.forEach((s, index) => {
      const lx = left + (index % 3) * Math.floor(plotWidth / 3);
      const ly = top + plotHeight + 40 + Math.floor(index / 3) * 18;
      const label = s.name.length > 22 ? `${s.name.slice(0, 21)}…` : s.name;
      parts.push(
        `<g class="chart-legend" font-size="14"><title>${escapeXml(s.name)}</title><rect x="${lx}" y="${ly - 11}" width="12" height="12" fill="${seriesColour(s.name)}"/>`,
        `<text x="${lx + 16}" y="${ly}" fill="currentColor">${escapeXml(label)}</text></g>`,
      );
    });
  }
  parts.push("</svg>");
  return parts.join("");
}

/** The page's own legend of a chart drawn with `legend: false`. */
export interface LegendEntry {
  name: string;
  colour: string;
}

export function legendOf(series: readonly ChartSeries[]): LegendEntry[] {
  return series.map((s) => ({ name: s.name, colour: seriesColour(s.name) }));
}

export interface BackupRun {
  group: string;
  finishedAt: Date;
  /** The backup's `data_added` (new data written to the repository), if the tool reported it. */
  dataAdded: number | undefined;
  durationSeconds: number | undefined;
}

export interface RepositorySizePoint {
  day: string;
  storedBytes: number;
}

export interface BackupChart {
  svg: string;
  legend: LegendEntry[];
}

export interface BackupCharts {
  dataAdded: BackupChart;
  duration: BackupChart;
  repositorySize: BackupChart;
}

function seriesByGroup(runs: readonly BackupRun[], value: (run: BackupRun) => number | undefined) {
  const byGroup = new Map<string, ChartPoint[]>();
  for (const run of runs) {
    const v = value(run);
    if (v !== undefined) {
      byGroup.set(run.group, [...(byGroup.get(run.group) ?? []), { at: run.finishedAt, value: v }]);
    }
  }
  return [...byGroup].sort(([a], [b]) => a.localeCompare(b)).map(([name, points]) => ({ name, points }));
}

function chart(
  series: ChartSeries[],
  title: string,
  format: (value: number) => string,
  range?: { from: Date; to: Date },
): BackupChart {
  return {
    svg: renderLineChart(series, {
      title,
      format,
      legend: false,
      width: 480,
      height: 240,
      ...(range ? { range } : {}),
    }),
    legend: legendOf(series),
  };
}

/**
 * The snapshots page's charts: data added per backup and backup duration, one series per source
 * group, and the repository's stored size per day (repository_sizes).
 */
export function backupCharts(
  runs: readonly BackupRun[],
  sizes: readonly RepositorySizePoint[] = [],
  sizeRange?: { from: Date; to: Date },
): BackupCharts {
  const stored: ChartSeries[] =
    sizes.length === 0
      ? []
      : [
          {
            name: "Stored in the repository",
            points: sizes.map((point) => ({
              at: new Date(`${point.day}T00:00:00Z`),
              value: point.storedBytes,
            })),
          },
        ];
  return {
    dataAdded: chart(
      seriesByGroup(runs, (run) => run.dataAdded),
      "Data added per backup, by source group",
      formatBytes,
    ),
    duration: chart(
      seriesByGroup(runs, (run) => run.durationSeconds),
      "Backup duration, by source group",
      formatDuration,
    ),
    repositorySize: chart(stored, "Repository size per day (UTC)", formatBytes, sizeRange),
  };
}
