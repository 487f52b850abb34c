/**
 * @module restic/literal-pattern
 * restic reads `--include` and `--exclude` as patterns (filepath.Match per path component), so a
 * file named `a[1].txt` would select `a1.txt` instead, and an agent directory named `x*` would
 * leave out its siblings (verified on 0.14 and 0.18). A backslash makes the next character
 * literal in both versions and for both flags.
 */
export function literalPattern(path: string): string {
  return path.replace(/[\\*?[\]]/g, (character) => `\\${character}`);
}
