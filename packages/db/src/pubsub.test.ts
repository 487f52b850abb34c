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
    async waitFor(count: number, ms = 5_000): Promise<string[]> {
      const deadline = Date.now() + ms;
      while (got.length < count && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
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
    await pubsub.notify("orders", "after");
    await new Promise((resolve) => setTimeout(resolve, 200));
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
        expect(await heardOne.waitFor(1)).toEqual(["for one"]);
        expect(await heardTwo.waitFor(1)).toEqual(["for two"]);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect([heardOne.got, heardTwo.got]).toEqual([["for one"], ["for two"]]);
        await Promise.all(stops.map((stop) => stop()));
      } finally {
        await one.close();
        await two.close();
        await engine.close();
      }
    });
  },
);
