/**
 * @module tree/catalog-sender
 * The agent's side of the file catalogue (protocol 15): once a backup's new snapshot is indexed
 * (tree-browser.ts `prebuild`), its files are compared with the source group's base
 * (catalog-state.ts) and the difference goes out as `catalog.delta` parts; then one `catalog.ack`
 * decides. Neither listing is held: a merge of the two counts the delta's parts (every part names
 * how many there are), a second merge makes them as they go out (a one-part delta is kept from the
 * first), and the new base is written from the index, or renewed in place when nothing changed
 * (catalog-merge.ts). The index stays open throughout, so an eviction meanwhile takes nothing away. `applied`: the new snapshot becomes the base. `resend_full`: the
 * server's base is another one (an ack this agent never got), so every path goes again with no
 * base, once; a second `resend_full` means the two disagree on something a resend cannot fix.
 * `refused`, no ack in time, no connection or the next job's arrival: the old base stays, and the
 * next backup's delta is against it (the server answers `resend_full` if it had applied this one).
 * One delta is in flight at a time: acks name a snapshot and tag, not a request, and parts of two
 * deltas interleaved would be refused as out of order. Nothing here fails the backup, which has
 * ended already; everything is logged without the repository's URL (it may hold credentials).
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { CATALOG_TAG_MAX_LENGTH, type CatalogAck, type CatalogDelta } from "@fleetback/protocol";
import type { LogFields, Logger } from "../log/logger.js";
import type { CancelTimer, Timers } from "../time/timers.js";
import {
  type CatalogHeader,
  DEFAULT_PART_LIMITS,
  diffCatalog,
  type PartLimits,
  PREFERRED_PART_LIMITS,
  splitDelta,
} from "./catalog-delta.js";
import { catalogFiles, openIndexListing } from "./catalog-listing.js";
import {
  CatalogOrderError,
  type DeltaPlan,
  deltaParts,
  type Listing,
  noting,
  planDelta,
} from "./catalog-merge.js";
import {
  type CatalogBaseHeader,
  catalogStateFile,
  openCatalogBase,
  readCatalogBase,
  renewCatalogBase,
  writeCatalogBaseLines,
} from "./catalog-state.js";

/** How long `catalog.ack` may take after the last part; the server applies each part as it arrives. */
export const CATALOG_ACK_TIMEOUT_MS = 120_000;

/** The new snapshot of a source group, and where its index lies. */
export interface CatalogSnapshot {
  indexDir: string;
  /** Keys the base with the tag; never logged. */
  repositoryUrl: string;
  snapshotId: string;
  tag: string;
  time: string;
}

/**
 * What became of a delta: `applied` moved the base; every other outcome kept it. `resend_full`:
 * the full resend was answered so too.
 */
export type CatalogResult =
  | "applied"
  | "resend_full"
  | "refused"
  | "unanswered"
  | "unsent"
  | "aborted"
  | "too_large"
  | "failed";

export interface CatalogSenderOptions {
  stateDir: string;
  /** False when the part did not go out (no connection): no ack will come for it. */
  send(delta: CatalogDelta): boolean;
  timers: Timers;
  log: Logger;
  ackTimeoutMs?: number;
  partLimits?: PartLimits;
}

export interface CatalogSender {
  /** Sends the delta of `snapshot` and waits for its ack, or `signal`; never throws. */
  send(snapshot: CatalogSnapshot, signal: AbortSignal): Promise<CatalogResult>;
  /** A `catalog.ack` from the server; one that answers no delta in flight is ignored. */
  ack(ack: CatalogAck): void;
}

/** `sameFiles`: the delta was empty against a base, whose paths are the new snapshot's exactly. */
type Delivery =
  | { kind: "ack"; ack: CatalogAck; sameFiles?: boolean }
  | { kind: "unanswered" | "unsent" | "aborted" }
  | { kind: "too_large"; needed: number };

/** A listing the merge cannot use, found before any part went out. */
interface OutOfOrder {
  kind: "out_of_order";
  reason: string;
}

interface Waiter {
  snapshotId: string;
  tag: string;
  answer(ack: CatalogAck): void;
}

export function createCatalogSender(options: CatalogSenderOptions): CatalogSender {
  const { log } = options;
  const ackTimeoutMs = options.ackTimeoutMs ?? CATALOG_ACK_TIMEOUT_MS;
  let waiter: Waiter | undefined;
  let previous: Promise<unknown> = Promise.resolve();

  /**
   * Sends the parts in order as they are made and waits for the one ack, which may come before the
   * last part. `header` names the delta's snapshot and tag, which its ack names too.
   */
  const deliver = async (
    header: CatalogHeader,
    parts: AsyncIterable<CatalogDelta> | Iterable<CatalogDelta>,
    signal: AbortSignal,
  ): Promise<Delivery> => {
    const state: { result?: Delivery } = {};
    let settle: (result: Delivery) => void = () => undefined;
    const settled = new Promise<Delivery>((resolve) => {
      settle = resolve;
    });
    const finish = (result: Delivery) => {
      if (state.result === undefined) {
        state.result = result;
        settle(result);
      }
    };
    waiter = {
      snapshotId: header.snapshot_id,
      tag: header.tag,
      answer: (ack) => finish({ kind: "ack", ack }),
    };
    const onAbort = () => finish({ kind: "aborted" });
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) {
      onAbort();
    }
    let cancelTimer: CancelTimer | undefined;
    try {
      for await (const part of parts) {
        if (state.result !== undefined) {
          break;
        }
        if (!options.send(part)) {
          finish({ kind: "unsent" });
          break;
        }
        // Lets an early ack (a part the server could not take) and the socket's other traffic in.
        await nextTurn();
      }
      if (state.result === undefined) {
        cancelTimer = options.timers.after(ackTimeoutMs, () => finish({ kind: "unanswered" }));
      }
      return await settled;
    } finally {
      cancelTimer?.();
      signal.removeEventListener("abort", onAbort);
      waiter = undefined;
    }
  };

  const limits = options.partLimits ?? DEFAULT_PART_LIMITS;
  // Smaller parts when the delta allows, unless the caller set the limits.
  const planned = options.partLimits === undefined ? PREFERRED_PART_LIMITS : [limits];

  const announce = (header: CatalogHeader, changed: number, removed: number, parts: number) => {
    const { snapshot_id, tag, base_snapshot_id } = header;
    log.info("sending the file catalogue", { snapshot_id, tag, base_snapshot_id, changed, removed, parts });
  };

  /** Both listings in one map each: only when one is not in the order the merge needs. */
  const attemptInMaps = async (
    header: CatalogHeader,
    base: ReadonlyMap<string, string> | undefined,
    current: Listing,
    signal: AbortSignal,
  ): Promise<Delivery> => {
    const changes = diffCatalog(base, await catalogFiles(current()));
    const split = splitDelta(header, changes, limits);
    if (!split.ok) {
      return { kind: "too_large", needed: split.needed };
    }
    announce(header, changes.changed.length, changes.removed.length, split.parts.length);
    return deliver(header, split.parts, signal);
  };

  /** One delta, streamed: counted in one merge of the listings, sent from a second. */
  const attempt = async (
    header: CatalogHeader,
    base: Listing | undefined,
    current: Listing,
    signal: AbortSignal,
  ): Promise<Delivery | OutOfOrder> => {
    let plan: DeltaPlan;
    try {
      plan = await planDelta(base, current, planned);
    } catch (cause) {
      // Found while counting, before any part went out: the caller may still compare otherwise.
      if (cause instanceof CatalogOrderError) {
        return { kind: "out_of_order", reason: cause.message };
      }
      throw cause;
    }
    if (plan.starts.length > limits.parts) {
      return { kind: "too_large", needed: plan.starts.length };
    }
    announce(header, plan.changed, plan.removed, plan.starts.length);
    const delivery = await deliver(header, deltaParts(header, plan, base, current), signal);
    const sameFiles = base !== undefined && plan.changed + plan.removed === 0;
    return delivery.kind === "ack" && sameFiles ? { ...delivery, sameFiles } : delivery;
  };

  /** `current` written out, or with `sameFiles` the base's own lines kept under the new header. */
  const saveBase = async (
    file: string,
    header: CatalogBaseHeader,
    current: Listing,
    sameFiles: boolean,
    fields: LogFields,
  ) => {
    try {
      const paths = sameFiles
        ? await renewCatalogBase(file, header)
        : await writeCatalogBaseLines(file, header, current());
      log.info("the file catalogue was applied", { ...fields, paths });
    } catch (cause) {
      // The server moved on and this agent did not: its next delta is answered `resend_full`.
      log.warn("the file catalogue was applied, but its new base could not be saved", {
        ...fields,
        error: String(cause),
      });
    }
  };

  /** `current`: the new snapshot's listing, read to count the delta, to send it, to keep it. */
  const catalogueFrom = async (
    snapshot: CatalogSnapshot,
    current: Listing,
    signal: AbortSignal,
  ): Promise<CatalogResult> => {
    const fields = { snapshot_id: snapshot.snapshotId, tag: snapshot.tag };
    const file = catalogStateFile(options.stateDir, snapshot.repositoryUrl, snapshot.tag);
    const unreadable = (reason: string) =>
      log.warn("the file catalogue's base is unreadable; sending every path", { ...fields, reason });
    const opened = await openCatalogBase(file, snapshot.tag);
    if (opened.kind === "corrupt") {
      unreadable(opened.reason);
    }
    const header = { snapshot_id: snapshot.snapshotId, tag: snapshot.tag, time: snapshot.time };
    /** One delta, against the base when `withBase` (and it reads back whole), else every path. */
    const send = async (withBase: boolean): Promise<Delivery> => {
      const baseId = withBase && opened.kind === "base" ? opened.header.snapshot_id : null;
      let damage: { cause: unknown } | undefined;
      const base: Listing | undefined =
        baseId !== null && opened.kind === "base"
          ? () =>
              noting(opened.paths(), (cause) => {
                damage = { cause };
              })
          : undefined;
      try {
        const delivery = await attempt({ ...header, base_snapshot_id: baseId }, base, current, signal);
        if (delivery.kind !== "out_of_order") {
          return delivery;
        }
        log.info("a listing is not in the merge's order; the file catalogue compares it in memory", {
          ...fields,
          reason: delivery.reason,
        });
        const read = baseId === null ? undefined : await readCatalogBase(file, snapshot.tag);
        if (read?.kind === "corrupt") {
          unreadable(read.reason);
        }
        const kept = read?.kind === "base" ? read.base : undefined;
        return await attemptInMaps(
          { ...header, base_snapshot_id: kept?.snapshot_id ?? null },
          kept?.files,
          current,
          signal,
        );
      } catch (cause) {
        // A damaged line shows only once the base is read: then it is no base, as a damaged header.
        if (damage === undefined || damage.cause !== cause) {
          throw cause;
        }
        unreadable(cause instanceof Error ? cause.message : String(cause));
        return send(false);
      }
    };
    let delivery = await send(true);
    if (delivery.kind === "ack" && delivery.ack.status === "resend_full") {
      log.info("the server asked for every path of the file catalogue again", {
        ...fields,
        error: delivery.ack.error,
      });
      delivery = await send(false);
    }
    switch (delivery.kind) {
      case "ack": {
        const { status, error } = delivery.ack;
        if (status === "applied") {
          await saveBase(file, header, current, delivery.sameFiles === true, fields);
        } else if (status === "resend_full") {
          log.warn(
            "the server asked for every path again after a full resend; giving up until the next backup",
            {
              ...fields,
              error,
            },
          );
        } else {
          log.warn("the server refused the file catalogue; keeping the base", { ...fields, error });
        }
        return status;
      }
      case "too_large":
        log.warn("the file catalogue's delta needs more parts than a delta may have; nothing sent", {
          ...fields,
          parts: delivery.needed,
        });
        return "too_large";
      case "unsent":
        // agent.ts logs a frame it refused to encode; otherwise the socket was down.
        log.info("the file catalogue was not sent (no connection); keeping the base", fields);
        return "unsent";
      case "aborted":
        log.info(
          "the file catalogue was stopped before its ack (a next job or a stop); keeping the base",
          fields,
        );
        return "aborted";
      case "unanswered":
        log.warn("no catalog.ack came for the file catalogue; keeping the base", {
          ...fields,
          waited_ms: ackTimeoutMs,
        });
        return "unanswered";
    }
  };

  const catalogue = async (snapshot: CatalogSnapshot, signal: AbortSignal): Promise<CatalogResult> => {
    if (snapshot.tag.length > CATALOG_TAG_MAX_LENGTH) {
      log.warn("the source group's tag is too long for the file catalogue; nothing sent", {
        snapshot_id: snapshot.snapshotId,
        tag: snapshot.tag,
      });
      return "failed";
    }
    if (signal.aborted) {
      return "aborted";
    }
    // Held open throughout: an index evicted meanwhile (or deleted) still reads whole.
    const listing = await openIndexListing(snapshot.indexDir);
    try {
      return await catalogueFrom(snapshot, () => listing.lines(), signal);
    } finally {
      await listing.close();
    }
  };

  return {
    send(snapshot, signal) {
      const run = previous.then(() =>
        catalogue(snapshot, signal).catch((cause: unknown): CatalogResult => {
          log.warn("the file catalogue failed; keeping the base", {
            snapshot_id: snapshot.snapshotId,
            tag: snapshot.tag,
            error: String(cause),
          });
          return "failed";
        }),
      );
      previous = run;
      return run;
    },
    ack(ack) {
      if (waiter !== undefined && waiter.snapshotId === ack.snapshot_id && waiter.tag === ack.tag) {
        waiter.answer(ack);
        return;
      }
      log.debug("a catalog.ack answers no delta in flight; ignored", {
        snapshot_id: ack.snapshot_id,
        tag: ack.tag,
        status: ack.status,
      });
    },
  };
}
