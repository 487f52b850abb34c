/**
 * @module notifications/address-policy
 * Which addresses notifications may reach. A channel URL is typed by an admin but fetched by the
 * server, so without a rule it could probe the server's own network (loopback services, cloud
 * metadata at 169.254.169.254, private ranges). Loopback, link-local, private, shared (CGNAT),
 * unspecified, multicast and reserved addresses are refused unless FLEETBACK_NOTIFY_ALLOW_NETWORKS
 * names them. Host names are checked after resolution, every address, and the connection goes to
 * the checked address (guardedLookup / resolveChecked), so a DNS answer that changes between the
 * check and the connection (rebinding) cannot swap it.
 */
import { type LookupAddress, lookup } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { trustedProxyList } from "../config.js";

type Family = "ipv4" | "ipv6";

/** In order: the first match names the refusal. IPv4-mapped IPv6 addresses match the IPv4 rows. */
const REFUSED: ReadonlyArray<readonly [network: string, prefix: number, family: Family, kind: string]> = [
  ["127.0.0.0", 8, "ipv4", "a loopback"],
  ["::1", 128, "ipv6", "a loopback"],
  ["0.0.0.0", 8, "ipv4", "an unspecified"],
  ["::", 128, "ipv6", "an unspecified"],
  ["169.254.0.0", 16, "ipv4", "a link-local (cloud metadata)"],
  ["fe80::", 10, "ipv6", "a link-local"],
  ["10.0.0.0", 8, "ipv4", "a private"],
  ["172.16.0.0", 12, "ipv4", "a private"],
  ["192.168.0.0", 16, "ipv4", "a private"],
  ["fc00::", 7, "ipv6", "a private (ULA)"],
  ["fec0::", 10, "ipv6", "a private (site-local)"],
  ["100.64.0.0", 10, "ipv4", "a shared (CGNAT)"],
  ["224.0.0.0", 4, "ipv4", "a multicast"],
  ["ff00::", 8, "ipv6", "a multicast"],
  // 192.0.0.192 is Oracle Cloud's metadata service; the rest of these are never a public server.
  ["192.0.0.0", 24, "ipv4", "a reserved"],
  ["198.18.0.0", 15, "ipv4", "a reserved"],
  ["240.0.0.0", 4, "ipv4", "a reserved"],
  ["::", 96, "ipv6", "a reserved (IPv4-compatible)"],
];

const REFUSED_LISTS = REFUSED.map(([network, prefix, family, kind]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, kind };
});

export const ALLOW_SETTING = "FLEETBACK_NOTIFY_ALLOW_NETWORKS";

export interface AddressPolicy {
  /** What `address` (an IP) is when it is refused ("a loopback address"); undefined if allowed. */
  refusal(address: string): string | undefined;
}

/** The end of every refusal: what to do about it. */
export const REFUSAL_HINT = `notifications to internal addresses are refused unless ${ALLOW_SETTING} names them`;

/** `allowNetworks`: addresses or CIDRs as config.ts validated them (Config.notifyAllowNetworks). */
export function createAddressPolicy(allowNetworks: readonly string[]): AddressPolicy {
  // The same address-or-CIDR set FLEETBACK_TRUSTED_PROXIES is read into.
  const allowed = trustedProxyList(allowNetworks);
  return {
    refusal(address) {
      const family: Family = isIP(address) === 6 ? "ipv6" : "ipv4";
      if (allowed.check(address, family)) {
        return undefined;
      }
      const hit = REFUSED_LISTS.find(({ list }) => list.check(address, family));
      return hit ? `${hit.kind} address` : undefined;
    },
  };
}

/** A URL's or config's host as an IP when it is a literal address (brackets stripped), else undefined. */
export function literalAddress(host: string): string | undefined {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return isIP(bare) ? bare : undefined;
}

/** Refused because of the address policy: final, not worth a retry. */
export class AddressRefusedError extends Error {
  override readonly name = "AddressRefusedError";
}

/** The refusal of `host` when it is a literal address the policy refuses. */
export function literalRefusal(host: string, policy: AddressPolicy): AddressRefusedError | undefined {
  const literal = literalAddress(host);
  const why = literal === undefined ? undefined : policy.refusal(literal);
  return why ? new AddressRefusedError(`${host} is ${why}; ${REFUSAL_HINT}`) : undefined;
}

/** Every address `host` resolves to, or the refusal of the first refused one. */
function resolveAll(
  host: string,
  policy: AddressPolicy,
  callback: (err: Error | null, addresses: LookupAddress[]) => void,
): void {
  const literal = literalAddress(host);
  if (literal) {
    callback(literalRefusal(host, policy) ?? null, [{ address: literal, family: isIP(literal) }]);
    return;
  }
  lookup(host, { all: true, verbatim: true }, (err, addresses) => {
    if (err) {
      callback(err, []);
      return;
    }
    for (const { address } of addresses) {
      const why = policy.refusal(address);
      if (why) {
        // The address is not named: it would tell the internal DNS to whoever reads the log.
        callback(new AddressRefusedError(`${host} resolves to ${why}; ${REFUSAL_HINT}`), []);
        return;
      }
    }
    callback(null, addresses);
  });
}

/**
 * A `lookup` for http.request/net.connect that resolves, checks every address, and hands the
 * socket only checked addresses. Node skips `lookup` for literal IPs: check those before calling.
 */
export function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, policy, (err, addresses) => {
      const first = addresses[0];
      if (err || !first) {
        callback(err ?? Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
      } else if (options.all) {
        callback(null, addresses);
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}

/** One checked address of `host`, to connect to instead of the name (SMTP). */
export function resolveChecked(host: string, policy: AddressPolicy): Promise<string> {
  return new Promise((resolve, reject) => {
    resolveAll(host, policy, (err, addresses) => {
      const first = addresses[0];
      if (err || !first) {
        reject(err ?? new Error(`${host} has no address`));
      } else {
        resolve(first.address);
      }
    });
  });
}
