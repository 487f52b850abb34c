/**
 * @module openapi/operations-recovery
 * The recovery kit: the credentials and restic commands that reach the backups without Fleetback.
 */
import { RecoveryKitBody } from "../recovery/kit-request.js";
import type { ApiOperation } from "./operation.js";
import { RecoveryKitAnswer } from "./recovery-kit-schemas.js";

const STEP_UP =
  "Admins only, signed in to the web interface (an API token is refused: it has no person to confirm). " +
  "`password` is the caller's own password, typed again; a single sign-on user instead needs a sign-in within the last 10 minutes. " +
  "Each export is audited as `recovery_kit.export` with the host ids, each refusal as `recovery_kit.export_refused`; " +
  "the answer holds the repository passwords and is sent with `Cache-Control: no-store`.";

const ERRORS = {
  403: "Not an admin, an API token, a wrong or missing password, or a single sign-on too long ago.",
  429: "Too many wrong passwords.",
} as const;

export const RECOVERY_OPERATIONS: ApiOperation[] = [
  {
    id: "exportHostRecoveryKit",
    method: "post",
    path: "/api/hosts/:id/recovery-kit",
    tag: "Recovery",
    summary: "One host's recovery kit",
    description: STEP_UP,
    access: "admin",
    params: { id: "The host's id." },
    body: RecoveryKitBody,
    responses: {
      200: { description: "The kit, as data and as the Markdown file.", schema: RecoveryKitAnswer },
    },
    errors: ERRORS,
  },
  {
    id: "exportFleetRecoveryKit",
    method: "post",
    path: "/api/recovery-kit",
    tag: "Recovery",
    summary: "The whole fleet's recovery kit",
    description: STEP_UP,
    access: "admin",
    body: RecoveryKitBody,
    responses: {
      200: { description: "The kit, as data and as the Markdown file.", schema: RecoveryKitAnswer },
    },
    errors: ERRORS,
  },
];
