/**
 * @module jobs/restore-job
 * `restore`: pre hook, `restic restore`, post hook. argv is
 * `[global flags: caps, --json] restore <snapshot> --target <dir> [--no-ownership] [-vv]
 * --include <escaped path>...`.
 *
 * - Target: a new-directory restore expands `$HOME`, `${HOME}` or `~/` at run time and creates
 *   the directory (0700); an in-place restore targets `/` (restore-target.ts says why). A target
 *   with any other variable fails the job before anything runs.
 * - Refused before restic runs: writes in or over the agent's own directories, paths in them,
 *   and with restic older than 0.16 a non-empty target or symlinks where an in-place restore
 *   writes (restore-safety.ts says why).
 * - The agent's own directories are never restored (issue 33): a folder above one that the
 *   snapshot holds (taken before agents excluded them) is restored as the entries around it, found
 *   by one `restic ls` with the agent's own restic (tree/held-agent-dirs.ts), since restic takes
 *   no `--exclude` beside `--include`. The job log names what was left out.
 * - `--json` from 0.16 and `-vv` from 0.17 (per-file `verbose_status` lines; testdata/restic
 *   `restore-include-vv-json`); 0.14 prints text only, so its job shows no counts, only the start
 *   and the end.
 * - `--no-ownership` only for a new-directory restore (in place, ownership is put back as
 *   recorded), only from 0.17, and only when the binary's own `restore --help` lists it (no
 *   released restic up to 0.19.1 does; testdata/restic `help/restore.txt`). Without it the job log
 *   says that ownership is restored as recorded.
 * - `status` lines become throttled `job.progress` with an agent ETA and are never logged;
 *   per-file lines set `current_file` and are logged as they are (stdout), the `summary` goes into
 *   `job.finished.summary`.
 * - A restore that restored nothing fails, whatever restic's exit code (issue 31: a browsed path
 *   the agent had mangled matched nothing, and the job said "succeeded"): restic's summary says
 *   so from 0.16; before, the places it writes are looked at (restore-evidence.ts).
 */
import { mkdir } from "node:fs/promises";
import { normalize } from "node:path";
import type { CommandRunRestore } from "@fleetback/protocol";
import { createErrorCollector } from "../restic/error-collector.js";
import type { ToolFlagProbe } from "../restic/flag-probe.js";
import { literalPattern } from "../restic/literal-pattern.js";
import type { Restic } from "../restic/restic.js";
import { estimateEta, parseRestoreLine, summaryRestoredNothing } from "../restic/restore-output.js";
import { formatToolVersion, isAtLeast } from "../restic/version.js";
import { agentDirForms } from "../restore-helper/agent-dirs.js";
import { agentDirPathRefusal, agentDirRefusal, oldResticRefusal } from "../restore-helper/restore-safety.js";
import { expandRestoreTarget } from "../restore-helper/restore-target.js";
import { restorePathsAround } from "../tree/held-agent-dirs.js";
import { failed, type JobHandler, type JobOutcome, type ProgressState } from "./job-types.js";
import { jsonRunLines } from "./kept-stdout.js";
import { createProgressThrottle } from "./progress-throttle.js";
import { type RepositoryJobDeps, runRepositoryJob } from "./repository-job.js";
import { markRestorePlaces, nothingMatchedError } from "./restore-evidence.js";
import { toolOutcome } from "./tool-outcome.js";

export const NO_OWNERSHIP_FLAG = "--no-ownership";

export interface RestoreJobDeps extends RepositoryJobDeps {
  toolFlags: ToolFlagProbe;
  /**
   * The agent's config, state and install directories: no restore writes in or over them, after
   * symlinks (restore-safety.ts), whether or not the restore helper runs it.
   */
  agentDirs: readonly string[];
  /**
   * Lists the snapshot around the agent's directories: the agent's own restic, since the restore
   * helper runs nothing but `restore`. Default: `restic`.
   */
  listRestic?: Restic;
  /** Creates a new-directory target; default `mkdir -p` with mode 0700. */
  makeTargetDir?: (dir: string) => Promise<void>;
}

export interface RestoreFlags {
  json: boolean;
  verbose: boolean;
  noOwnership: boolean;
}

/** `paths`: what restic is asked for, the command's paths unless some lie around an agent directory. */
export function restoreArgs(
  command: CommandRunRestore,
  targetDir: string,
  flags: RestoreFlags,
  paths: readonly string[] = command.restore.paths,
): string[] {
  return [
    command.restore.snapshot_id,
    "--target",
    targetDir,
    ...(flags.noOwnership ? [NO_OWNERSHIP_FLAG] : []),
    ...(flags.verbose ? ["-vv"] : []),
    ...paths.flatMap((path) => ["--include", literalPattern(path)]),
  ];
}

const defaultMakeTargetDir = async (dir: string) => {
  await mkdir(dir, { recursive: true, mode: 0o700 });
};

export function createRestoreJob(deps: RestoreJobDeps): JobHandler<CommandRunRestore> {
  const makeTargetDir = deps.makeTargetDir ?? defaultMakeTargetDir;
  return async (run) => {
    const { restore } = run.command;
    const relative = restore.paths.find((path) => !path.startsWith("/"));
    if (restore.paths.length === 0 || relative !== undefined) {
      const error =
        relative === undefined
          ? "no paths to restore"
          : `restore path ${JSON.stringify(relative)} is not absolute`;
      run.log("agent", `${error}; nothing was restored`);
      return failed(error);
    }
    let targetDir = "/";
    if (!restore.in_place) {
      const target = expandRestoreTarget(restore.target_dir, deps.parentEnv.HOME);
      if (!target.ok) {
        run.log("agent", target.error);
        return failed(target.error);
      }
      if (target.dir === "/") {
        const error = "a new-directory restore cannot target /; choose in place instead";
        run.log("agent", `${error}; nothing was restored`);
        return failed(error);
      }
      targetDir = target.dir;
    }
    const intoAgent =
      agentDirRefusal(targetDir, restore.paths, deps.agentDirs) ??
      agentDirPathRefusal(restore.paths, deps.agentDirs);
    if (intoAgent !== undefined) {
      run.log("agent", intoAgent);
      return failed(intoAgent);
    }

    return runRepositoryJob(deps, run, {
      async tool({ repository, caps }) {
        const version = await deps.toolVersion.version();
        if (version === undefined || !isAtLeast(version, 0, 16)) {
          const refusal = await oldResticRefusal(restore.in_place, targetDir, restore.paths);
          if (refusal !== undefined) {
            run.log("agent", refusal);
            return failed(refusal);
          }
        }
        // In place, a folder above an agent directory was refused already (a write over it).
        const around = await restorePathsAround({
          restic: deps.listRestic ?? deps.restic,
          repository,
          caps,
          snapshotId: restore.snapshot_id,
          paths: restore.paths.map((path) => normalize(path).replace(/(.)\/$/, "$1")),
          dirs: agentDirForms(deps.agentDirs),
          signal: run.signal,
        });
        if (!around.ok || around.paths.length === 0) {
          const error = around.ok
            ? `the paths hold nothing but the agent's own directory ${around.held.join(", ")}, whose files are never restored`
            : around.error;
          run.log("agent", `${error}; nothing was restored`);
          return failed(error);
        }
        if (around.held.length > 0) {
          run.log(
            "agent",
            `left out: the agent's own directory ${around.held.join(", ")}, which this snapshot holds; restoring the ${around.paths.length} path(s) around it`,
          );
        }
        const flags: RestoreFlags = {
          json: version !== undefined && isAtLeast(version, 0, 16),
          verbose: version !== undefined && isAtLeast(version, 0, 17),
          noOwnership:
            !restore.in_place &&
            version !== undefined &&
            isAtLeast(version, 0, 17) &&
            (await deps.toolFlags.supports("restore", NO_OWNERSHIP_FLAG, formatToolVersion(version))),
        };
        if (!restore.in_place) {
          try {
            await makeTargetDir(targetDir);
          } catch (cause) {
            const error = `cannot create the restore directory ${targetDir}: ${cause instanceof Error ? cause.message : String(cause)}`;
            run.log("agent", `${error}; nothing was restored`);
            return failed(error);
          }
        }
        const where = restore.in_place ? "their original locations (in place)" : targetDir;
        run.log(
          "agent",
          `restoring ${restore.paths.length} path(s) of snapshot ${restore.snapshot_id} to ${where}`,
        );
        if (!restore.in_place && !flags.noOwnership) {
          run.log(
            "agent",
            `ownership is restored as recorded in the snapshot: restic ${version === undefined ? "(unknown version)" : formatToolVersion(version)} offers no ${NO_OWNERSHIP_FLAG}`,
          );
        }

        // Without a summary (before 0.16) only the places themselves tell what was written.
        const places = flags.json ? undefined : await markRestorePlaces(targetDir, around.paths);
        const throttle = createProgressThrottle(run.progress, deps.timers, deps.clock);
        const errors = createErrorCollector();
        const startedAt = deps.clock.now().getTime();
        let latest: ProgressState = { percent_done: 0, files_done: 0, bytes_done: 0 };
        let summary: JobOutcome["summary"];
        const push = (progress: ProgressState, elapsedSeconds?: number) => {
          const elapsedMs =
            elapsedSeconds === undefined ? deps.clock.now().getTime() - startedAt : elapsedSeconds * 1000;
          const eta = estimateEta(elapsedMs, progress.percent_done);
          const { eta_seconds: _old, ...rest } = progress;
          latest = { ...rest, ...(eta === undefined ? {} : { eta_seconds: eta }) };
          throttle.push(latest);
        };
        // The first event goes out at once, also for tools that print no progress (0.14).
        throttle.push(latest);
        const result = await deps.restic.run({
          subcommand: "restore",
          args: restoreArgs(run.command, targetDir, flags, around.paths),
          repository,
          caps,
          json: flags.json,
          signal: run.signal,
          ...(restore.order === undefined ? {} : { restoreOrder: restore.order }),
          onLine: jsonRunLines(run, errors, (text) => {
            const parsed = parseRestoreLine(text);
            switch (parsed.kind) {
              case "status":
                push(
                  {
                    ...parsed.progress,
                    ...(latest.current_file ? { current_file: latest.current_file } : {}),
                  },
                  parsed.secondsElapsed,
                );
                return;
              case "file":
                push({ ...latest, current_file: parsed.item });
                run.log("stdout", text);
                return;
              case "summary":
                summary = parsed.summary;
                push(parsed.progress);
                run.log("stdout", text);
                return;
              case "other":
                run.log("stdout", text);
                return;
            }
          }),
        });
        throttle.flush();
        const outcome = toolOutcome(result, deps.restic.command, errors.best());
        const restoredNothing =
          outcome.status === "succeeded" &&
          (summary === undefined ? (await places?.writes()) === "nothing" : summaryRestoredNothing(summary));
        if (restoredNothing) {
          const error = nothingMatchedError(restore.snapshot_id, restore.paths);
          run.log("agent", error);
          return { ...failed(error, outcome.exit_code), ...(summary === undefined ? {} : { summary }) };
        }
        return summary === undefined ? outcome : { ...outcome, summary };
      },
    });
  };
}
