/**
 * @module openapi/operations-hosts
 * The fleet and one host: list, detail, deletion, credentials, caps, manual jobs, the mirror,
 * and the dashboard and alerts that watch them.
 */
import { AlertsQuery } from "../alerts/alert-query.js";
import { HostListQuery } from "../fleet/fleet-query.js";
import { JobBody } from "../fleet/host-requests.js";
import { CredentialBody } from "../hosts/credential-body.js";
import { RenameHostBody } from "../hosts/rename-host.js";
import { MANUAL_JOB_KINDS } from "../maintenance/maintenance-jobs.js";
import { ReleaseHoldBody } from "../maintenance/release-hold.js";
import { BandwidthBody, KeeperBody } from "../routes/hosts-api.js";
import { AlertPage, AlertResolved, Dashboard } from "./alert-schemas.js";
import {
  BandwidthAnswer,
  CredentialsPushed,
  FleetPage,
  HostAnswer,
  KeeperAnswer,
  MirrorCredentialsAnswer,
  ReleaseHoldAnswer,
  RenamedHost,
} from "./host-schemas.js";
import { JobStartedWithStatus } from "./job-schemas.js";
import type { ApiOperation } from "./operation.js";

const HOST_ID = { id: "The host's id." };
const NO_CONTENT = { 204: { description: "Done." } } as const;

export const HOST_OPERATIONS: ApiOperation[] = [
  {
    id: "getDashboard",
    method: "get",
    path: "/api/dashboard",
    tag: "Dashboard",
    summary: "The dashboard's numbers",
    description:
      "Hosts by state, groups by freshness, the groups needing attention, jobs of the last 24 h, repository size per day and the newest open alerts, as the dashboard page shows them.",
    access: "viewer",
    responses: { 200: { description: "The dashboard.", schema: Dashboard } },
  },
  {
    id: "listHosts",
    method: "get",
    path: "/api/hosts",
    tag: "Hosts",
    summary: "List hosts, filtered, sorted and paged as the host list page",
    description: "An empty `state` or `q` means no filter.",
    access: "viewer",
    query: HostListQuery,
    responses: { 200: { description: "One page of hosts.", schema: FleetPage } },
  },
  {
    id: "getHost",
    method: "get",
    path: "/api/hosts/:id",
    tag: "Hosts",
    summary: "One host",
    description:
      "Credential slots show their URL (without password), their user and whether a separate login password is set, never a password.",
    access: "viewer",
    params: HOST_ID,
    responses: { 200: { description: "The host.", schema: HostAnswer } },
  },
  {
    id: "renameHost",
    method: "patch",
    path: "/api/hosts/:id",
    tag: "Hosts",
    summary: "Rename a host",
    description:
      "The name pages, alerts and the in-place restore confirmation use; 1 to 253 characters, no control characters, no space at either end, and no other host's name in any case. The restic hostname its backups are made under stays. Audited as host.rename with the old and new name.",
    access: "operator",
    params: HOST_ID,
    body: RenameHostBody,
    responses: { 200: { description: "The host's id and new name.", schema: RenamedHost } },
    errors: { 409: "Another host has this name." },
  },
  {
    id: "deleteHost",
    method: "delete",
    path: "/api/hosts/:id",
    tag: "Hosts",
    summary: "Delete a host",
    description:
      "Its agent is disconnected; its jobs, cached snapshots and alerts go with it. Its repository is not touched.",
    access: "admin",
    params: HOST_ID,
    responses: NO_CONTENT,
  },
  {
    id: "putRepoCredentials",
    method: "put",
    path: "/api/hosts/:id/repo-credentials",
    tag: "Hosts",
    summary: "Set the repository credentials",
    description:
      'Merged with the stored ones; sent to the agent at once when it is connected. `username` or `login_password` null or "" removes it. A `login_password` (the repository server login, apart from the repository password) is refused with 409 while an agent older than protocol 11 is connected: it would log in with the repository password.',
    access: "admin",
    params: HOST_ID,
    body: CredentialBody,
    responses: { 200: { description: "Stored.", schema: CredentialsPushed } },
    errors: { 409: "A login_password while an agent older than protocol 11 is connected." },
  },
  {
    id: "putAdminCredentials",
    method: "put",
    path: "/api/hosts/:id/admin-credentials",
    tag: "Hosts",
    summary: "Set the admin credentials (needed by prune and unlock)",
    description:
      'Merged with the stored ones; sent to the agent only right before a job needs them. `username` or `login_password` null or "" removes it; a `login_password` needs an agent of protocol 11 (409 while an older one is connected).',
    access: "admin",
    params: HOST_ID,
    body: CredentialBody,
    responses: { 200: { description: "Stored.", schema: CredentialsPushed } },
    errors: { 409: "A login_password while an agent older than protocol 11 is connected." },
  },
  {
    id: "putMirrorCredentials",
    method: "put",
    path: "/api/hosts/:id/mirror-credentials",
    tag: "Mirror",
    summary: "Bind or change the mirror repository",
    description:
      'After every good backup a copy job brings the host\'s snapshots to the mirror. Fields as for the repository credentials: `username` or `login_password` null or "" removes it; a `login_password` needs an agent of protocol 11.',
    access: "admin",
    params: HOST_ID,
    body: CredentialBody,
    responses: { 200: { description: "Stored.", schema: MirrorCredentialsAnswer } },
    errors: { 409: "A login_password while an agent older than protocol 11 is connected." },
  },
  {
    id: "deleteMirrorCredentials",
    method: "delete",
    path: "/api/hosts/:id/mirror-credentials",
    tag: "Mirror",
    summary: "Remove the mirror",
    description: "Resolves the host's mirror_failed alerts; the mirror's data is not touched.",
    access: "admin",
    params: HOST_ID,
    responses: NO_CONTENT,
  },
  {
    id: "copyToMirror",
    method: "post",
    path: "/api/hosts/:id/mirror/copy",
    tag: "Mirror",
    summary: "Copy the host's snapshots to the mirror now",
    access: "operator",
    params: HOST_ID,
    responses: { 201: { description: "The copy job.", schema: JobStartedWithStatus } },
    errors: {
      409: "No mirror, an agent that cannot copy, nothing to copy yet, or a copy already queued or running.",
      503: "The host is offline.",
    },
  },
  {
    id: "putBandwidth",
    method: "put",
    path: "/api/hosts/:id/bandwidth",
    tag: "Hosts",
    summary: "Set the host-wide upload and download caps (KiB/s, null for none)",
    access: "operator",
    params: HOST_ID,
    body: BandwidthBody,
    responses: { 200: { description: "Stored, and pushed when connected.", schema: BandwidthAnswer } },
  },
  {
    id: "putKeeper",
    method: "put",
    path: "/api/hosts/:id/keeper",
    tag: "Hosts",
    summary: "Designate the keeper of the host's repository (null: none)",
    description:
      "A host with a keeper is protected: it never receives the repository's delete-capable (admin) or mirror credentials; forget, prune, unlock, check and mirror copies run on the keeper. The keeper's agent must speak protocol 12.",
    access: "admin",
    params: HOST_ID,
    body: KeeperBody,
    responses: {
      200: { description: "Stored, and the host's agent told when connected.", schema: KeeperAnswer },
    },
    errors: {
      400: "The keeper is the host itself or does not exist.",
      409: "The keeper's agent is too old to keep.",
    },
  },
  {
    id: "releaseDeletionHold",
    method: "post",
    path: "/api/hosts/:id/deletion-holds/:hid/release",
    tag: "Hosts",
    summary: "Release a deletion hold, saying why; for a large_forget hold, run exactly the held forget",
    access: "admin",
    params: { ...HOST_ID, hid: "The hold's id." },
    body: ReleaseHoldBody,
    responses: { 200: { description: "Released (audited).", schema: ReleaseHoldAnswer } },
    errors: {
      404: "No open hold of that id on the host.",
      409: "The held forget could not start (the keeper is offline, another hold stands); the hold stays.",
    },
  },
  {
    id: "startHostJob",
    method: "post",
    path: "/api/hosts/:id/jobs",
    tag: "Jobs",
    summary: "Start a manual repository job",
    description: `\`kind\`: ${MANUAL_JOB_KINDS.join(", ")}. prune needs an admin.`,
    access: "operator",
    params: HOST_ID,
    body: JobBody,
    responses: { 201: { description: "The job.", schema: JobStartedWithStatus } },
    errors: {
      409: "A job of that kind is already queued or running, or the host cannot run it.",
      503: "The host is offline.",
    },
  },
  {
    id: "listAlerts",
    method: "get",
    path: "/api/alerts",
    tag: "Alerts",
    summary: "List alerts, newest first",
    description: "`state` defaults to open.",
    access: "viewer",
    query: AlertsQuery,
    responses: { 200: { description: "A page of alerts.", schema: AlertPage } },
  },
  {
    id: "resolveAlert",
    method: "post",
    path: "/api/alerts/:id/resolve",
    tag: "Alerts",
    summary: "Resolve an alert by hand",
    access: "operator",
    params: { id: "The alert's id." },
    responses: { 200: { description: "Resolved.", schema: AlertResolved } },
    errors: { 409: "Already resolved." },
  },
];
