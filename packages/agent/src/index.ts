/**
 * @module @fleetback/agent
 * Library entry for tests and the e2e harness; the executable is cli.ts.
 */
export { type Agent, type AgentOptions, type AgentOutcome, createAgent } from "./agent/agent.js";
export { createServerHandlers } from "./agent/server-handlers.js";
export { type CliDeps, createProcessCliDeps } from "./cli/cli-deps.js";
export { EXIT, type ExitCode } from "./cli/exit-codes.js";
export { runCli } from "./cli/run-cli.js";
export { AgentConfig, loadAgentConfig, saveAgentConfig } from "./config/agent-config.js";
export { DEFAULT_CONFIG_DIR, DEFAULT_STATE_DIR, resolveAgentPaths } from "./config/paths.js";
export { type OpenSocket, openAgentSocket } from "./connection/agent-socket.js";
export { type Backoff, createBackoff } from "./connection/backoff.js";
export {
  type AgentConnection,
  type ConnectionOptions,
  createAgentConnection,
} from "./connection/connection.js";
export { type ConnectionOutcome, type FatalReason, fatalOnClose } from "./connection/outcome.js";
export { agentVersion, detectHostIdentity, type HostIdentity } from "./host-identity.js";
export { createJobHandlers } from "./jobs/job-handlers.js";
export { createJobQueue, type JobQueue } from "./jobs/job-queue.js";
export type { JobHandler, JobHandlers, JobOutcome, JobRun } from "./jobs/job-types.js";
export { createJsonLogger, type Logger, type LogLevel } from "./log/logger.js";
export { certificateSha256, normalizePin, PinnedAgent, TlsPinMismatchError } from "./net/tls-pin.js";
export { type CredentialStore, createCredentialStore } from "./restic/credential-store.js";
export { createToolVersionProbe, type ToolVersionProbe } from "./restic/detect-version.js";
export { buildToolEnvironment, isDroppedVariable, neutralEnvironment } from "./restic/environment.js";
export { createReplayRunner, loadRecording, type Recording } from "./restic/replay-adapter.js";
export { type BandwidthCaps, createRestic, type Restic, type ResticRequest } from "./restic/restic.js";
export type { OutputLine, ProcessResult, ProcessSpec, ResticRunner } from "./restic/runner.js";
export { createSpawnRunner } from "./restic/spawn-adapter.js";
export { formatToolVersion, isAtLeast, parseToolVersion, type ToolVersion } from "./restic/version.js";
export { createFireLedger, type FireLedger } from "./scheduler/fire-ledger.js";
// Where the real restic binaries of the tests are: the server's tests look them up here too, so
// this one file of testing/ is built (tsconfig.build.json leaves the rest out).
export { RESTIC_VERSIONS, type ResticVersion, repoRoot, resticBinary } from "./testing/tools.js";
export { type Clock, systemClock } from "./time/clock.js";
export { systemTimers, type Timers } from "./time/timers.js";
export { detectAgentKind } from "./update/agent-kind.js";
export {
  ArtefactRef,
  BOOT_RECORD_FILE,
  BootRecord,
  readBootRecord,
  UPDATE_DIR_NAME,
  updateDir,
} from "./update/boot-record.js";
export { nodeFileOps } from "./update/file-ops.js";
export { LAUNCHED_ENV, TRIAL_EXPIRED_EXIT } from "./update/launcher.js";
export { FAILED_RETRY_AFTER_MS, UPDATE_JOB_WAIT_MS } from "./update/updater.js";
