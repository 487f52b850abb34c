/**
 * @module cases/crypto
 * Cost of sealing and opening a credential record (pure-JS XChaCha20-Poly1305 with owner binding)
 * against node's native ChaCha20-Poly1305 doing the same amount of work.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { open, seal } from "@fleetback/crypto";
import type { BenchCase } from "../harness.js";

export function cryptoCases(): BenchCase[] {
  const key = new Uint8Array(randomBytes(32));
  const plaintext = new TextEncoder().encode(
    JSON.stringify({
      url: "rest:https://backup.example.org:8000/host-01/",
      username: "host-01",
      password: "x".repeat(32),
    }),
  );
  const aad = "host:01JD0000000000000000000000";
  return [
    {
      name: `seal+open ${plaintext.length} B`,
      baselineName: "node chacha20-poly1305",
      batch: 500,
      subject: () => {
        const result = open(key, seal(key, plaintext, aad), aad);
        if (!result.ok) {
          throw new Error("round trip must succeed");
        }
      },
      baseline: () => {
        const nonce = randomBytes(12);
        const cipher = createCipheriv("chacha20-poly1305", key, nonce, { authTagLength: 16 });
        cipher.setAAD(Buffer.from(aad), { plaintextLength: plaintext.length });
        const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
        const tag = cipher.getAuthTag();
        const decipher = createDecipheriv("chacha20-poly1305", key, nonce, { authTagLength: 16 });
        decipher.setAAD(Buffer.from(aad), { plaintextLength: plaintext.length });
        decipher.setAuthTag(tag);
        Buffer.concat([decipher.update(sealed), decipher.final()]);
      },
    },
  ];
}
