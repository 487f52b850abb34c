/**
 * @module http/client-address
 * The one place that decides who a request came from: audit entries, sessions, rate limits and the
 * announce source network all read it. `X-Forwarded-For` is believed only as far as the hops it
 * passed through are configured trusted proxies (FLEETBACK_TRUSTED_PROXIES); anyone else can write
 * that header, so without a trusted peer it is ignored.
 */
import { type BlockList, isIP } from "node:net";
import type { Context, MiddlewareHandler } from "hono";
import { trustedProxyList } from "../config.js";
import type { AppEnv } from "./app-env.js";

/** `::ffff:192.0.2.1` (an IPv4 peer on a dual-stack socket) is the IPv4 address it wraps. */
export function normaliseAddress(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped?.[1] ?? address;
}

function isTrusted(address: string, trusted: BlockList): boolean {
  const family = isIP(address);
  return family !== 0 && trusted.check(address, family === 6 ? "ipv6" : "ipv4");
}

/**
 * Walks X-Forwarded-For from the right (the hop nearest to us) while the current hop is a trusted
 * proxy; the first address not trusted is the client. A malformed entry ends the walk at the proxy
 * that passed it on, so garbage never becomes an address.
 */
export function resolveClientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: BlockList,
): string | undefined {
  if (peer === undefined) {
    return undefined;
  }
  let current = normaliseAddress(peer);
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(",") : (forwardedFor ?? "");
  const hops = header
    .split(",")
    .map((hop) => hop.trim())
    .filter((hop) => hop !== "");
  while (hops.length > 0 && isTrusted(current, trusted)) {
    const next = normaliseAddress(hops.pop() ?? "");
    if (isIP(next) === 0) {
      break;
    }
    current = next;
  }
  return current;
}

/** Resolves the client address once per request, before anything reads it. */
export function clientAddress(trustedProxies: readonly string[]): MiddlewareHandler<AppEnv> {
  const trusted = trustedProxyList(trustedProxies);
  return async (c, next) => {
    c.set("clientIp", resolveClientAddress(socketAddress(c), c.req.header("X-Forwarded-For"), trusted));
    await next();
  };
}

function socketAddress(c: Context<AppEnv>): string | undefined {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress;
}

/** The client's address as resolved by `clientAddress`; the bare peer where that did not run. */
export function clientIp(c: Context<AppEnv>): string | undefined {
  return c.get("clientIp") ?? socketAddress(c);
}

/**
 * The network a client address belongs to, for limits that one network must not exhaust: the /24
 * of an IPv4 address, the /64 of an IPv6 one (the smallest block one site usually gets).
 */
export function sourceNetwork(address: string | undefined): string {
  const normalised = address === undefined ? "" : normaliseAddress(address);
  const family = isIP(normalised);
  if (family === 4) {
    return `${normalised.split(".").slice(0, 3).join(".")}.0/24`;
  }
  if (family === 6) {
    const groups = ipv6Groups(normalised);
    return `${groups
      .slice(0, 4)
      .map((group) => group.toString(16))
      .join(":")}::/64`;
  }
  return "unknown";
}

/**
 * The key of per-address limits: an IPv4 address as it is (IPv4-mapped IPv6 included), an IPv6
 * address as its /64, because one site is handed a whole /64 and can pick a fresh address from it
 * for every attempt.
 */
export function limitKey(address: string | undefined): string {
  const normalised = address === undefined ? "unknown" : normaliseAddress(address);
  return isIP(normalised) === 6 ? sourceNetwork(normalised) : normalised;
}

/** The eight 16-bit groups of a valid IPv6 address (zone and embedded IPv4 included). */
function ipv6Groups(address: string): number[] {
  const [withoutZone = ""] = address.split("%");
  const parse = (part: string): number[] =>
    part === ""
      ? []
      : part.split(":").flatMap((group) => {
          if (group.includes(".")) {
            const [a = 0, b = 0, c = 0, d = 0] = group.split(".").map(Number);
            return [(a << 8) | b, (c << 8) | d];
          }
          return [Number.parseInt(group, 16)];
        });
  const [head = "", tail] = withoutZone.split("::");
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}
