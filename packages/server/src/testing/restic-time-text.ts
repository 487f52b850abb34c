/**
 * @module testing/restic-time-text
 * Snapshot times written as restic stores them, for tests that need them parsed: a time the test
 * got wrong fails at once instead of reading as "no time".
 */
import { parseResticTime, type ResticTime } from "../retention/restic-time.js";

export function time(text: string): ResticTime {
  const parsed = parseResticTime(text);
  if (parsed === undefined) {
    throw new Error(`unparsed ${text}`);
  }
  return parsed;
}
