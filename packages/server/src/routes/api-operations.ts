/**
 * @module routes/api-operations
 * Every /api operation this server answers, in the order the document lists them: each route
 * module's group, as it defined them beside their handlers (openapi/api-route.ts). A new
 * operation in an existing module needs nothing here; a new module adds its group to this list
 * (openapi.test.ts fails on a route the list misses, and on an operation no route answers).
 */

import { DOCUMENT_API } from "../openapi/openapi-routes.js";
import type { ApiOperation } from "../openapi/operation.js";
import { AGENT_ENROLMENT_API } from "./agent-enrolment.js";
import { AGENT_UPDATE_API } from "./agent-updates-api.js";
import { AGENT_VERSION_API } from "./agent-versions.js";
import { ALERT_API } from "./alerts-api.js";
import { API_TOKEN_API } from "./api-tokens-api.js";
import { AUDIT_API } from "./audit-api.js";
import { AUTH_API } from "./auth-api.js";
import { DASHBOARD_API } from "./dashboard-api.js";
import { DIFF_API } from "./diff-api.js";
import { ENROLMENT_API } from "./enrolment-api.js";
import { FLEET_API } from "./fleet-api.js";
import { HOST_API } from "./hosts-api.js";
import { JOB_API } from "./jobs.js";
import { LABEL_API } from "./labels-api.js";
import { MAINTENANCE_API } from "./maintenance-api.js";
import { MIRROR_API } from "./mirror-api.js";
import { CHANNEL_API } from "./notification-channels-api.js";
import { RECOVERY_KIT_API } from "./recovery-kit.js";
import { RESTORE_API } from "./restore-api.js";
import { SCHEDULE_API } from "./schedules-api.js";
import { SNAPSHOT_API } from "./snapshots-api.js";
import { SOURCE_GROUP_API } from "./source-groups-api.js";
import { USER_API } from "./users-api.js";

/** The groups, for what reads them as a whole; their contexts differ, their operations do not. */
export const API_GROUPS: readonly { readonly operations: readonly ApiOperation[] }[] = [
  AUTH_API,
  USER_API,
  API_TOKEN_API,
  AUDIT_API,
  CHANNEL_API,
  DASHBOARD_API,
  FLEET_API,
  HOST_API,
  LABEL_API,
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
  ENROLMENT_API,
  AGENT_ENROLMENT_API,
  AGENT_VERSION_API,
  AGENT_UPDATE_API,
  DOCUMENT_API,
];

export const API_OPERATIONS: readonly ApiOperation[] = API_GROUPS.flatMap((group) => group.operations);
