/**
 * @module update/trial-watchdog
 * The deadline of a version on trial: if the server has not accepted its hello within the trial
 * period (UPDATE_TRIAL_MS unless FLEETBACK_UPDATE_TRIAL says otherwise) of its start, the
 * launcher rolls the record back and ends the process, so the service manager starts the
 * previous version. The record is read again when the timer fires, so a commit (made by the
 * trial agent, maybe in another process) always wins: the watchdog never fires after a commit.
 */
import { UPDATE_TRIAL_MS } from "@fleetback/protocol";
import { formatTimeout, parseJobTimeout } from "../config/job-timeouts.js";
import type { Logger } from "../log/logger.js";
import type { Clock } from "../time/clock.js";
import type { CancelTimer, Timers } from "../time/timers.js";
import { rollBack } from "./boot-decision.js";
import type { UpdatePlatform } from "./update-platform.js";

/**
 * Sets the trial period on an agent (the unit's `Environment=`), in the job timeouts' format
 * (`90s`, `5m`): longer for a host whose first connection after a restart is slow (a VPN that
 * comes up late), shorter in tests that roll back a version that never connects. It is read by
 * the launcher, i.e. the version that starts the trial, not the one on trial.
 */
export const UPDATE_TRIAL_ENV = "FLEETBACK_UPDATE_TRIAL";

/** The setting from the environment; a value that is not a duration keeps the default. */
export function updateTrialFromEnv(env: NodeJS.ProcessEnv): { ms: number; problem?: string } {
  const text = env[UPDATE_TRIAL_ENV];
  if (text === undefined || text.trim() === "") {
    return { ms: UPDATE_TRIAL_MS };
  }
  const parsed = parseJobTimeout(text);
  // No "off": a trial without a deadline would let a version that never connects run forever.
  if (parsed === undefined || parsed === null) {
    return {
      ms: UPDATE_TRIAL_MS,
      problem: `${UPDATE_TRIAL_ENV}="${text}" is not a duration such as 120s or 5m; using ${formatTimeout(UPDATE_TRIAL_MS)}`,
    };
  }
  return { ms: parsed };
}

export interface TrialWatchdogOptions {
  platform: Pick<UpdatePlatform, "readRecord" | "writeRecord">;
  version: string;
  deadline: Date;
  timers: Timers;
  clock: Clock;
  log: Logger;
  /** Ends the trial version's run (the launcher then exits with EXIT.restartForUpdate). */
  onExpired: () => void;
}

export function startTrialWatchdog(options: TrialWatchdogOptions): CancelTimer {
  const { platform, version, clock, log } = options;
  const expire = async () => {
    const read = await platform.readRecord();
    if (!read.ok) {
      log.error("trial deadline passed, but the boot record cannot be read; leaving it", {
        problem: read.problem,
      });
      return;
    }
    const record = read.record;
    if (record?.trial?.version !== version) {
      return;
    }
    const seconds = Math.round(
      (options.deadline.getTime() - Date.parse(record.trial.started_at ?? "")) / 1000,
    );
    const reason = `version ${version} did not connect to the server within ${Number.isFinite(seconds) ? seconds : "?"} s`;
    await platform.writeRecord(rollBack(record, reason, clock.now()));
    log.error(`rolled back: ${reason}`, { version });
    options.onExpired();
  };
  const delay = Math.max(0, options.deadline.getTime() - clock.now().getTime());
  // Unref'd: the trial's own work keeps the process alive, and an agent that stops by itself
  // before the deadline must not be held back by its watchdog.
  return options.timers.after(
    delay,
    () => {
      expire().catch((cause: unknown) => log.error("trial rollback failed", { error: String(cause) }));
    },
    { unref: true },
  );
}
