/**
 * @module net/tls-pin
 * Certificate pinning for self-hosted servers: with `tls_pin_sha256` configured, the pin is the
 * trust anchor instead of the CA store, so a self-signed certificate works, and nothing but the
 * pinned leaf certificate does. The check runs when the TLS handshake completes and before the
 * socket is handed to the HTTP client, so not one byte of a request (and so of the bearer token)
 * reaches a server that fails it.
 */
import { createHash } from "node:crypto";
import https from "node:https";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import { connect } from "node:tls";

/** Hex SHA-256, case-insensitive, with or without colons (`AB:CD:…` as `openssl x509 -fingerprint` prints). */
export function normalizePin(pin: string): string | undefined {
  const hex = pin.trim().replaceAll(":", "").toLowerCase();
  return /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
}

/** SHA-256 of the DER certificate, lowercase hex. */
export function certificateSha256(der: Uint8Array): string {
  return createHash("sha256").update(der).digest("hex");
}

export class TlsPinMismatchError extends Error {
  override readonly name = "TlsPinMismatchError";
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(
      `TLS pin mismatch: the server's certificate has SHA-256 ${actual}, but tls_pin_sha256 is ${expected}; nothing was sent`,
    );
  }
}

/**
 * An HTTPS agent whose sockets are handed over only after the leaf certificate matched the pin.
 * Used for both the enrolment requests and the WebSocket upgrade.
 */
export class PinnedAgent extends https.Agent {
  constructor(private readonly pin: string) {
    super({ keepAlive: false });
  }

  override createConnection(
    options: https.RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const host = options.host ?? options.hostname ?? "localhost";
    // SNI carries names only (RFC 6066); an IP address there makes Node warn.
    const servername = isIP(host) ? undefined : options.servername || host;
    const socket = connect({
      host,
      port: Number(options.port ?? 443),
      servername,
      // The pin replaces chain and name validation: it is stricter than both.
      rejectUnauthorized: false,
    });
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) {
        return;
      }
      settled = true;
      socket.removeListener("error", settle);
      if (error) {
        socket.destroy();
      }
      callback?.(error, socket);
    };
    socket.once("error", settle);
    socket.once("secureConnect", () => {
      const raw: Uint8Array | undefined = socket.getPeerCertificate().raw;
      const actual = raw === undefined ? "(no certificate)" : certificateSha256(raw);
      settle(actual === this.pin ? null : new TlsPinMismatchError(this.pin, actual));
    });
    // Returning nothing makes the HTTP client wait for the callback before it writes anything.
    return undefined;
  }
}
