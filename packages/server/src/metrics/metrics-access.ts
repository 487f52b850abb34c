/**
 * @module metrics/metrics-access
 * Who may read /metrics. It is no operator page: Prometheus holds no session, so the endpoint is
 * open to a bearer token (FLEETBACK_METRICS_TOKEN) or to source networks
 * (FLEETBACK_METRICS_ALLOW_NETWORKS), either one sufficing. With neither set it is switched off and
 * answers 404 like any unknown path, so a fresh install publishes nothing about its fleet. The
 * client address is the one http/client-address resolved, so behind a trusted proxy the allow-list
 * applies to the real client, not to the proxy.
 */
import { isIP } from "node:net";
import { constantTimeEqual, hashToken } from "@fleetback/crypto";
import { type Config, trustedProxyList } from "../config.js";

export type MetricsAccess = "disabled" | "allowed" | "denied";

export interface MetricsRequest {
  authorization: string | undefined;
  clientIp: string | undefined;
}

export type MetricsGate = (request: MetricsRequest) => MetricsAccess;

export function createMetricsGate(
  config: Pick<Config, "metricsTokenHash" | "metricsAllowNetworks">,
): MetricsGate {
  const tokenHash = config.metricsTokenHash;
  const networks =
    config.metricsAllowNetworks.length > 0 ? trustedProxyList(config.metricsAllowNetworks) : undefined;
  return ({ authorization, clientIp }) => {
    if (tokenHash === undefined && networks === undefined) {
      return "disabled";
    }
    if (networks && clientIp !== undefined) {
      const family = isIP(clientIp);
      if (family !== 0 && networks.check(clientIp, family === 6 ? "ipv6" : "ipv4")) {
        return "allowed";
      }
    }
    const presented = bearerToken(authorization);
    // Hashes of equal length compared in constant time: neither the token nor its length leaks.
    if (
      tokenHash !== undefined &&
      presented !== undefined &&
      constantTimeEqual(hashToken(presented), tokenHash)
    ) {
      return "allowed";
    }
    return "denied";
  };
}

function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? "");
  return match?.[1];
}
