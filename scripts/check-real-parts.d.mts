// Types of check-real-parts.mjs, for the tests that import it.
export interface MissingPart {
  name: string;
  how: string;
}
export const CHROMIUM_PATHS: string[];
export function isCi(env?: NodeJS.ProcessEnv): boolean;
export function probePostgres(url: string, timeoutMs?: number): Promise<string | undefined>;
export function findMissingParts(options?: {
  env?: NodeJS.ProcessEnv;
  toolsDir?: string;
  uid?: number | undefined;
  chromiumPaths?: string[];
  probe?: (url: string) => Promise<string | undefined>;
}): Promise<MissingPart[]>;
export function verdict(missing: MissingPart[], ci: boolean): { lines: string[]; code: number };
