import { hosts } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { createManualTimers } from "@fleetback/protocol/manual-timers";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { seedHost } from "../testing/seed.js";
import { createTestDeps } from "../testing/test-deps.js";
import { createLastSeenWriter } from "./last-seen-writer.js";

runDbSuite("batched last_seen_at", (getDb) => {
  it("writes many hosts' heartbeats in one flush, the newest per host, never moving a time back", async () => {
    const deps = await createTestDeps({ db: getDb() });
    const timers = createManualTimers();
    const writer = createLastSeenWriter({ db: deps.db, log: deps.log, timers });
    const seeded = await Promise.all(
      Array.from({ length: 3 }, (_, n) =>
        seedHost(deps, { name: `h${n}`, lastSeenAt: new Date("2026-11-26T10:00:00Z") }),
      ),
    );
    const [a, b, c] = seeded.map((s) => s.host.id);
    const read = async (id: string | undefined) =>
      (
        await deps.db
          .select()
          .from(hosts)
          .where(eq(hosts.id, id ?? ""))
      )
        .at(0)
        ?.lastSeenAt?.toISOString();

    writer.touch(a ?? "", new Date("2026-11-26T10:00:30Z"));
    writer.touch(a ?? "", new Date("2026-11-26T10:01:00Z"));
    writer.touch(a ?? "", new Date("2026-11-26T10:00:45Z"));
    writer.touch(b ?? "", new Date("2026-11-26T10:00:30Z"));
    // A stored time newer than the heartbeat's stays.
    writer.touch(c ?? "", new Date("2026-11-26T09:00:00Z"));
    writer.touch("no-such-host", new Date("2026-11-26T10:00:30Z"));
    // One timer for the whole batch, and nothing written before it fires.
    expect(timers.requestedDelays).toHaveLength(1);
    expect(await read(a)).toBe("2026-11-26T10:00:00.000Z");
    timers.runAll();
    await writer.flush();
    expect(await read(a)).toBe("2026-11-26T10:01:00.000Z");
    expect(await read(b)).toBe("2026-11-26T10:00:30.000Z");
    expect(await read(c)).toBe("2026-11-26T10:00:00.000Z");
    // The next touch starts a new batch.
    writer.touch(b ?? "", new Date("2026-11-26T10:01:30Z"));
    expect(timers.requestedDelays).toHaveLength(2);
    await writer.flush();
    expect(await read(b)).toBe("2026-11-26T10:01:30.000Z");
  });
});
