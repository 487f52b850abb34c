/**
 * @module cli/help
 * The text of `fleetback-agent --help`, including what each exit status means.
 */
import { DEFAULT_CONFIG_DIR, DEFAULT_STATE_DIR } from "../config/paths.js";

export const HELP = `Usage: fleetback-agent <command> [options]

Commands:
  enroll --server URL --token TOKEN [--tls-pin SHA256] [--label KEY=VALUE]...
        Enrol this host with a one-time token from the server's enrol page.
  announce --server URL [--tls-pin SHA256] [--label KEY=VALUE]...
        Ask to be enrolled without a token: prints a key fingerprint for the operator to
        compare and approve on the server, then waits for the approval.
  run   Connect to the server and run jobs until stopped (the service runs this).
  status
        Show the config (token shortened), state dir, restic version and server health.
  restore-helper [--socket PATH]
        The restore helper the installed fleetback-agent-restore.socket starts: runs restic
        restore for the confined agent, writing only where a restore was asked to write.
  help, --help, -h      This text.
  version, --version    The agent version.

Options:
  --server URL          The server's base URL (http:// or https://).
  --token TOKEN         One-time enrolment token (or set FLEETBACK_ENROLL_TOKEN).
  --tls-pin SHA256      Pin the server's TLS certificate: hex SHA-256 of its DER leaf
                        certificate (colons allowed). The pin replaces CA validation, so a
                        self-signed certificate works; nothing is sent to a server that fails it.
  --label KEY=VALUE     A label for this host (repeatable), e.g. --label env=prod; the
                        enrolment token's own labels win over these.
  --config-dir DIR      Default ${DEFAULT_CONFIG_DIR} (or FLEETBACK_AGENT_CONFIG_DIR).
  --state-dir DIR       Default ${DEFAULT_STATE_DIR} (or FLEETBACK_AGENT_STATE_DIR).

Environment:
  FLEETBACK_RESTIC            restic binary (default: restic on PATH).
  FLEETBACK_RESTORE_SOCKET    run: restores go through the restore helper at this socket
                              (the installed unit sets it); restore-helper: where to listen.
  FLEETBACK_AGENT_LOG_LEVEL   debug, info (default), warn or error; logs are JSON on stderr.
  FLEETBACK_JOB_TIMEOUT_<KIND>  run: the longest a job of that kind may run before it is
                              stopped and fails, e.g. FLEETBACK_JOB_TIMEOUT_BACKUP=48h (s, m, h,
                              d; 0 or off: no bound). Defaults: backup, check, prune, restore 24h;
                              drill 2h; forget, diff 1h; init, unlock 10m.
  FLEETBACK_REPOSITORY_UNREACHABLE_AFTER  run: how long restic may fail to reach the
                              repository (and a direct request to it too) before the job stops
                              and fails as "unreachable", and how long a copy waits for its
                              mirror to open; default 60s, off: never.
  FLEETBACK_UPDATE_TRIAL      run: how long an updated version may take to connect to the
                              server before it is rolled back; default 120s.
  FLEETBACK_AGENT_LAUNCHED    Set by the launcher for the updated version it starts; that
                              version then skips the boot record (<state dir>/update/boot.json).
  RESTIC_*, AWS_*, B2_* ... of the agent's own environment are ignored: only repository
  settings pushed by the server are used.

Exit status:
  0  success (run: stopped by SIGINT or SIGTERM)
  1  failure: network, file system or an unexpected server answer
  2  usage error
  3  not enrolled: no usable config file
  4  refused by the server: enrolment token invalid, used or expired; announce rejected or expired
  5  the server deleted this host or revoked its token: enrol again
  6  the server no longer accepts this agent's protocol version: update the agent
  75  run: an update is staged, or a version on trial missed its deadline: start me again
`;
