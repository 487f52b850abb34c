/**
 * @module openapi/operations-sources
 * What a host backs up and when: source groups, default hooks, run-now, schedules, and the
 * repository maintenance cadences with the repository's stats.
 */
import { MaintenanceBody } from "../maintenance/maintenance-record.js";
import { ScheduleBody } from "../routes/schedules-api.js";
import {
  CreateGroupBody,
  HostHooksBody,
  RunNowBody,
  UpdateGroupBody,
} from "../sources/source-group-schema.js";
import type { ApiOperation } from "./operation.js";
import { MaintenanceAnswer, MaintenanceWithDrill, RepoStatsAnswer } from "./repository-schemas.js";
import {
  HostHooksAnswer,
  RunNowQueued,
  RunNowStarted,
  ScheduleAnswer,
  ScheduleList,
  ScheduleVersions,
  SourceGroupAnswer,
  SourceGroupList,
} from "./source-schemas.js";

const HOST_ID = { id: "The host's id." };
const GROUP = { id: "The host's id.", gid: "The source group's id." };
const SCHEDULE = { id: "The host's id.", sid: "The schedule's id." };
const HOOKS =
  "Hook text is shown to and accepted from admins only; others see has_pre_hook and has_post_hook.";

export const SOURCE_OPERATIONS: ApiOperation[] = [
  {
    id: "listSourceGroups",
    method: "get",
    path: "/api/hosts/:id/source-groups",
    tag: "Source groups",
    summary: "A host's source groups with their freshness",
    description: HOOKS,
    access: "viewer",
    params: HOST_ID,
    responses: { 200: { description: "The groups.", schema: SourceGroupList } },
  },
  {
    id: "createSourceGroup",
    method: "post",
    path: "/api/hosts/:id/source-groups",
    tag: "Source groups",
    summary: "Add a source group",
    description: `Its name is also the snapshots' tag. ${HOOKS}`,
    access: "operator",
    params: HOST_ID,
    body: CreateGroupBody,
    responses: { 201: { description: "The new group.", schema: SourceGroupAnswer } },
    errors: { 409: "The host already has a group of that name." },
  },
  {
    id: "getSourceGroup",
    method: "get",
    path: "/api/hosts/:id/source-groups/:gid",
    tag: "Source groups",
    summary: "One source group",
    description: HOOKS,
    access: "viewer",
    params: GROUP,
    responses: { 200: { description: "The group.", schema: SourceGroupAnswer } },
  },
  {
    id: "updateSourceGroup",
    method: "put",
    path: "/api/hosts/:id/source-groups/:gid",
    tag: "Source groups",
    summary: "Change a source group",
    description: `Absent fields keep their value; a hook set to null or "" is removed. ${HOOKS}`,
    access: "operator",
    params: GROUP,
    body: UpdateGroupBody,
    responses: { 200: { description: "The group as changed.", schema: SourceGroupAnswer } },
    errors: { 409: "The host already has a group of that name." },
  },
  {
    id: "deleteSourceGroup",
    method: "delete",
    path: "/api/hosts/:id/source-groups/:gid",
    tag: "Source groups",
    summary: "Delete a source group",
    access: "operator",
    params: GROUP,
    responses: { 204: { description: "Deleted." } },
    errors: { 409: "Schedules still name the group; `details` lists them and nothing was deleted." },
  },
  {
    id: "runSourceGroup",
    method: "post",
    path: "/api/hosts/:id/source-groups/:gid/run",
    tag: "Source groups",
    summary: "Back up one source group now",
    description:
      "The optional body's caps replace the group's own for this run (never above the host's). An offline host gets the run queued, retried under the group's retry settings.",
    access: "operator",
    params: GROUP,
    body: RunNowBody,
    bodyOptional: true,
    responses: {
      201: { description: "The backup job was sent.", schema: RunNowStarted },
      202: { description: "The host is offline: the run is queued.", schema: RunNowQueued },
    },
  },
  {
    id: "putHostHooks",
    method: "put",
    path: "/api/hosts/:id/hooks",
    tag: "Source groups",
    summary: "Set the host's default pre- and post-backup hooks",
    access: "admin",
    params: HOST_ID,
    body: HostHooksBody,
    responses: { 200: { description: "Whether each default hook is set now.", schema: HostHooksAnswer } },
  },
  {
    id: "listSchedules",
    method: "get",
    path: "/api/hosts/:id/schedules",
    tag: "Schedules",
    summary: "A host's schedules, with their next runs and the version the agent applied",
    access: "viewer",
    params: HOST_ID,
    responses: { 200: { description: "The schedules.", schema: ScheduleList } },
  },
  {
    id: "createSchedule",
    method: "post",
    path: "/api/hosts/:id/schedules",
    tag: "Schedules",
    summary: "Add a schedule",
    description: "`source_group_ids` must name groups of this host. The agent is sent the new schedule set.",
    access: "operator",
    params: HOST_ID,
    body: ScheduleBody,
    responses: { 201: { description: "The new schedule.", schema: ScheduleAnswer } },
  },
  {
    id: "updateSchedule",
    method: "put",
    path: "/api/hosts/:id/schedules/:sid",
    tag: "Schedules",
    summary: "Replace a schedule",
    access: "operator",
    params: SCHEDULE,
    body: ScheduleBody,
    responses: { 200: { description: "The schedule as changed.", schema: ScheduleAnswer } },
  },
  {
    id: "deleteSchedule",
    method: "delete",
    path: "/api/hosts/:id/schedules/:sid",
    tag: "Schedules",
    summary: "Delete a schedule",
    access: "operator",
    params: SCHEDULE,
    responses: {
      200: { description: "The host's schedule versions after the change.", schema: ScheduleVersions },
    },
  },
  {
    id: "getMaintenance",
    method: "get",
    path: "/api/hosts/:id/maintenance",
    tag: "Maintenance",
    summary: "The host's forget, prune, check and drill cadences and its last restore drill",
    description: "Created with the defaults when the host has none yet.",
    access: "viewer",
    params: HOST_ID,
    responses: { 200: { description: "The cadences.", schema: MaintenanceWithDrill } },
  },
  {
    id: "putMaintenance",
    method: "put",
    path: "/api/hosts/:id/maintenance",
    tag: "Maintenance",
    summary: "Change the maintenance cadences",
    access: "operator",
    params: HOST_ID,
    body: MaintenanceBody,
    responses: { 200: { description: "The cadences as changed.", schema: MaintenanceAnswer } },
  },
  {
    id: "getRepoStats",
    method: "get",
    path: "/api/hosts/:id/stats",
    tag: "Maintenance",
    summary: "The repository's size, counts and last check, as the agent last reported them",
    access: "viewer",
    params: HOST_ID,
    responses: {
      200: { description: "The stats; null fields were never reported.", schema: RepoStatsAnswer },
    },
  },
];
