/**
 * @module api-operations
 * Every /api operation this server answers, in the order the document lists them: each route
 * module's group, as it defined them beside their handlers (openapi/api-route.ts). A new
 * operation in an existing module needs nothing here; a new module adds its group to this list
 * (openapi.test.ts fails on a route the list misses, and on an operation no route answers).
 */

import { DOCUMENT_API } from "./openapi/openapi-routes.js";
import type { ApiOperation } from "./openapi/operation.js";
import { AGENT_ENROLMENT_API } from "./routes/agent-enrolment.js";
import { AGENT_UPDATE_API } from "./routes/agent-updates-api.js";
import { AGENT_VERSION_API } from "./routes/agent-versions.js";
import { ALERT_API } from "./routes/alerts-api.js";
import { API_TOKEN_API } from "./routes/api-tokens-api.js";
import { AUDIT_API } from "./routes/audit-api.js";
import { AUTH_API } from "./routes/auth-api.js";
import { DASHBOARD_API } from "./routes/dashboard-api.js";
import { DIFF_API } from "./routes/diff-api.js";
import { DIGEST_API } from "./routes/digest-api.js";
import { ENROLMENT_API } from "./routes/enrolment-api.js";
import { EVIDENCE_API } from "./routes/evidence-api.js";
import { FLEET_ACTION_API } from "./routes/fleet-actions-api.js";
import { FLEET_API } from "./routes/fleet-api.js";
import { HOST_API } from "./routes/hosts-api.js";
import { JOB_API } from "./routes/jobs.js";
import { LABEL_API } from "./routes/labels-api.js";
import { MAINTENANCE_API } from "./routes/maintenance-api.js";
import { MIRROR_API } from "./routes/mirror-api.js";
import { CHANNEL_API } from "./routes/notification-channels-api.js";
import { POLICY_API } from "./routes/policies-api.js";
import { RECOVERY_KIT_API } from "./routes/recovery-kit.js";
import { REPORT_SCHEDULE_API } from "./routes/report-schedules-api.js";
import { RESTORE_API } from "./routes/restore-api.js";
import { SCHEDULE_API } from "./routes/schedules-api.js";
import { SEARCH_API } from "./routes/search-api.js";
import { SNAPSHOT_API } from "./routes/snapshots-api.js";
import { SOURCE_GROUP_API } from "./routes/source-groups-api.js";
import { USER_API } from "./routes/users-api.js";

/** The groups, for what reads them as a whole; their contexts differ, their operations do not. */
export const API_GROUPS: readonly { readonly operations: readonly ApiOperation[] }[] = [
  AUTH_API,
  USER_API,
  API_TOKEN_API,
  AUDIT_API,
  EVIDENCE_API,
  DIGEST_API,
  REPORT_SCHEDULE_API,
  CHANNEL_API,
  DASHBOARD_API,
  FLEET_API,
  FLEET_ACTION_API,
  HOST_API,
  LABEL_API,
  POLICY_API,
  MIRROR_API,
  ALERT_API,
  RECOVERY_KIT_API,
  SOURCE_GROUP_API,
  SCHEDULE_API,
  MAINTENANCE_API,
  SNAPSHOT_API,
  RESTORE_API,
  SEARCH_API,
  DIFF_API,
  JOB_API,
  ENROLMENT_API,
  AGENT_ENROLMENT_API,
  AGENT_VERSION_API,
  AGENT_UPDATE_API,
  DOCUMENT_API,
];

export const API_OPERATIONS: readonly ApiOperation[] = API_GROUPS.flatMap((group) => group.operations);
