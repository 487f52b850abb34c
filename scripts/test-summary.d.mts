// Types of test-summary.mjs, for the tests that import it.
export interface AllowListEntry {
  pattern: string;
  why: string;
  regex: RegExp;
  used: number;
}
export const BUDGET_WARN_MS: number;
export const BUDGET_FAIL_MS: number;
export const STARTED_FILE: string;
export function parseAllowList(text: string): { entries: AllowListEntry[]; problems: string[] };
export function workspaceTestPackages(workspaceRoot?: string): string[];
export function formatDuration(ms: number): string;
export function summarise(options: {
  dir: string;
  allowListPath: string;
  ci: boolean;
  expected?: string[];
  now?: number;
}): {
  lines: string[];
  code: number;
};
