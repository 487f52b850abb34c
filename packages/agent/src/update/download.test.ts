import { mkdtemp, readdir } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { normalizePin } from "../net/tls-pin.js";
import { portOf } from "../testing/http-stub.js";
import { sha256Hex } from "../testing/release-signing.js";
import { createSelfSigned } from "../testing/self-signed.js";
import { downloadArtefact } from "./download.js";

const cert = createSelfSigned();

async function listen(server: ReturnType<typeof createHttpServer>) {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

describe("downloadArtefact", () => {
  it("stops at the cap while streaming when the server announces no length", async () => {
    const server = createHttpServer((_request, response) => {
      response.writeHead(200);
      for (let i = 0; i < 64; i++) {
        response.write(Buffer.alloc(1024, 1));
      }
      response.end();
    });
    const close = await listen(server);
    const dir = await mkdtemp(join(tmpdir(), "fleetback-download-"));
    try {
      const result = await downloadArtefact({
        url: `http://127.0.0.1:${portOf(server)}/a`,
        token: "fa_t",
        dir,
        maxBytes: 10_000,
      });
      expect(result).toEqual({
        ok: false,
        error: "download failed: the artefact is more than the 10000 bytes allowed",
      });
      expect(await readdir(dir)).toEqual([]);
      const whole = await downloadArtefact({
        url: `http://127.0.0.1:${portOf(server)}/a`,
        token: "fa_t",
        dir,
      });
      expect(whole).toMatchObject({ ok: true, size: 65_536, sha256: sha256Hex(Buffer.alloc(65_536, 1)) });
    } finally {
      await close();
    }
  });

  it.skipIf(cert === undefined)(
    `honours the TLS pin: nothing, not the token, reaches a server that fails it${cert ? "" : " (skipped: openssl not found)"}`,
    async () => {
      const pem = cert ?? { key: "", cert: "", fingerprint256: "" };
      const seen: string[] = [];
      const server = createHttpsServer({ key: pem.key, cert: pem.cert }, (request, response) => {
        seen.push(String(request.headers.authorization));
        response.writeHead(200).end("bytes");
      });
      const close = await listen(server);
      const dir = await mkdtemp(join(tmpdir(), "fleetback-download-"));
      const url = `https://127.0.0.1:${portOf(server)}/install/agent/0.2.0`;
      try {
        const wrong = await downloadArtefact({ url, token: "fa_t", tlsPin: "00".repeat(32), dir });
        expect(wrong).toMatchObject({ ok: false, error: expect.stringMatching(/TLS pin mismatch/) });
        expect(seen).toEqual([]);
        const right = await downloadArtefact({
          url,
          token: "fa_t",
          tlsPin: normalizePin(pem.fingerprint256),
          dir,
        });
        expect(right).toMatchObject({ ok: true, sha256: sha256Hex("bytes") });
        expect(seen).toEqual(["Bearer fa_t"]);
      } finally {
        await close();
      }
    },
  );
});
