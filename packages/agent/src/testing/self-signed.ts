/**
 * @module testing/self-signed
 * A throwaway self-signed certificate for 127.0.0.1, made with the openssl CLI when it exists,
 * for the TLS pinning tests.
 */
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface SelfSigned {
  key: string;
  cert: string;
  /** `AB:CD:…` as openssl and Node print it. */
  fingerprint256: string;
}

export function createSelfSigned(): SelfSigned | undefined {
  const dir = mkdtempSync(join(tmpdir(), "fleetback-cert-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=fleetback-test",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
  } catch {
    return undefined;
  }
  const cert = readFileSync(join(dir, "cert.pem"), "utf8");
  return {
    key: readFileSync(join(dir, "key.pem"), "utf8"),
    cert,
    fingerprint256: new X509Certificate(cert).fingerprint256,
  };
}
