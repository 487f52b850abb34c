/**
 * @module restic/backend-failure
 * What restic's stderr says about the repository's answers. restic retries a failed backend
 * request and prints a line per failure; 0.14 and 0.18 word it alike, recorded against a real
 * rest-server that was stopped (2026-11-27):
 *
 *     Save(<data/7727feda16>) returned error, retrying after 873.42004ms: client.Post: Post "http://…": dial tcp 127.0.0.1:18731: connect: connection refused
 *     Stat(<config/>) returned error, retrying after 1.114883504s: Head "http://:***@…/config": dial tcp …: connect: connection refused
 *
 * and when it gives up, a `Fatal:` line (or 0.18's JSON `exit_error`) with the same cause.
 * Only causes that mean "nobody answered" count: a missing file or a refused login is the
 * repository answering. 0.16 and later print `Save(<…>) operation successful after 3 retries`
 * when a retried request finally succeeds; 0.14 prints nothing then, which is why the watch that
 * reads these lines (unreachable-watch.ts) asks the repository itself before it gives up on it.
 */

export type BackendLine = { kind: "failure"; cause: string } | { kind: "recovered" };

/** Ordered: the first match names the cause. */
const NETWORK_CAUSES: readonly { pattern: RegExp; cause: (match: RegExpExecArray) => string }[] = [
  { pattern: /connection refused/i, cause: () => "connection refused" },
  { pattern: /no such host/i, cause: () => "no such host" },
  { pattern: /network is unreachable|no route to host|host is down/i, cause: () => "no route to the host" },
  {
    pattern: /i\/o timeout|TLS handshake timeout|Client\.Timeout exceeded/i,
    cause: () => "no answer in time",
  },
  {
    // An upload cut when the server went away under it (recorded as `use of closed network connection`).
    pattern: /connection reset by peer|use of closed network connection|broken pipe/i,
    cause: () => "connection cut",
  },
  // A proxy in front of a stopped rest-server answers for it.
  { pattern: /unexpected HTTP response \((5\d\d)\)/, cause: (match) => `HTTP ${match[1]} from the server` },
];

const RECOVERED = /\) operation successful after \d+ retr/;

/** The short cause ("connection refused") when the text says the repository did not answer. */
export function networkCauseOf(text: string): string | undefined {
  for (const { pattern, cause } of NETWORK_CAUSES) {
    const match = pattern.exec(text);
    if (match !== null) {
      return cause(match);
    }
  }
  return undefined;
}

/** One stderr line of restic, read for the repository's answers; undefined for anything else. */
export function readBackendLine(text: string): BackendLine | undefined {
  if (RECOVERED.test(text)) {
    return { kind: "recovered" };
  }
  const cause = networkCauseOf(text);
  return cause === undefined ? undefined : { kind: "failure", cause };
}
