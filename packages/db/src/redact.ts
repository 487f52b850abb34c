/**
 * @module Hides the password of a database URL before it reaches an error message or a log.
 */

const REDACTED = "***";

/**
 * `postgres://user:secret@host/db` → `postgres://user:***@host/db`; a `password=` query
 * parameter is hidden too. The user info is taken to end at the last `@`, so an unencoded `@`
 * or `/` in a password is still hidden (at worst a little more than the password is).
 */
export function redactDatabaseUrl(url: string): string {
  let out = url;
  const start = out.indexOf("://");
  if (start >= 0) {
    const at = out.lastIndexOf("@");
    const colon = out.indexOf(":", start + 3);
    if (colon >= 0 && colon < at) {
      out = `${out.slice(0, colon + 1)}${REDACTED}${out.slice(at)}`;
    }
  }
  return out.replace(/([?&]password=)[^&#]*/gi, `$1${REDACTED}`);
}

/** Removes every occurrence of the URL's password from free text such as a driver message. */
export function scrubPassword(text: string, url: string): string {
  const passwords = new Set<string>();
  const start = url.indexOf("://");
  const at = url.lastIndexOf("@");
  const colon = start >= 0 ? url.indexOf(":", start + 3) : -1;
  if (colon >= 0 && colon < at) {
    passwords.add(url.slice(colon + 1, at));
  }
  for (const match of url.matchAll(/[?&]password=([^&#]*)/gi)) {
    passwords.add(match[1] ?? "");
  }
  for (const password of [...passwords]) {
    try {
      passwords.add(decodeURIComponent(password));
    } catch {
      // Not percent-encoded; the raw form is already in the set.
    }
  }
  let out = text;
  for (const password of passwords) {
    if (password !== "") {
      out = out.split(password).join(REDACTED);
    }
  }
  return out;
}
