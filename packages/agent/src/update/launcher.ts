/**
 * @module update/launcher
 * The first thing `run` does (unless FLEETBACK_AGENT_LAUNCHED says a launcher already decided):
 * read the boot record and either carry on as the installed version or run the version the
 * record names, under the trial watchdog when it is on trial. The installed artefact thus stays
 * the service's entry point forever; updates only ever touch the update dir.
 *
 * Before it starts an artefact it reads the file once and checks both the SHA-256 the record
 * names and the Ed25519 release signature kept beside it, against the key pinned in agent.json
 * (config dir, not the state dir): whoever can write the state dir can write a bundle and its
 * hash, but not a signature. No signature (a record written before it was kept), no pinned key or
 * a bad signature: the installed version runs and the reason is logged, as for a hash mismatch.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { AgentKind } from "@fleetback/protocol";
import type { Logger } from "../log/logger.js";
import type { Clock } from "../time/clock.js";
import type { Timers } from "../time/timers.js";
import { signatureProblem } from "./artefact-check.js";
import { decideBoot } from "./boot-decision.js";
import type { ArtefactRef } from "./boot-record.js";
import type { FileOps } from "./file-ops.js";
import type { LaunchPorts } from "./launch-ports.js";
import { startTrialWatchdog } from "./trial-watchdog.js";
import type { UpdatePlatform } from "./update-platform.js";

export const LAUNCHED_ENV = "FLEETBACK_AGENT_LAUNCHED";
/** Exit status of a trial that the watchdog ended (the same "restart me" as an update). */
export const TRIAL_EXPIRED_EXIT = 75;

export interface LauncherOptions {
  selfVersion: string;
  selfKind: AgentKind;
  /** The arguments after the executable (`run ...`), passed on to a child artefact. */
  args: readonly string[];
  /** Gets FLEETBACK_AGENT_LAUNCHED=<version> before the chosen version starts. */
  env: NodeJS.ProcessEnv;
  platform: UpdatePlatform;
  fs: FileOps;
  clock: Clock;
  timers: Timers;
  log: Logger;
  ports: LaunchPorts;
  /** The release key pinned in agent.json; undefined means no artefact can be verified. */
  releaseKey: Uint8Array | undefined;
  /** How long a version on trial has to connect (FLEETBACK_UPDATE_TRIAL); absent: UPDATE_TRIAL_MS. */
  trialMs?: number;
}

export type LaunchOutcome = { kind: "self" } | { kind: "launched"; version: string; exitCode: number };

async function problemOf(options: LauncherOptions, ref: ArtefactRef): Promise<string | undefined> {
  if (ref.kind === "bundle" && options.selfKind === "sea") {
    return "a bundle needs Node.js, and this agent is a single executable";
  }
  const bytes = await options.fs.readBytes(join(options.platform.dir, ref.file));
  if (bytes === undefined) {
    return `${ref.file} is missing`;
  }
  if (createHash("sha256").update(bytes).digest("hex") !== ref.sha256) {
    return `${ref.file} does not have the recorded SHA-256`;
  }
  if (ref.signature === undefined) {
    return `the boot record keeps no release signature for ${ref.file} (written by an older agent)`;
  }
  if (options.releaseKey === undefined) {
    return "no release key is pinned in agent.json to verify it with";
  }
  const problem = signatureProblem(bytes, ref.signature, options.releaseKey);
  return problem === undefined ? undefined : `${ref.file}: ${problem}`;
}

async function problemsOf(options: LauncherOptions, refs: (ArtefactRef | undefined)[]) {
  const problems = new Map<string, string | undefined>();
  for (const ref of refs) {
    if (ref === undefined || problems.has(ref.file)) {
      continue;
    }
    problems.set(ref.file, await problemOf(options, ref));
  }
  return problems;
}

export async function launch(options: LauncherOptions): Promise<LaunchOutcome> {
  const { platform, log } = options;
  for (const note of await platform.prepareStart().catch((cause: unknown) => [String(cause)])) {
    log.info(note);
  }
  const read = await platform.readRecord();
  if (!read.ok) {
    log.warn(`${read.problem}; running the installed version`, { version: options.selfVersion });
    return { kind: "self" };
  }
  if (read.record === undefined) {
    return { kind: "self" };
  }
  const problems = await problemsOf(options, [read.record.active, read.record.trial]);
  const decision = decideBoot({
    record: read.record,
    selfVersion: options.selfVersion,
    now: options.clock.now(),
    trialMs: options.trialMs,
    problemOf: (ref) => problems.get(ref.file),
  });
  for (const note of decision.notes) {
    log.warn(note);
  }
  if (decision.write !== undefined) {
    try {
      await platform.writeRecord(decision.write);
    } catch (cause) {
      log.error("could not write the boot record; running the installed version", { error: String(cause) });
      // A trial start that is not counted could crash-loop forever: never run it uncounted.
      return { kind: "self" };
    }
  }
  const run = decision.run;
  if (run.kind === "self") {
    return { kind: "self" };
  }
  const { ref, trialDeadline } = run;
  const path = join(platform.dir, ref.file);
  options.env[LAUNCHED_ENV] = ref.version;
  log.info("starting the updated agent", { version: ref.version, kind: ref.kind, trial: !!trialDeadline });
  const started =
    ref.kind === "bundle"
      ? options.ports.importBundle(path)
      : options.ports.spawnExecutable(path, options.args, options.env);
  let expired = false;
  const cancelWatchdog =
    trialDeadline === undefined
      ? () => {}
      : startTrialWatchdog({
          platform,
          version: ref.version,
          deadline: trialDeadline,
          timers: options.timers,
          clock: options.clock,
          log,
          onExpired: () => {
            expired = true;
            started.terminate(TRIAL_EXPIRED_EXIT);
          },
        });
  const exitCode = await started.exited.catch((cause: unknown) => {
    log.error("the updated agent failed", { version: ref.version, error: String(cause) });
    return 1;
  });
  // A child's exit ends its trial here. An imported bundle's evaluation may end while what it
  // started still runs in this process (timers, sockets): its watchdog stays armed until the
  // deadline, and being unref'd it never keeps the process alive by itself.
  if (ref.kind !== "bundle") {
    cancelWatchdog();
  }
  return { kind: "launched", version: ref.version, exitCode: expired ? TRIAL_EXPIRED_EXIT : exitCode };
}
