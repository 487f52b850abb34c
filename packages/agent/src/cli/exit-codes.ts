/**
 * @module cli/exit-codes
 * Exit statuses of `fleetback-agent`, distinct per cause so that scripts and the service
 * manager can tell "fix the command line" from "re-enrol" from "update the agent".
 */
export const EXIT = {
  ok: 0,
  /** Network, I/O or an unexpected server answer. */
  failure: 1,
  usage: 2,
  /** No config file, or one that cannot be used: enrol first. */
  notEnrolled: 3,
  /** The server refused: invalid, used or expired enrolment token; announce rejected or expired. */
  refused: 4,
  /** The host was deleted or its token revoked (close 4003, HTTP 401 on connect): enrol again. */
  revoked: 5,
  /** The server no longer accepts this agent's protocol version (close 4001): update the agent. */
  protocolTooOld: 6,
  /**
   * A verified update is staged (or a trial version missed its deadline and was rolled back):
   * start me again. EX_TEMPFAIL; systemd's `Restart=always` and the Windows service restart do.
   */
  restartForUpdate: 75,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
