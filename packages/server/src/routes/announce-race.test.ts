import { encodePublicKey, generateSigningKeyPair } from "@fleetback/crypto";
import { pendingHosts } from "@fleetback/db";
import { testEngines } from "@fleetback/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_PENDING_PER_NETWORK, MAX_PENDING_ROWS } from "../enrolment/announce.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { startTestServer, type TestServer } from "../testing/test-server.js";

const HOST = { os: "linux", arch: "amd64", agent_version: "0.1.0", tool_version: "0.18.0" };
// The test's requests come from 127.0.0.1; trusting it lets each name its own source address.
const config = { trustedProxies: ["127.0.0.1/32"] };

function announce(url: string, client: string, hostname: string): Promise<number> {
  return fetch(`${url}/api/agents/announce`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Forwarded-For": client },
    body: JSON.stringify({
      ...HOST,
      hostname,
      public_key: encodePublicKey(generateSigningKeyPair().publicKey),
    }),
  }).then(async (res) => {
    await res.body?.cancel();
    return res.status;
  });
}

for (const engine of testEngines()) {
  // Two replicas over one database: each has its own connection handling and request loop.
  describe(`concurrent announces against two replicas (${engine})`, () => {
    let first: TestServer;
    let secondDeps: TestDeps;
    let second: TestServer;

    beforeAll(async () => {
      first = await startTestServer({ engine, config });
      secondDeps = await createTestDeps({ db: first.deps.db, config });
      second = await startTestServer({ deps: secondDeps });
    });
    afterAll(async () => {
      await second?.close();
      await secondDeps?.close();
      await first?.close();
    });

    const rows = () => first.deps.db.select({ sourceIp: pendingHosts.sourceIp }).from(pendingHosts);

    it("keep exactly the per-network and the total caps", async () => {
      const fromOneNetwork = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          announce(i % 2 === 0 ? first.url : second.url, `203.0.113.${i + 1}`, `one-${i}`),
        ),
      );
      expect(fromOneNetwork.filter((status) => status === 201)).toHaveLength(MAX_PENDING_PER_NETWORK);
      expect(fromOneNetwork.filter((status) => status === 429)).toHaveLength(40 - MAX_PENDING_PER_NETWORK);
      expect(await rows()).toHaveLength(MAX_PENDING_PER_NETWORK);

      // 200 more, one per network, so only the total cap can stop them.
      const spread = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          announce(i % 2 === 0 ? first.url : second.url, `10.${i}.0.1`, `many-${i}`),
        ),
      );
      expect(spread.filter((status) => status === 201)).toHaveLength(
        MAX_PENDING_ROWS - MAX_PENDING_PER_NETWORK,
      );
      expect(await rows()).toHaveLength(MAX_PENDING_ROWS);
    });
  });
}
