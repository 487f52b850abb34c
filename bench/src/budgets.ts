/**
 * @module budgets
 * The budgets of issue 19 as rows: what was measured, the baseline measured in the same run, and
 * the budget it must stay within. `pnpm bench` prints them as one table and writes them, with the
 * date and the machine, to bench/results.json so a run can be compared with the table in docs/DEVELOPMENT.md.
 */
import { writeFile } from "node:fs/promises";
import { cpus, totalmem } from "node:os";

/** Where a row was measured: the server's database, or neither (the agent and restic alone). */
export type BudgetEngine = "pglite" | "postgres" | "none";

export interface BudgetRow {
  /** B1…B8 of issue 19. */
  id: string;
  case: string;
  engine: BudgetEngine;
  measured: number;
  unit: "ms" | "MiB" | "lines/s";
  baselineName: string;
  baseline: number;
  /** The most `measured` may be (for lines/s: the least). */
  budget: number;
}

/** The engine of a label or a server child's `engine` ("PGlite", "PostgreSQL", "pglite", ...). */
export function engineOf(label: string): BudgetEngine {
  return /postgres/i.test(label) ? "postgres" : "pglite";
}

export function withinBudget(row: BudgetRow): boolean {
  return row.unit === "lines/s" ? row.measured >= row.budget : row.measured <= row.budget;
}

export function figure(value: number, unit: BudgetRow["unit"]): string {
  if (!Number.isFinite(value)) {
    return "–";
  }
  if (unit === "MiB" || (unit === "ms" && value < 10)) {
    return `${value.toFixed(1)} ${unit}`;
  }
  return `${Math.round(value).toLocaleString("en")} ${unit}`;
}

/** measured ÷ baseline, or "–" where the baseline is not a positive figure. */
export function ratioText(row: Pick<BudgetRow, "measured" | "baseline">): string {
  return Number.isFinite(row.baseline) && row.baseline > 0
    ? `${(row.measured / row.baseline).toFixed(2)}×`
    : "–";
}

export function formatBudgets(rows: BudgetRow[]): string {
  const header = ["id", "engine", "case", "measured", "baseline", "baseline value", "ratio", "budget", "met"];
  const cells = rows.map((row) => [
    row.id,
    row.engine === "none" ? "–" : row.engine,
    row.case,
    figure(row.measured, row.unit),
    row.baselineName,
    figure(row.baseline, row.unit),
    ratioText(row),
    `${row.unit === "lines/s" ? "≥" : "≤"} ${figure(row.budget, row.unit)}`,
    withinBudget(row) ? "yes" : "NO",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => (row[i] ?? "").length)));
  const line = (values: string[]) => values.map((value, i) => value.padEnd(widths[i] ?? 0)).join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

export async function writeResults(
  path: string,
  rows: BudgetRow[],
  extra: Record<string, unknown>,
): Promise<void> {
  const document = {
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? "unknown",
      memory_gib: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: process.platform,
    },
    budgets: rows.map((row) => ({ ...row, ratio: row.measured / row.baseline, met: withinBudget(row) })),
    ...extra,
  };
  await writeFile(path, `${JSON.stringify(document, null, 2)}\n`);
}
