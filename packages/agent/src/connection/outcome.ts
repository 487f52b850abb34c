/**
 * @module connection/outcome
 * How a connection's life ends, and which server signals end it for good: close 4001 (protocol
 * too old: only an update helps), close 4003 and HTTP 401 on the upgrade (host deleted or token
 * revoked: only a new enrolment helps). Everything else is worth a reconnect.
 */
import { CLOSE_CODES, type ErrorMessage } from "@fleetback/protocol";

export type FatalReason = "protocol_too_old" | "host_deleted" | "unauthorised";

export type ConnectionOutcome =
  | { kind: "stopped" }
  | { kind: "fatal"; reason: FatalReason; message: string; helpUrl?: string };

export const UNAUTHORISED: ConnectionOutcome = {
  kind: "fatal",
  reason: "unauthorised",
  message:
    "the server refused the agent token (HTTP 401): the host was deleted or its token revoked; enrol it again",
};

export function fatalOnClose(
  code: number,
  serverError: ErrorMessage | undefined,
): ConnectionOutcome | undefined {
  if (code === CLOSE_CODES.protocolTooOld) {
    const helpUrl = serverError?.help_url;
    return {
      kind: "fatal",
      reason: "protocol_too_old",
      message: `the server no longer accepts this agent's protocol version; update the agent${helpUrl ? ` (see ${helpUrl})` : ""}`,
      ...(helpUrl === undefined ? {} : { helpUrl }),
    };
  }
  if (code === CLOSE_CODES.hostDeleted) {
    return {
      kind: "fatal",
      reason: "host_deleted",
      message: "the server deleted this host or revoked its agent token; enrol it again",
    };
  }
  return undefined;
}
