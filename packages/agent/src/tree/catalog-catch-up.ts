/**
 * @module tree/catalog-catch-up
 * The file catalogue's step after a backup: every snapshot the server is still owed, in order.
 * A schedule backs up its source groups back to back, and each next backup stops the one
 * before's after-finish work, so the catalogue of every group but the last used to be skipped
 * every time; a later delta against the old base would then claim the base's versions for the
 * skipped snapshots too, which is wrong for files changed in between. So this catalogues first
 * the backed-up group's snapshots past its base (catalog-plan.ts: oldest first, this host's only,
 * at most CATALOG_CATCH_UP_MAX), then those of every other group of the repository this agent
 * has a base for (catalog-state.ts `listCatalogBases`): the last backup of a schedule catches up
 * the groups before it. Each snapshot gets its own index (the tree browser's build, not pinned:
 * the backup pinned its own new snapshot, the one browsed first) and its own delta, against the
 * base the one before it left (catalog-sender.ts, one delta at a time). The job's signal stops it
 * all between and within steps: the base stays at the last snapshot applied, so nothing is lost,
 * only delayed to the next run. No connection or no ack stops it too (the next would fare no
 * better); a snapshot that cannot be indexed or catalogued (too large, refused) is passed over,
 * its versions folding into the next one's, so that no group is stuck behind it forever.
 */
import type { Snapshot } from "@fleetback/protocol";
import type { Logger } from "../log/logger.js";
import { CATALOG_CATCH_UP_MAX, planCatalogue } from "./catalog-plan.js";
import type { CatalogResult, CatalogSnapshot } from "./catalog-sender.js";
import {
  type CatalogBaseHeader,
  catalogStateFile,
  listCatalogBases,
  readCatalogHeader,
} from "./catalog-state.js";

/** What a backup hands the catalogue: its group and the repository's snapshots after it. */
export interface CatalogRequest {
  /** Keys the bases; never logged. */
  repositoryUrl: string;
  /** The backed-up group, caught up first. */
  tag: string;
  /** The hostname the backup was made under: only snapshots made under it are catalogued. */
  hostname: string;
  /** The repository's snapshots (`restic snapshots`, newest first). */
  snapshots: readonly Snapshot[];
}

/** One snapshot's step: its delta's result, or `unindexed` when no index could be built. */
export interface CatalogStep {
  tag: string;
  snapshotId: string;
  result: CatalogResult | "unindexed";
}

export interface CatalogCatchUpOptions {
  stateDir: string;
  /** Builds the snapshot's index, or finds it built, without pinning it; its directory. */
  index(snapshotId: string, signal: AbortSignal): Promise<string | undefined>;
  /** Sends one delta and waits for its ack (catalog-sender.ts); never throws. */
  send(snapshot: CatalogSnapshot, signal: AbortSignal): Promise<CatalogResult>;
  log: Logger;
  maxSnapshots?: number;
}

/** Catalogues what `request` makes due; resolves to the steps taken, in order. Never throws. */
export type CatalogCatchUp = (request: CatalogRequest, signal: AbortSignal) => Promise<CatalogStep[]>;

/** Results after which the next delta would fare no better in this run. */
const STOPS_THE_RUN: ReadonlySet<CatalogStep["result"]> = new Set(["aborted", "unsent", "unanswered"]);

export function createCatalogCatchUp(options: CatalogCatchUpOptions): CatalogCatchUp {
  const { log } = options;
  const max = options.maxSnapshots ?? CATALOG_CATCH_UP_MAX;

  /** One group's due snapshots in order; false when the run stops. */
  const catchUpGroup = async (
    request: CatalogRequest,
    tag: string,
    base: CatalogBaseHeader | undefined,
    steps: CatalogStep[],
    signal: AbortSignal,
  ): Promise<boolean> => {
    const plan = planCatalogue(request.snapshots, { tag, hostname: request.hostname }, base, max);
    if (plan.skipped > 0) {
      log.info(
        "the file catalogue skips older snapshots of the group; their versions fold into the next one's",
        {
          tag,
          base_snapshot_id: base?.snapshot_id,
          skipped: plan.skipped,
          catalogued: plan.snapshots.length,
        },
      );
    }
    if (plan.snapshots.length > 1 || (plan.snapshots.length === 1 && tag !== request.tag)) {
      log.info("the file catalogue catches up", {
        tag,
        base_snapshot_id: base?.snapshot_id,
        snapshots: plan.snapshots.length,
      });
    }
    for (const snapshot of plan.snapshots) {
      if (signal.aborted) {
        return false;
      }
      const indexDir = await options.index(snapshot.id, signal);
      if (signal.aborted) {
        return false;
      }
      if (indexDir === undefined) {
        log.info("no index of the snapshot for the file catalogue; its versions fold into the next one's", {
          tag,
          snapshot_id: snapshot.id,
        });
        steps.push({ tag, snapshotId: snapshot.id, result: "unindexed" });
        continue;
      }
      const result = await options.send(
        { indexDir, repositoryUrl: request.repositoryUrl, snapshotId: snapshot.id, tag, time: snapshot.time },
        signal,
      );
      steps.push({ tag, snapshotId: snapshot.id, result });
      if (STOPS_THE_RUN.has(result)) {
        return false;
      }
    }
    return true;
  };

  const run = async (request: CatalogRequest, signal: AbortSignal, steps: CatalogStep[]): Promise<void> => {
    const own = await readCatalogHeader(
      catalogStateFile(options.stateDir, request.repositoryUrl, request.tag),
      request.tag,
    );
    if (!(await catchUpGroup(request, request.tag, own, steps, signal))) {
      return;
    }
    // Read after the own group: its base may just have moved, and it is passed over anyway.
    const others = (await listCatalogBases(options.stateDir, request.repositoryUrl)).filter(
      (header) => header.tag !== request.tag,
    );
    for (const header of others) {
      if (signal.aborted || !(await catchUpGroup(request, header.tag, header, steps, signal))) {
        return;
      }
    }
  };

  return async (request, signal) => {
    const steps: CatalogStep[] = [];
    try {
      await run(request, signal, steps);
    } catch (cause) {
      // The index or the state directory failed outside the sender; every base stays as it was.
      log.warn("catching up the file catalogue failed; keeping the bases", {
        tag: request.tag,
        error: String(cause),
      });
    }
    return steps;
  };
}
