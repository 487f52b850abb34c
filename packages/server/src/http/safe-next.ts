/**
 * @module http/safe-next
 * Where a browser may be sent after signing in (a password sign-in or single sign-on): only a path
 * of our own origin.
 */

function hasControlOrBackslash(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f || code === 0x5c) {
      return true;
    }
  }
  return false;
}

/**
 * Only same-origin paths are followed after sign-in. `next` is resolved against the base URL the
 * way a browser would resolve the Location header (which drops tabs and newlines and reads `\`
 * as `/`), so `/%09/evil.example` or `/\evil.example` cannot become `//evil.example`.
 */
export function safeNext(next: string | undefined, baseUrl: string): string {
  // Control characters and backslashes have no place in our own paths; browsers reinterpret them.
  if (!next?.startsWith("/") || hasControlOrBackslash(next)) {
    return "/";
  }
  const base = new URL(baseUrl);
  let resolved: URL;
  try {
    resolved = new URL(next, base);
  } catch {
    return "/";
  }
  const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
  // "/.//host" resolves on our origin to the path "//host", which a browser reads as another host.
  if (resolved.origin !== base.origin || !path.startsWith("/") || /^\/[/\\]/.test(path)) {
    return "/";
  }
  return path;
}
