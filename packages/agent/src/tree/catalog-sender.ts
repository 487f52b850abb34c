/**
 * @module tree/catalog-sender
 * The agent's side of the file catalogue (protocol 15): once a backup's new snapshot is indexed
 * (tree-browser.ts `prebuild`), its files are compared with the source group's base
 * (catalog-state.ts) and the difference goes out as `catalog.delta` parts (catalog-delta.ts); then
 * one `catalog.ack` decides. `applied`: the new snapshot becomes the base. `resend_full`: the
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
  type CatalogFiles,
  type CatalogHeader,
  DEFAULT_PART_LIMITS,
  diffCatalog,
  type PartLimits,
  splitDelta,
} from "./catalog-delta.js";
import { catalogFiles } from "./catalog-listing.js";
import { type CatalogBase, catalogStateFile, readCatalogBase, writeCatalogBase } from "./catalog-state.js";

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

type Delivery =
  | { kind: "ack"; ack: CatalogAck }
  | { kind: "unanswered" | "unsent" | "aborted" }
  | { kind: "too_large"; needed: number };

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

  /** Sends the parts in order and waits for the one ack, which may come before the last part. */
  const deliver = async (parts: readonly CatalogDelta[], signal: AbortSignal): Promise<Delivery> => {
    const first = parts[0];
    if (first === undefined) {
      return { kind: "unsent" };
    }
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
    waiter = { snapshotId: first.snapshot_id, tag: first.tag, answer: (ack) => finish({ kind: "ack", ack }) };
    const onAbort = () => finish({ kind: "aborted" });
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) {
      onAbort();
    }
    let cancelTimer: CancelTimer | undefined;
    try {
      for (const part of parts) {
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

  const attempt = async (
    header: CatalogHeader,
    base: ReadonlyMap<string, string> | undefined,
    files: CatalogFiles,
    signal: AbortSignal,
  ): Promise<Delivery> => {
    const changes = diffCatalog(base, files);
    const split = splitDelta(header, changes, options.partLimits ?? DEFAULT_PART_LIMITS);
    if (!split.ok) {
      return { kind: "too_large", needed: split.needed };
    }
    log.info("sending the file catalogue", {
      snapshot_id: header.snapshot_id,
      tag: header.tag,
      base_snapshot_id: header.base_snapshot_id,
      changed: changes.changed.length,
      removed: changes.removed.length,
      parts: split.parts.length,
    });
    return deliver(split.parts, signal);
  };

  const saveBase = async (file: string, base: CatalogBase, fields: LogFields) => {
    try {
      await writeCatalogBase(file, base);
      log.info("the file catalogue was applied", { ...fields, paths: base.files.size });
    } catch (cause) {
      // The server moved on and this agent did not: its next delta is answered `resend_full`.
      log.warn("the file catalogue was applied, but its new base could not be saved", {
        ...fields,
        error: String(cause),
      });
    }
  };

  const catalogue = async (snapshot: CatalogSnapshot, signal: AbortSignal): Promise<CatalogResult> => {
    const fields = { snapshot_id: snapshot.snapshotId, tag: snapshot.tag };
    if (snapshot.tag.length > CATALOG_TAG_MAX_LENGTH) {
      log.warn("the source group's tag is too long for the file catalogue; nothing sent", fields);
      return "failed";
    }
    if (signal.aborted) {
      return "aborted";
    }
    const file = catalogStateFile(options.stateDir, snapshot.repositoryUrl, snapshot.tag);
    const read = await readCatalogBase(file, snapshot.tag);
    if (read.kind === "corrupt") {
      log.warn("the file catalogue's base is unreadable; sending every path", {
        ...fields,
        reason: read.reason,
      });
    }
    const base = read.kind === "base" ? read.base : undefined;
    const files = await catalogFiles(snapshot.indexDir);
    const header = { snapshot_id: snapshot.snapshotId, tag: snapshot.tag, time: snapshot.time };
    let delivery = await attempt(
      { ...header, base_snapshot_id: base?.snapshot_id ?? null },
      base?.files,
      files,
      signal,
    );
    if (delivery.kind === "ack" && delivery.ack.status === "resend_full") {
      log.info("the server asked for every path of the file catalogue again", {
        ...fields,
        error: delivery.ack.error,
      });
      delivery = await attempt({ ...header, base_snapshot_id: null }, undefined, files, signal);
    }
    switch (delivery.kind) {
      case "ack": {
        const { status, error } = delivery.ack;
        if (status === "applied") {
          await saveBase(file, { ...header, files }, fields);
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
