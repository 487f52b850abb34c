/**
 * @module metrics/test-exposition-parser
 * A strict reader of the Prometheus text exposition format (0.0.4) for tests: prom-client writes
 * it but cannot read it. Anything Prometheus would refuse throws, naming the line: a sample
 * before its family's TYPE, a family declared twice, a malformed name, label or value, a
 * duplicate series, a histogram whose buckets fall or whose +Inf bucket differs from its _count.
 */

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string | undefined;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES: readonly MetricType[] = ["counter", "gauge", "histogram", "summary", "untyped"];
const SUFFIXES: Record<MetricType, readonly string[]> = {
  counter: [""],
  gauge: [""],
  untyped: [""],
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"],
};

export function parseExposition(text: string): Map<string, Family> {
  if (!text.endsWith("\n")) {
    throw new Error("exposition does not end with a newline");
  }
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  const seen = new Set<string>();
  const lines = text.slice(0, -1).split("\n");
  lines.forEach((line, index) => {
    const where = `line ${index + 1} (${JSON.stringify(line.slice(0, 80))})`;
    if (line.trim() === "") {
      return;
    }
    if (line.startsWith("#")) {
      const [, keyword, name = "", ...rest] = line.split(" ");
      if (keyword === "HELP") {
        if (!METRIC_NAME.test(name) || helps.has(name)) {
          throw new Error(`${where}: bad or repeated HELP`);
        }
        helps.set(name, rest.join(" "));
      } else if (keyword === "TYPE") {
        const type = TYPES.find((candidate) => candidate === rest.join(" "));
        if (!METRIC_NAME.test(name) || type === undefined || families.has(name)) {
          throw new Error(`${where}: bad or repeated TYPE`);
        }
        families.set(name, { name, type, help: helps.get(name), samples: [] });
      }
      return;
    }
    const sample = parseSample(line, where);
    const family = familyOf(families, sample.name);
    if (!family) {
      throw new Error(`${where}: sample of no declared family`);
    }
    if (family.type === "histogram" && sample.name.endsWith("_bucket") && sample.labels.le === undefined) {
      throw new Error(`${where}: histogram bucket without le`);
    }
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(key)) {
      throw new Error(`${where}: duplicate series`);
    }
    seen.add(key);
    family.samples.push(sample);
  });
  for (const family of families.values()) {
    if (family.type === "histogram") {
      checkHistogram(family);
    }
  }
  return families;
}

function familyOf(families: Map<string, Family>, sampleName: string): Family | undefined {
  for (const family of families.values()) {
    if (SUFFIXES[family.type].some((suffix) => `${family.name}${suffix}` === sampleName)) {
      return family;
    }
  }
  return undefined;
}

function parseSample(line: string, where: string): Sample {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)( -?\d+)?$/.exec(line);
  if (!match?.[1] || match[3] === undefined) {
    throw new Error(`${where}: not a sample`);
  }
  return { name: match[1], labels: parseLabels(match[2] ?? "", where), value: parseValue(match[3], where) };
}

function parseLabels(block: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  if (block === "") {
    return labels;
  }
  let rest = block.slice(1, -1);
  while (rest !== "") {
    const match = /^([^=]+)="((?:[^"\\]|\\[\\"n])*)"(,|$)/.exec(rest);
    if (!match?.[1] || match[2] === undefined || !LABEL_NAME.test(match[1]) || match[1] in labels) {
      throw new Error(`${where}: bad label near ${JSON.stringify(rest.slice(0, 40))}`);
    }
    labels[match[1]] = match[2].replace(/\\(["\\n])/g, (_, escaped: string) =>
      escaped === "n" ? "\n" : escaped,
    );
    rest = rest.slice(match[0].length);
  }
  return labels;
}

/** As Prometheus reads it (Go's ParseFloat): NaN and Inf in any case; prom-client writes "Nan". */
function parseValue(text: string, where: string): number {
  if (/^nan$/i.test(text)) {
    return Number.NaN;
  }
  const infinity = /^([+-]?)inf(inity)?$/i.exec(text);
  if (infinity) {
    return infinity[1] === "-" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) {
    throw new Error(`${where}: bad value ${text}`);
  }
  return Number(text);
}

function checkHistogram(family: Family): void {
  const series = new Map<string, Sample[]>();
  for (const sample of family.samples.filter((s) => s.name.endsWith("_bucket"))) {
    const { le: _le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    series.set(key, [...(series.get(key) ?? []), sample]);
  }
  for (const [key, buckets] of series) {
    const ordered = [...buckets].sort(
      (a, b) => parseValue(a.labels.le ?? "", key) - parseValue(b.labels.le ?? "", key),
    );
    ordered.forEach((bucket, index) => {
      const previous = ordered[index - 1];
      if (previous && bucket.value < previous.value) {
        throw new Error(`${family.name}${key}: bucket le=${bucket.labels.le} falls below the one before`);
      }
    });
    const inf = ordered.at(-1);
    const countSample = family.samples.find(
      (s) => s.name === `${family.name}_count` && JSON.stringify(Object.entries(s.labels).sort()) === key,
    );
    if (inf?.labels.le !== "+Inf" || countSample?.value !== inf.value) {
      throw new Error(`${family.name}${key}: no +Inf bucket equal to _count`);
    }
  }
}

/** The value of one series, or undefined when it is absent. */
export function seriesValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const family of families.values()) {
    const found = family.samples.find(
      (sample) =>
        sample.name === name &&
        Object.keys(sample.labels).length === Object.keys(labels).length &&
        Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
    );
    if (found) {
      return found.value;
    }
  }
  return undefined;
}

/** Every sample name a scrape exposes (a histogram's _bucket, _sum and _count included). */
export function exposedNames(families: Map<string, Family>): Set<string> {
  const names = new Set<string>();
  for (const family of families.values()) {
    names.add(family.name);
    for (const suffix of SUFFIXES[family.type]) {
      names.add(`${family.name}${suffix}`);
    }
  }
  return names;
}
