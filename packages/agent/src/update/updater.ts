/**
 * @module update/updater
 * The agent's side of `command.update`: download with the bearer, check SHA-256 and signature,
 * stage, wait for running jobs, activate, report `restarting` and ask the agent to exit with 75.
 * Every failure is answered with `update.result refused` and leaves the running agent as it was.
 * After each accepted hello it commits this version's trial and reports a rollback once.
 *
 * Running jobs: the update waits until the job queue is idle (for at most UPDATE_JOB_WAIT_MS),
 * because a restart would cancel a backup the operator did not choose to cancel, and the
 * server does not resend a refused update; only if jobs keep running that long is it refused.
 */
import { join } from "node:path";
import type { AgentKind, CommandUpdate, UpdateResult } from "@fleetback/protocol";
import type { Logger } from "../log/logger.js";
import type { Clock } from "../time/clock.js";
import type { Timers } from "../time/timers.js";
import { checkArtefact } from "./artefact-check.js";
import { commitTrial } from "./boot-decision.js";
import { type ArtefactRef, EMPTY_BOOT_RECORD, VERSION_PATTERN } from "./boot-record.js";
import type { DownloadArtefact } from "./download.js";
import type { FileOps } from "./file-ops.js";
import type { ReleaseKeyResult } from "./release-key.js";
import type { UpdatePlatform } from "./update-platform.js";

/** A version that rolled back is not tried again with the same bytes for this long. */
export const FAILED_RETRY_AFTER_MS = 60 * 60 * 1000;
export const UPDATE_JOB_WAIT_MS = 30 * 60 * 1000;

export interface UpdaterOptions {
  selfVersion: string;
  selfKind: AgentKind;
  serverUrl: string;
  token: string;
  tlsPin?: string;
  platform: UpdatePlatform;
  fs: FileOps;
  download: DownloadArtefact;
  releaseKey: () => Promise<ReleaseKeyResult>;
  /** Sends `update.result`; false when no connection is up. */
  send: (result: UpdateResult) => boolean;
  /** Resolves when no job is queued or running. */
  jobsIdle: () => Promise<void>;
  /** Stops the agent so that it exits with EXIT.restartForUpdate. */
  restart: (version: string) => void;
  clock: Clock;
  timers: Timers;
  log: Logger;
}

export interface Updater {
  handle(command: CommandUpdate): Promise<void>;
  /** The server accepted this connection's hello. */
  onAccepted(): Promise<void>;
}

class Refusal extends Error {}

export function createUpdater(options: UpdaterOptions): Updater {
  const { platform, fs, log, clock } = options;
  let busy = false;
  // An update right after the first server message must see that message's commit.
  let accepting: Promise<void> = Promise.resolve();

  const recordOrEmpty = async () => {
    const read = await platform.readRecord();
    if (!read.ok) {
      throw new Refusal(read.problem);
    }
    return read.record ?? EMPTY_BOOT_RECORD;
  };

  const waitForJobs = () =>
    new Promise<boolean>((resolve) => {
      const cancel = options.timers.after(UPDATE_JOB_WAIT_MS, () => resolve(false));
      void options.jobsIdle().then(() => {
        cancel();
        resolve(true);
      });
    });

  const apply = async (command: CommandUpdate, tempPaths: string[]) => {
    if (!new RegExp(VERSION_PATTERN).test(command.version)) {
      throw new Refusal(`${JSON.stringify(command.version)} is not a version this agent can store`);
    }
    const serverOrigin = new URL(options.serverUrl).origin;
    if (!URL.canParse(command.url) || new URL(command.url).origin !== serverOrigin) {
      // The bearer token goes with the download: only ever to the agent's own server.
      throw new Refusal(`the update URL is not on this agent's server (${serverOrigin})`);
    }
    const key = await options.releaseKey();
    if (!key.ok) {
      throw new Refusal(key.error);
    }
    log.info("downloading update", { version: command.version });
    const downloaded = await options.download({
      url: command.url,
      token: options.token,
      tlsPin: options.tlsPin,
      dir: platform.dir,
    });
    if (!downloaded.ok) {
      throw new Refusal(downloaded.error);
    }
    tempPaths.push(downloaded.path);
    const problem = await checkArtefact(downloaded.path, downloaded.sha256, command, key.key);
    if (problem !== undefined) {
      throw new Refusal(problem);
    }
    const ref: ArtefactRef = {
      version: command.version,
      file: platform.artefactFile(command.version, options.selfKind),
      sha256: command.sha256,
      kind: options.selfKind,
      // Verified above; the launcher verifies it again on every start (boot-record.ts).
      signature: command.signature,
    };
    await platform.stage(downloaded.path, ref);
    // Until the record names it, the staged file is as disposable as the download.
    tempPaths.push(join(platform.dir, ref.file));
    if (!(await waitForJobs())) {
      throw new Refusal(
        `jobs were still running after ${UPDATE_JOB_WAIT_MS / 60_000} min; not updating now (send the update again later)`,
      );
    }
    const record = await recordOrEmpty();
    await platform.activate({ ...record, trial: { ...ref, staged_at: clock.now().toISOString() } });
    log.info("update staged; restarting", { version: command.version, size: downloaded.size });
    options.send({ version: command.version, status: "restarting" });
    options.restart(command.version);
  };

  const accept = async () => {
    const read = await platform.readRecord();
    if (!read.ok || read.record === undefined) {
      return;
    }
    let record = read.record;
    const committed = commitTrial(record, options.selfVersion);
    if (committed !== undefined) {
      record = committed;
      await platform.writeRecord(record);
      log.info("update committed: the server accepted this version", { version: options.selfVersion });
    }
    const failed = record.failed;
    if (failed !== undefined && !failed.reported) {
      const sent = options.send({ version: failed.version, status: "rolled_back", error: failed.reason });
      if (sent) {
        await platform.writeRecord({ ...record, failed: { ...failed, reported: true } });
      }
    }
  };

  return {
    async handle(command) {
      if (command.version === options.selfVersion) {
        log.info("update ignored: this version runs already", { version: command.version });
        return;
      }
      if (busy) {
        log.info("update ignored: another update is in progress", { version: command.version });
        return;
      }
      busy = true;
      let restarting = false;
      const tempPaths: string[] = [];
      try {
        await accepting.catch(() => {});
        const failed = (await recordOrEmpty()).failed;
        const failedAgo = failed ? clock.now().getTime() - Date.parse(failed.at) : Number.NaN;
        if (failed?.sha256 === command.sha256 && failedAgo < FAILED_RETRY_AFTER_MS) {
          log.warn("update not retried: these bytes rolled back less than an hour ago", {
            version: command.version,
            reason: failed.reason,
          });
          options.send({ version: command.version, status: "rolled_back", error: failed.reason });
          return;
        }
        await apply(command, tempPaths);
        tempPaths.length = 0;
        restarting = true;
      } catch (cause) {
        // Refusals carry our own words; anything else (fs errors) names paths, never the token.
        const error = cause instanceof Error ? cause.message : String(cause);
        log.warn("update refused", { version: command.version, error });
        options.send({ version: command.version, status: "refused", error });
      } finally {
        // After `restarting` the agent is on its way out: later offers wait for the next version.
        busy = restarting;
        for (const path of tempPaths) {
          await fs.remove(path).catch(() => {});
        }
      }
    },
    onAccepted() {
      accepting = accept();
      return accepting;
    },
  };
}
