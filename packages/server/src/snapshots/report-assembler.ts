/**
 * @module snapshots/report-assembler
 * Puts a `snapshots.report` sent in parts (protocol 2) back together for one agent session. The
 * cached list is replaced only once every part of a `report_id` is in, so an incomplete report
 * leaves the old list as it was. Memory stays bounded: one assembly per session, superseded by a
 * newer `report_id` or a whole report, capped in snapshots, dropped after `idleMs` without a new
 * part and on disconnect. Ids come from the agent's monotonic ULID generator, so a lower id than
 * the newest seen is a stale part. Logs carry ids and counts, never snapshot contents.
 */
import {
  isSnapshotsReportPart,
  type Snapshot,
  type SnapshotsReport,
  type SnapshotsReportPart,
  type SnapshotsReportWhole,
  type Timers,
} from "@fleetback/protocol";
import type { Logger } from "../log.js";

/** An assembly without a new part for this long is dropped. */
export const REPORT_ASSEMBLY_IDLE_MS = 120_000;

/**
 * Snapshots one assembly may hold: far beyond any real repository (a part of 512 KiB holds about
 * 1,700 real ones), and a bound on memory however small the snapshots a peer sends.
 */
export const REPORT_ASSEMBLY_MAX_SNAPSHOTS = 200_000;

export interface ReportAssemblerOptions {
  hostId: string;
  log: Pick<Logger, "debug" | "warn">;
  timers: Timers;
  idleMs?: number;
  maxSnapshots?: number;
}

export interface ReportAssembly {
  reportId: string;
  parts: number;
  received: number;
  snapshots: number;
}

export interface ReportAssembler {
  /**
   * The report to apply now: a whole report at once, a parted one with its last part (in part
   * order, whatever order the parts came in); undefined while parts are missing or when the part
   * was dropped.
   */
  accept(report: SnapshotsReport): SnapshotsReportWhole | undefined;
  /** Drops the assembly in progress, e.g. on disconnect. */
  discard(reason: string): void;
  /** The assembly in progress, if any. */
  pending(): ReportAssembly | undefined;
}

interface Assembly {
  reportId: string;
  parts: number;
  refreshedAt: string;
  byPart: Map<number, Snapshot[]>;
  snapshots: number;
  cancelTimer: () => void;
}

export function createReportAssembler(options: ReportAssemblerOptions): ReportAssembler {
  const { hostId, log, timers } = options;
  const idleMs = options.idleMs ?? REPORT_ASSEMBLY_IDLE_MS;
  const maxSnapshots = options.maxSnapshots ?? REPORT_ASSEMBLY_MAX_SNAPSHOTS;
  let current: Assembly | undefined;
  /** The newest report_id seen on this session; parts of older ones are stale. */
  let newestId: string | undefined;

  const fieldsOf = (assembly: Assembly) => ({
    host_id: hostId,
    report_id: assembly.reportId,
    received: assembly.byPart.size,
    parts: assembly.parts,
    snapshots: assembly.snapshots,
  });

  function drop(level: "debug" | "warn", reason: string): void {
    if (current === undefined) {
      return;
    }
    current.cancelTimer();
    log[level]({ ...fieldsOf(current), reason }, "incomplete snapshot report dropped; cached list kept");
    current = undefined;
  }

  function armTimer(assembly: Assembly): void {
    assembly.cancelTimer();
    assembly.cancelTimer = timers.after(idleMs, () => {
      if (current === assembly) {
        drop("warn", `no part for ${idleMs / 1000} s`);
      }
    });
  }

  /** The assembly `part` belongs to, started or superseding as needed; undefined to ignore it. */
  function assemblyFor(part: SnapshotsReportPart): Assembly | undefined {
    const id = part.report_id;
    if (newestId !== undefined && id < newestId) {
      log.debug(
        { host_id: hostId, report_id: id, part: part.part },
        "part of a superseded snapshot report ignored",
      );
      return undefined;
    }
    if (id === newestId) {
      if (current === undefined) {
        log.debug(
          { host_id: hostId, report_id: id, part: part.part },
          "part of a finished snapshot report ignored",
        );
      }
      return current;
    }
    drop("debug", "superseded by a newer report");
    newestId = id;
    current = {
      reportId: id,
      parts: part.parts,
      refreshedAt: part.refreshed_at,
      byPart: new Map(),
      snapshots: 0,
      cancelTimer: () => {},
    };
    return current;
  }

  function add(part: SnapshotsReportPart): SnapshotsReportWhole | undefined {
    const assembly = assemblyFor(part);
    if (assembly === undefined) {
      return undefined;
    }
    if (
      part.part >= part.parts ||
      part.parts !== assembly.parts ||
      part.refreshed_at !== assembly.refreshedAt
    ) {
      drop("warn", `part ${part.part} of ${part.parts} does not fit the report's first part`);
      return undefined;
    }
    if (assembly.byPart.has(part.part)) {
      log.debug({ ...fieldsOf(assembly), part: part.part }, "duplicate part of a snapshot report ignored");
      return undefined;
    }
    if (assembly.snapshots + part.snapshots.length > maxSnapshots) {
      drop("warn", `more than ${maxSnapshots} snapshots`);
      return undefined;
    }
    assembly.byPart.set(part.part, part.snapshots);
    assembly.snapshots += part.snapshots.length;
    if (assembly.byPart.size < assembly.parts) {
      armTimer(assembly);
      return undefined;
    }
    assembly.cancelTimer();
    current = undefined;
    const inOrder = Array.from({ length: assembly.parts }, (_, index) => assembly.byPart.get(index) ?? []);
    return { snapshots: inOrder.flat(), refreshed_at: assembly.refreshedAt };
  }

  return {
    accept(report) {
      if (isSnapshotsReportPart(report)) {
        return add(report);
      }
      // A whole report is newer than any assembly still waiting; that one must not land after it.
      drop("debug", "superseded by a whole report");
      return report;
    },
    discard(reason) {
      drop("debug", reason);
    },
    pending() {
      return current === undefined
        ? undefined
        : {
            reportId: current.reportId,
            parts: current.parts,
            received: current.byPart.size,
            snapshots: current.snapshots,
          };
    },
  };
}
