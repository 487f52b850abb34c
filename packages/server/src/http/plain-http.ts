/**
 * @module http/plain-http
 * A base URL of plain http:// on anything but loopback sends what the installer pipes into
 * `sudo bash`, agent tokens and session cookies in clear. Allowed (a lab, a TLS proxy that the
 * operator forgot to name), but said at start-up and on the enrol page.
 */
import { isIP } from "node:net";

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host === "::1") {
    return true;
  }
  return isIP(host) === 4 && host.startsWith("127.");
}

/** One sentence for the log and the page, or undefined when the base URL is safe. */
export function plainHttpWarning(baseUrl: string): string | undefined {
  const url = new URL(baseUrl);
  if (url.protocol !== "http:" || isLoopback(url.hostname)) {
    return undefined;
  }
  return (
    `FLEETBACK_BASE_URL ${url.origin} is plain http:// on a non-loopback address: the installer ` +
    "piped into `sudo bash`, agent tokens and session cookies travel in clear. Serve HTTPS " +
    "(FLEETBACK_TLS_CERT/FLEETBACK_TLS_KEY or a TLS reverse proxy) and set an https:// base URL."
  );
}
