/**
 * @module budget-table
 * `pnpm --filter @fleetback/bench run table [results.json]`: writes the budget table of
 * docs/DEVELOPMENT.md from what a `pnpm bench` run wrote to bench/results.json, with that run's
 * date and machine, so the table in the docs is always one run's figures and never edited by hand.
 * Only the part between the two markers is replaced; the prose around it is the docs' own.
 */
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BudgetRow } from "./budgets.js";
import { figure, ratioText, withinBudget } from "./budgets.js";

const here = dirname(fileURLToPath(import.meta.url));
const START = "<!-- budgets:start (bench/src/budget-table.ts writes this part) -->";
const END = "<!-- budgets:end -->";

interface Results {
  date: string;
  machine: { cpus: number; cpu_model: string; memory_gib: number; node: string; platform: string };
  budgets: BudgetRow[];
}

const ENGINES: Record<BudgetRow["engine"], string> = { pglite: "PGlite", postgres: "PostgreSQL", none: "–" };

/** Markdown cells must not hold a bare pipe. */
const cell = (text: string) => text.replaceAll("|", "\\|");

export function budgetTable(results: Results): string {
  const { machine } = results;
  const day = results.date.slice(0, 10);
  const header = ["id", "engine", "case", "measured", "baseline (same run)", "ratio", "budget", "met"];
  const rows = results.budgets.map((row) => [
    row.id,
    ENGINES[row.engine],
    cell(row.case),
    figure(row.measured, row.unit),
    `${cell(row.baselineName)}: ${figure(row.baseline, row.unit)}`,
    ratioText(row),
    `${row.unit === "lines/s" ? "≥" : "≤"} ${figure(row.budget, row.unit)}`,
    withinBudget(row) ? "yes" : "**no**",
  ]);
  // Padded as the repository's formatter lays Markdown tables out, so the written file passes it.
  const widths = header.map((name, i) => Math.max(3, name.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((text, i) => text.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  const lines = [
    `Measured ${day} by one \`pnpm bench\` on ${machine.cpus} cores (${machine.cpu_model}), ` +
      `${machine.memory_gib} GiB, Node ${machine.node.replace(/^v/, "")}, ${machine.platform}.`,
    "",
    line(header),
    line(widths.map((width) => "-".repeat(width))),
    ...rows.map(line),
  ];
  return lines.join("\n");
}

/** `document` with its marked part replaced by `table`; throws when the markers are missing. */
export function replaceMarked(document: string, table: string): string {
  const start = document.indexOf(START);
  const end = document.indexOf(END);
  if (start < 0 || end < start) {
    throw new Error(`the document has no "${START}" … "${END}" part to replace`);
  }
  return `${document.slice(0, start + START.length)}\n\n${table}\n\n${document.slice(end)}`;
}

async function main(): Promise<void> {
  const resultsPath = process.argv[2] ?? join(here, "..", "results.json");
  const docPath = join(here, "..", "..", "docs", "DEVELOPMENT.md");
  const results = JSON.parse(await readFile(resultsPath, "utf8")) as Results;
  if (!Array.isArray(results.budgets) || results.budgets.length === 0) {
    throw new Error(`${resultsPath} holds no budget rows: run \`pnpm bench\` first`);
  }
  await writeFile(docPath, replaceMarked(await readFile(docPath, "utf8"), budgetTable(results)));
  process.stdout.write(`wrote ${results.budgets.length} budget rows of ${results.date} to ${docPath}\n`);
}

await main();
