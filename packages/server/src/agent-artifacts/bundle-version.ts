/**
 * @module agent-artifacts/bundle-version
 * Which strings name a stored agent version: the bundle store, the single-executable store beside
 * it and the release import all check a version against this before it becomes a path segment.
 */

/** One path segment, shaped like a (semver) version; anything else is never a stored version. */
const VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;

export function isBundleVersion(version: string): boolean {
  return VERSION.test(version) && !version.includes("..");
}
