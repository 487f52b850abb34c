import { describe, expect, it } from "vitest";
import { channelName, NOTIFY_PAYLOAD_LIMIT } from "./pubsub.js";
import { runDbSuite } from "./testing/db-suite.js";
import { createTestEngine, postgresNote, testEngines } from "./testing/test-engine.js";

function collector() {
  const got: string[] = [];
  let wake: (() => void) | undefined;
  return {
    got,
    push: (payload: string) => {
      got.push(payload);
      wake?.();
    },
    /** Waits for `count` payloads; the test's timeout is the bound on a machine of any speed. */
    async waitFor(count: number): Promise<string[]> {
      while (got.length < count) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
      return got;
    },
  };
}

describe("channelName", () => {
  it("is a plain identifier that differs per namespace", () => {
    const a = channelName("fb_test_a", "presence");
    expect(a).toMatch(/^fb_[0-9a-f]{10}_presence$/);
    expect(channelName("fb_test_b", "presence")).not.toBe(a);
    expect(() => channelName("x", "Bad-Name")).toThrow("not a plain channel name");
  });
});

runDbSuite("PubSub", (_getDb, context) => {
  it("delivers notifications in the order they were sent, until unlistened", async () => {
    const { pubsub } = context.current();
    const heard = collector();
    let listens = 0;
    const stop = await pubsub.listen("orders", heard.push, () => {
      listens += 1;
    });
    expect(listens).toBe(1);
    for (const n of [1, 2, 3]) {
      await pubsub.notify("orders", `n${n}`);
    }
    const big = "x".repeat(NOTIFY_PAYLOAD_LIMIT - 10);
    await pubsub.notify("orders", big);
    expect(await heard.waitFor(4)).toEqual(["n1", "n2", "n3", big]);
    await stop();
    // A session hears notifications in the order they were sent, so once the probe arrives an
    // "after" that was going to be heard would have been.
    const probe = collector();
    const stopProbe = await pubsub.listen("probe", probe.push);
    await pubsub.notify("orders", "after");
    await pubsub.notify("probe", "done");
    await probe.waitFor(1);
    await stopProbe();
    expect(heard.got).toHaveLength(4);
  });
});

describe.skipIf(!testEngines().includes("postgres"))(
  `PubSub across schemas (postgres)${postgresNote()}`,
  () => {
    it("keeps two schemas on one PostgreSQL apart", async () => {
      const engine = await createTestEngine("postgres");
      const [one, two] = [await engine.createDatabase(), await engine.createDatabase()];
      try {
        const heardOne = collector();
        const heardTwo = collector();
        const stops = [
          await one.pubsub.listen("presence", heardOne.push),
          await two.pubsub.listen("presence", heardTwo.push),
        ];
        await one.pubsub.notify("presence", "for one");
        await two.pubsub.notify("presence", "for two");
        // Each schema's second notice follows its first: once both arrive, a crossed one would have.
        await one.pubsub.notify("presence", "one again");
        await two.pubsub.notify("presence", "two again");
        expect(await heardOne.waitFor(2)).toEqual(["for one", "one again"]);
        expect(await heardTwo.waitFor(2)).toEqual(["for two", "two again"]);
        expect([heardOne.got, heardTwo.got]).toEqual([
          ["for one", "one again"],
          ["for two", "two again"],
        ]);
        await Promise.all(stops.map((stop) => stop()));
      } finally {
        await one.close();
        await two.close();
        await engine.close();
      }
    });
  },
);
