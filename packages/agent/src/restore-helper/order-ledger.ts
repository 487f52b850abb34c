/**
 * @module restore-helper/order-ledger
 * What makes a signed restore order good once (issue 34), kept in the helper's own state
 * directory (systemd's StateDirectory, which the agent's unit cannot write):
 *
 * - `used-orders.json`: the job ids of orders in use or used, each until its order expires (an
 *   expired order is refused anyway, so the list stays as short as a day's restores). An order is
 *   claimed before restic starts and given back only when restic fails, so that the agent's
 *   unlock-and-retry of a stale lock can run the same restore again, and a crash keeps it used.
 * - `host-id`: the host this machine's helper serves, pinned by the first order it runs; an order
 *   for another host (taken from a second compromised machine) is refused. A new enrolment
 *   (install.sh) removes the pin.
 *
 * Claims are serialised in this process; systemd runs one helper per socket.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { RestoreOrderPayload } from "@fleetback/protocol";

/** Far above a day of restores; past it the helper refuses rather than grow its file. */
export const USED_ORDERS_MAX = 10_000;

export interface OrderLedger {
  claim(order: RestoreOrderPayload, now: Date): Promise<{ ok: true } | { ok: false; error: string }>;
  /** restic failed: the same order may run again until it expires. */
  release(jobId: string): Promise<void>;
}

type Used = Record<string, string>;

export function createOrderLedger(dir: string): OrderLedger {
  const usedFile = join(dir, "used-orders.json");
  const hostFile = join(dir, "host-id");
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const readUsed = async (): Promise<Used> => {
    try {
      const value: unknown = JSON.parse(await readFile(usedFile, "utf8"));
      return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Used) : {};
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === "ENOENT") {
        return {};
      }
      throw cause;
    }
  };
  const writeUsed = async (used: Used) => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const temp = `${usedFile}.tmp`;
    await writeFile(temp, JSON.stringify(used), { mode: 0o600 });
    await rename(temp, usedFile);
  };
  const pinnedHost = async (): Promise<string | undefined> => {
    try {
      return (await readFile(hostFile, "utf8")).trim() || undefined;
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === "ENOENT") {
        return undefined;
      }
      throw cause;
    }
  };
  return {
    claim: (order, now) =>
      serial(async () => {
        const host = await pinnedHost();
        if (host !== undefined && host !== order.host_id) {
          return {
            ok: false as const,
            error: `this machine's restore helper serves host ${host}, and the order is for host ${order.host_id}; a re-enrolled machine needs the installer run again`,
          };
        }
        const used: Used = {};
        for (const [jobId, expires] of Object.entries(await readUsed())) {
          if (typeof expires === "string" && Date.parse(expires) > now.getTime()) {
            used[jobId] = expires;
          }
        }
        if (used[order.job_id] !== undefined) {
          return { ok: false as const, error: `the restore order of job ${order.job_id} was used already` };
        }
        if (Object.keys(used).length >= USED_ORDERS_MAX) {
          return {
            ok: false as const,
            error: `the restore helper holds ${USED_ORDERS_MAX} unexpired orders; it takes more once some expire`,
          };
        }
        used[order.job_id] = order.expires_at;
        await writeUsed(used);
        if (host === undefined) {
          await writeFile(hostFile, `${order.host_id}\n`, { mode: 0o600 });
        }
        return { ok: true as const };
      }),
    release: (jobId) =>
      serial(async () => {
        const used = await readUsed();
        if (used[jobId] !== undefined) {
          delete used[jobId];
          await writeUsed(used);
        }
      }),
  };
}
