// Types of test-summary.mjs, for the tests that import it.
export interface AllowListEntry {
  pattern: string;
  why: string;
  regex: RegExp;
  used: number;
}
export function parseAllowList(text: string): { entries: AllowListEntry[]; problems: string[] };
export function summarise(options: { dir: string; allowListPath: string; ci: boolean }): {
  lines: string[];
  code: number;
};
