import { notificationChannels, notificationDeliveries } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { ulid } from "ulidx";
import { expect, it } from "vitest";
import {
  claimDueDeliveries,
  enqueueDeliveries,
  finishDelivery,
  hasDueDelivery,
  nextClaimableAt,
  rescheduleDelivery,
} from "./delivery-queue.js";

const T0 = new Date("2026-11-21T12:00:00Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const LEASE = 60_000;

runDbSuite("notification delivery queue", (getDb) => {
  async function queue(count: number, due: (i: number) => Date = () => T0) {
    const db = getDb();
    const channelId = ulid();
    await db
      .insert(notificationChannels)
      .values({ id: channelId, name: `c-${channelId}`, kind: "slack", sealedConfig: new Uint8Array([1]) });
    const rows = Array.from({ length: count }, (_, i) => ({
      id: ulid(),
      channelId,
      alertId: null,
      event: "alert.opened" as const,
      notification: { title: `n${i}`, body: "b", link: "https://fleetback.example/", data: { i } },
      at: due(i),
    }));
    await enqueueDeliveries(db, rows);
    return rows;
  }

  it("hands each due row to one of many concurrent claimers", async () => {
    const rows = await queue(30);
    const claims = await Promise.all(
      Array.from({ length: 6 }, () =>
        claimDueDeliveries(getDb(), { now: T0, leaseUntil: at(LEASE), limit: 7 }),
      ),
    );
    const ids = claims.flat().map((row) => row.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(rows.map((row) => row.id).sort());
    expect(claims.flat().every((row) => row.claimedUntil.getTime() === at(LEASE).getTime())).toBe(true);
    expect(await hasDueDelivery(getDb(), T0)).toBe(false);
  });

  it("claims due rows oldest first and leaves future ones", async () => {
    const rows = await queue(3, (i) => at([5_000, -1_000, 0][i] ?? 0));
    const claimed = await claimDueDeliveries(getDb(), { now: T0, leaseUntil: at(LEASE), limit: 10 });
    expect(claimed.map((row) => row.notification.title)).toEqual(["n1", "n2"]);
    expect(claimed[0]?.notification.data).toEqual({ i: 1 });
    expect(await nextClaimableAt(getDb())).toEqual(at(5_000));
    expect(rows).toHaveLength(3);
  });

  it("gives a crashed server's row to another once the claim ran out, and only the new claim counts", async () => {
    await queue(1);
    const [stale] = await claimDueDeliveries(getDb(), { now: T0, leaseUntil: at(LEASE), limit: 1 });
    if (!stale) {
      throw new Error("nothing claimed");
    }
    expect(await nextClaimableAt(getDb())).toEqual(at(LEASE));
    expect(
      await claimDueDeliveries(getDb(), { now: at(LEASE), leaseUntil: at(2 * LEASE), limit: 1 }),
    ).toEqual([]);
    const [taken] = await claimDueDeliveries(getDb(), {
      now: at(LEASE + 1),
      leaseUntil: at(2 * LEASE + 1),
      limit: 1,
    });
    expect(taken?.id).toBe(stale.id);
    expect(await finishDelivery(getDb(), stale)).toBe(false);
    expect(await rescheduleDelivery(getDb(), stale, at(LEASE))).toBe(false);
    if (!taken) {
      throw new Error("nothing claimed");
    }
    expect(await rescheduleDelivery(getDb(), taken, at(3 * LEASE))).toBe(true);
    expect(await getDb().select().from(notificationDeliveries)).toMatchObject([
      { id: stale.id, attempts: 1, nextAttemptAt: at(3 * LEASE), claimedUntil: null },
    ]);
    expect(await hasDueDelivery(getDb(), at(3 * LEASE - 1))).toBe(false);
    const [again] = await claimDueDeliveries(getDb(), {
      now: at(3 * LEASE),
      leaseUntil: at(4 * LEASE),
      limit: 1,
    });
    expect(again?.attempts).toBe(1);
    expect(again && (await finishDelivery(getDb(), again))).toBe(true);
    expect(await nextClaimableAt(getDb())).toBeUndefined();
  });
});
