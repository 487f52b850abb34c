/**
 * @module testing/openapi-route-shares
 * Every /api operation must be answered successfully, for real, by one of the openapi-routes
 * test files, and each file starts its own app. So each file owns a share of the route modules'
 * groups and checks that it answered every operation of its share; the first file also checks
 * that the shares together hold every group once. A new operation in an existing module then
 * fails the file that owns the module until that file calls it; a new module fails until a file
 * takes it into its share.
 */
import { API_GROUPS } from "../api-operations.js";
import { DOCUMENT_API } from "../openapi/openapi-routes.js";
import type { ApiOperation } from "../openapi/operation.js";
import { AGENT_ENROLMENT_API } from "../routes/agent-enrolment.js";
import { AGENT_UPDATE_API } from "../routes/agent-updates-api.js";
import { AGENT_VERSION_API } from "../routes/agent-versions.js";
import { ALERT_API } from "../routes/alerts-api.js";
import { API_TOKEN_API } from "../routes/api-tokens-api.js";
import { AUDIT_API } from "../routes/audit-api.js";
import { AUTH_API } from "../routes/auth-api.js";
import { DASHBOARD_API } from "../routes/dashboard-api.js";
import { DIFF_API } from "../routes/diff-api.js";
import { DIGEST_API } from "../routes/digest-api.js";
import { ENROLMENT_API } from "../routes/enrolment-api.js";
import { EVIDENCE_API } from "../routes/evidence-api.js";
import { FLEET_ACTION_API } from "../routes/fleet-actions-api.js";
import { FLEET_API } from "../routes/fleet-api.js";
import { HOST_API } from "../routes/hosts-api.js";
import { JOB_API } from "../routes/jobs.js";
import { LABEL_API } from "../routes/labels-api.js";
import { MAINTENANCE_API } from "../routes/maintenance-api.js";
import { MIRROR_API } from "../routes/mirror-api.js";
import { CHANNEL_API } from "../routes/notification-channels-api.js";
import { POLICY_API } from "../routes/policies-api.js";
import { RECOVERY_KIT_API } from "../routes/recovery-kit.js";
import { REPORT_SCHEDULE_API } from "../routes/report-schedules-api.js";
import { RESTORE_API } from "../routes/restore-api.js";
import { SCHEDULE_API } from "../routes/schedules-api.js";
import { SEARCH_API } from "../routes/search-api.js";
import { SNAPSHOT_API } from "../routes/snapshots-api.js";
import { SOURCE_GROUP_API } from "../routes/source-groups-api.js";
import { USER_API } from "../routes/users-api.js";
import type { AnswerChecker } from "./documented-answers.js";

type ApiGroup = (typeof API_GROUPS)[number];

export type OpenApiRouteFile =
  | "openapi-routes.test.ts"
  | "openapi-routes-hosts.test.ts"
  | "openapi-routes-fleet.test.ts";

/** By test file, the groups whose every operation that file answers successfully. */
export const OPENAPI_ROUTE_SHARES: Readonly<Record<OpenApiRouteFile, readonly ApiGroup[]>> = {
  "openapi-routes.test.ts": [AUTH_API, USER_API, API_TOKEN_API, CHANNEL_API, DOCUMENT_API],
  "openapi-routes-hosts.test.ts": [
    AUDIT_API,
    DASHBOARD_API,
    FLEET_API,
    HOST_API,
    MIRROR_API,
    ALERT_API,
    RECOVERY_KIT_API,
    SOURCE_GROUP_API,
    SCHEDULE_API,
    MAINTENANCE_API,
    SNAPSHOT_API,
    RESTORE_API,
    DIFF_API,
    JOB_API,
  ],
  "openapi-routes-fleet.test.ts": [
    EVIDENCE_API,
    DIGEST_API,
    REPORT_SCHEDULE_API,
    FLEET_ACTION_API,
    LABEL_API,
    POLICY_API,
    SEARCH_API,
    ENROLMENT_API,
    AGENT_ENROLMENT_API,
    AGENT_VERSION_API,
    AGENT_UPDATE_API,
  ],
};

function describeOperation(op: ApiOperation): string {
  return `${op.method.toUpperCase()} ${op.path}`;
}

/** The operations of `file`'s share that `checker` saw no successful answer of. */
export function unansweredInShare(checker: AnswerChecker, file: OpenApiRouteFile): string[] {
  return OPENAPI_ROUTE_SHARES[file]
    .flatMap((group) => group.operations)
    .filter((op) => ![...(checker.seen.get(op.id) ?? [])].some((status) => status < 300))
    .map(describeOperation);
}

/** Groups in no file's share or in several, and shares naming a group the API lacks. */
export function shareProblems(): string[] {
  const owners = new Map<ApiGroup, string[]>();
  for (const [file, share] of Object.entries(OPENAPI_ROUTE_SHARES)) {
    for (const group of share) {
      owners.set(group, [...(owners.get(group) ?? []), file]);
    }
  }
  const firstOf = (group: ApiGroup) => group.operations.map(describeOperation)[0] ?? "(no operation)";
  const problems = API_GROUPS.flatMap((group) => {
    const files = owners.get(group) ?? [];
    return files.length === 1 ? [] : [`the group of ${firstOf(group)} is in ${files.length} shares`];
  });
  for (const group of owners.keys()) {
    if (!API_GROUPS.includes(group)) {
      problems.push(`the group of ${firstOf(group)} is no group of API_GROUPS`);
    }
  }
  return problems;
}
