/**
 * The sample alerting rules and the Grafana dashboard in deploy/ query /metrics by name: every
 * metric name their expressions use must be one a real scrape exposes, so a renamed metric
 * cannot leave them silently empty.
 */
import { readFileSync } from "node:fs";
import { hashToken } from "@fleetback/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../app.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { exposedNames, parseExposition } from "./test-exposition-parser.js";

const ROOT = new URL("../../../../", import.meta.url);
const TOKEN = "metrics-token-for-deploy-files";
const DATA_SOURCE_INPUT = ["$", "{DS_PROMETHEUS}"].join("");
/** Series Prometheus makes itself for every target, not read from /metrics. */
const SYNTHETIC = new Set(["up"]);
const NOT_NAMES = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "and",
  "or",
  "unless",
  "offset",
  "inf",
  "nan",
]);

/**
 * The metric names a PromQL expression selects: what is left once strings, label matchers, ranges
 * and grouping lists are removed, minus functions (a name followed by a parenthesis), keywords,
 * Grafana variables and the unit letters of durations and numbers.
 */
function metricNamesOf(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names: string[] = [];
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const before = stripped[match.index - 1] ?? " ";
    const after = stripped.slice(match.index + match[0].length).trimStart();
    if (/[0-9.$]/.test(before) || after.startsWith("(") || NOT_NAMES.has(match[0].toLowerCase())) {
      continue;
    }
    names.push(match[0]);
  }
  return names;
}

function dashboardExprs(node: unknown): string[] {
  if (Array.isArray(node)) {
    return node.flatMap(dashboardExprs);
  }
  if (typeof node === "object" && node !== null) {
    return Object.entries(node).flatMap(([key, value]) =>
      key === "expr" && typeof value === "string" ? [value] : dashboardExprs(value),
    );
  }
  return [];
}

let deps: TestDeps;
let exposed: Set<string>;

beforeAll(async () => {
  deps = await createTestDeps({ config: { metricsTokenHash: hashToken(TOKEN) } });
  const res = await createApp(deps).request("/metrics", { headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  exposed = exposedNames(parseExposition(await res.text()));
});
afterAll(async () => {
  await deps.close();
});

describe("metricNamesOf", () => {
  it("finds the selected metrics and nothing else", () => {
    expect(
      metricNamesOf(
        'histogram_quantile(0.95, sum by (kind, le) (max without (instance) (rate(a_bucket{outcome="x"}[$__rate_interval])))) / on(kind) b_total offset 5m > 1e3',
      ),
    ).toEqual(["a_bucket", "b_total"]);
    expect(metricNamesOf('up{job="fleetback"} == 0 or absent(up{job="fleetback"})')).toEqual(["up", "up"]);
  });
});

describe("deploy/grafana-dashboard.json", () => {
  const dashboard: unknown = JSON.parse(readFileSync(new URL("deploy/grafana-dashboard.json", ROOT), "utf8"));

  it("is an importable dashboard asking for its Prometheus data source", () => {
    expect(dashboard).toMatchObject({
      title: "Fleetback",
      uid: expect.stringMatching(/^[a-z0-9-]{1,40}$/),
      schemaVersion: expect.any(Number),
      __inputs: [
        expect.objectContaining({ name: "DS_PROMETHEUS", type: "datasource", pluginId: "prometheus" }),
      ],
    });
    const panels = (
      dashboard as { panels: Array<{ id: number; type: string; gridPos: object; datasource?: object }> }
    ).panels;
    expect(new Set(panels.map((panel) => panel.id)).size).toBe(panels.length);
    for (const panel of panels) {
      expect(panel.gridPos).toEqual({
        h: expect.any(Number),
        w: expect.any(Number),
        x: expect.any(Number),
        y: expect.any(Number),
      });
      if (panel.type !== "row") {
        // Grafana's import replaces this placeholder with the data source the operator picks.
        expect(panel.datasource).toEqual({ type: "prometheus", uid: DATA_SOURCE_INPUT });
      }
    }
  });

  it("queries only metrics /metrics exposes, and every fleet metric at least once", () => {
    const exprs = dashboardExprs(dashboard);
    expect(exprs.length).toBeGreaterThan(10);
    const used = new Set<string>();
    for (const expr of exprs) {
      const names = metricNamesOf(expr);
      expect(names.length, expr).toBeGreaterThan(0);
      for (const name of names) {
        expect(exposed.has(name), `${name} in ${expr}`).toBe(true);
        used.add(name.replace(/_(bucket|sum|count)$/, ""));
      }
    }
    for (const name of exposed) {
      if (name.startsWith("fleetback_") && !/_(bucket|sum|count)$/.test(name)) {
        expect(used.has(name), `${name} unused by the dashboard`).toBe(true);
      }
    }
  });
});

describe("deploy/prometheus-alerts.yml", () => {
  const text = readFileSync(new URL("deploy/prometheus-alerts.yml", ROOT), "utf8");
  const rules = [...text.matchAll(/^ {6}- alert: (\S+)\n {8}expr: (.+)$/gm)].map((match) => ({
    alert: match[1] ?? "",
    expr: match[2] ?? "",
  }));

  it("has the documented rules, each an alert name followed by a one-line expression", () => {
    expect(text).toMatch(/^groups:\n {2}- name: fleetback\n {4}rules:\n/m);
    expect(rules.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        "FleetbackMetricsScrapeMissing",
        "FleetbackBackupOverdue",
        "FleetbackAgentOffline",
        "FleetbackJobFailures",
        "FleetbackNotificationFailures",
      ]),
    );
    expect(rules).toHaveLength((text.match(/- alert: /g) ?? []).length);
    // Plain YAML only: no tabs, and every annotation with a template is quoted.
    expect(text).not.toMatch(/\t/);
    for (const line of text.split("\n").filter((l) => l.includes("{{"))) {
      expect(line, line).toMatch(/^ +\w+: ".*"$/);
    }
  });

  it("queries only metrics /metrics exposes (and Prometheus's own up)", () => {
    for (const rule of rules) {
      const names = metricNamesOf(rule.expr);
      expect(names.length, rule.alert).toBeGreaterThan(0);
      for (const name of names) {
        expect(exposed.has(name) || SYNTHETIC.has(name), `${name} in ${rule.alert}`).toBe(true);
      }
    }
  });
});
