/**
 * @module openapi/view-types
 * Type-level only: the *Json view functions' return types, as JSON (a Date is a string, an
 * undefined field is absent), must fit the answer schemas' static types. The answer test sees
 * one seeded value per field; this sees every branch, so a view field that can be null while its
 * schema says it cannot fails the typecheck. (The test catches the other direction: a view
 * field the schema does not name.) Nothing here runs.
 */
import type { Static, TSchema } from "typebox";
import type { alertJson } from "../alerts/alerts.js";
import type { userView } from "../auth/user-view.js";
import type { dashboardJson } from "../dashboard/dashboard-view.js";
import type { mintJson } from "../enrolment/mint-request.js";
import type { fleetPageJson } from "../fleet/fleet-list.js";
import type { hostDetailJson } from "../fleet/host-detail.js";
import type { freshnessJson } from "../freshness/freshness.js";
import type { jobJson } from "../jobs/job-queries.js";
import type { lastDrillJson } from "../maintenance/last-drill.js";
import type { maintenanceJson } from "../maintenance/maintenance-record.js";
import type { mirrorJson } from "../mirror/mirror-state.js";
import type { channelJson } from "../notifications/channels.js";
import type { repoStatsJson } from "../snapshots/repo-stats.js";
import type { snapshotJson } from "../snapshots/snapshot-store.js";
import type { ScheduleTiming } from "../sources/cron-description.js";
import type { scheduleJson } from "../sources/schedules.js";
import type { rolloutJson } from "../updates/rollout.js";
import type { NotificationChannel, User } from "./account-schemas.js";
import type { Alert, Dashboard } from "./alert-schemas.js";
import type { MintedToken, Rollout } from "./fleet-access-schemas.js";
import type { FleetPage, HostDetail, LastDrill, MirrorState } from "./host-schemas.js";
import type { Job } from "./job-schemas.js";
import type { Maintenance, RepoStats, Snapshot } from "./repository-schemas.js";
import type { Freshness, Schedule } from "./source-schemas.js";

type OptionalKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

/** What JSON.stringify makes of a value of type T. */
export type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in Exclude<keyof T, OptionalKeys<T>>]: Wire<T[K]> } & {
          [K in OptionalKeys<T>]?: Wire<Exclude<T[K], undefined>>;
        }
      : T;

/** Fails to compile when the view's JSON does not fit the schema. */
type Fits<S extends TSchema, V extends Static<S>> = [S, V];

export type ViewsFitSchemas = [
  // `update` spreads updateJson, whose null the type cannot rule out (the database's
  // hosts_update_pair_check does): its fields are checked through FleetPage's AgentUpdate.
  Fits<
    typeof HostDetail,
    Omit<Wire<ReturnType<typeof hostDetailJson>>, "update"> & Pick<Static<typeof HostDetail>, "update">
  >,
  Fits<typeof FleetPage, Wire<ReturnType<typeof fleetPageJson>>>,
  Fits<typeof MirrorState, Wire<ReturnType<typeof mirrorJson>>>,
  Fits<typeof LastDrill, Wire<NonNullable<ReturnType<typeof lastDrillJson>>>>,
  Fits<typeof Job, Wire<ReturnType<typeof jobJson>>>,
  Fits<typeof Snapshot, Wire<ReturnType<typeof snapshotJson>>>,
  Fits<typeof Maintenance, Wire<ReturnType<typeof maintenanceJson>>>,
  Fits<typeof RepoStats, Wire<ReturnType<typeof repoStatsJson>>>,
  Fits<typeof Freshness, Wire<ReturnType<typeof freshnessJson>>>,
  // alertJson's `state` is typed string (a ternary of two literals widens); the rest is checked.
  Fits<typeof Alert, Omit<Wire<ReturnType<typeof alertJson>>, "state"> & Pick<Static<typeof Alert>, "state">>,
  Fits<
    typeof Dashboard,
    Omit<Wire<ReturnType<typeof dashboardJson>>, "newest_alerts"> &
      Pick<Static<typeof Dashboard>, "newest_alerts">
  >,
  Fits<typeof NotificationChannel, Wire<ReturnType<typeof channelJson>>>,
  Fits<typeof User, Wire<ReturnType<typeof userView>>>,
  Fits<typeof MintedToken, Wire<ReturnType<typeof mintJson>>>,
  Fits<typeof Rollout, Wire<ReturnType<typeof rolloutJson>>>,
  // The routes add the timing (sources/cron-description.ts scheduleTiming) to scheduleJson.
  Fits<typeof Schedule, Wire<ReturnType<typeof scheduleJson> & ScheduleTiming>>,
];
