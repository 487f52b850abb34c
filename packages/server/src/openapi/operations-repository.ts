/**
 * @module openapi/operations-repository
 * What is in a host's repository and what runs against it: snapshots, forgetting one, browsing a
 * snapshot's tree, restore, diff, and the jobs with their logs.
 */
import { DiffBody } from "../restore/diff-request.js";
import { JobsQuery, LogsQuery } from "../routes/jobs.js";
import { ApiTreeQuery, RestoreBody } from "../routes/restore-api.js";
import { ForgetSnapshotBody } from "../snapshots/forget-snapshot.js";
import { SnapshotsQuery } from "../snapshots/snapshot-page.js";
import { CancelAnswer, JobAnswer, JobLogPage, JobPage, JobStarted } from "./job-schemas.js";
import type { ApiOperation } from "./operation.js";
import { RestoreStarted, SnapshotPage, TreeFolder } from "./repository-schemas.js";

const HOST_ID = { id: "The host's id." };
const JOB_ID = { id: "The job's id." };
const OFFLINE = "The host is offline; nothing was sent.";

export const REPOSITORY_OPERATIONS: ApiOperation[] = [
  {
    id: "listSnapshots",
    method: "get",
    path: "/api/hosts/:id/snapshots",
    tag: "Snapshots",
    summary: "The host's cached snapshots, newest first",
    description: "Filtered by `tag` or source `group` (name); an empty filter means none.",
    access: "viewer",
    params: HOST_ID,
    query: SnapshotsQuery,
    responses: { 200: { description: "A page of snapshots.", schema: SnapshotPage } },
  },
  {
    id: "forgetSnapshot",
    method: "post",
    path: "/api/hosts/:id/snapshots/:sid/forget",
    tag: "Snapshots",
    summary: "Forget one snapshot",
    description: "`confirm`, when given, must name the same snapshot (its short or full id).",
    access: "admin",
    params: { id: "The host's id.", sid: "The snapshot's full id." },
    body: ForgetSnapshotBody,
    responses: { 201: { description: "The forget job.", schema: JobStarted } },
    errors: { 409: "The host's agent is too old to forget one snapshot.", 503: OFFLINE },
  },
  {
    id: "listSnapshotTree",
    method: "get",
    path: "/api/hosts/:id/tree",
    tag: "Restore",
    summary: "The direct children of one folder of a snapshot",
    description:
      "Asked of the agent and cached per `session` (about 30 minutes). Large folders come in pages: pass `next_after` back as `after`.",
    access: "operator",
    params: HOST_ID,
    query: ApiTreeQuery,
    responses: { 200: { description: "The folder's entries.", schema: TreeFolder } },
    errors: {
      502: "The agent could not list it.",
      503: "The host is offline.",
      504: "The agent did not answer in time.",
    },
  },
  {
    id: "startRestore",
    method: "post",
    path: "/api/hosts/:id/restore",
    tag: "Restore",
    summary: "Restore paths of a snapshot",
    description:
      "`target_dir` defaults to `$HOME/fleetback-restore/<job-id>/`; an in-place restore needs `confirm_hostname` equal to the host's name.",
    access: "operator",
    params: HOST_ID,
    body: RestoreBody,
    responses: { 201: { description: "The restore job.", schema: RestoreStarted } },
    errors: { 503: OFFLINE },
  },
  {
    id: "startDiff",
    method: "post",
    path: "/api/hosts/:id/diff",
    tag: "Restore",
    summary: "Compare two snapshots of the host",
    description: "The diff streams into the job's log.",
    access: "operator",
    params: HOST_ID,
    body: DiffBody,
    responses: { 201: { description: "The diff job.", schema: JobStarted } },
    errors: { 503: OFFLINE },
  },
  {
    id: "listJobs",
    method: "get",
    path: "/api/jobs",
    tag: "Jobs",
    summary: "List jobs, newest first",
    access: "viewer",
    query: JobsQuery,
    responses: { 200: { description: "A page of jobs.", schema: JobPage } },
  },
  {
    id: "getJob",
    method: "get",
    path: "/api/jobs/:id",
    tag: "Jobs",
    summary: "One job",
    access: "viewer",
    params: JOB_ID,
    responses: { 200: { description: "The job.", schema: JobAnswer } },
  },
  {
    id: "listJobLogs",
    method: "get",
    path: "/api/jobs/:id/logs",
    tag: "Jobs",
    summary: "A job's stored log lines, in order",
    access: "viewer",
    params: JOB_ID,
    query: LogsQuery,
    responses: { 200: { description: "A page of lines.", schema: JobLogPage } },
  },
  {
    id: "cancelJob",
    method: "post",
    path: "/api/jobs/:id/cancel",
    tag: "Jobs",
    summary: "Cancel a queued or running job",
    access: "operator",
    params: JOB_ID,
    responses: {
      200: { description: "Cancelled here: the job never reached an agent.", schema: CancelAnswer },
      202: {
        description: "The agent was asked to stop; the status follows its answer.",
        schema: CancelAnswer,
      },
    },
    errors: { 409: "The job has already finished." },
  },
];
