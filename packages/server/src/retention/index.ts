/**
 * @module retention
 * Retention decided by the server: which snapshot ids a host's source-group policies remove.
 */
export type { ForgetRules, KeptSnapshot } from "./expire-policy.js";
export {
  type GroupPlan,
  planRetention,
  type RetentionInput,
  type RetentionPlan,
  type RetentionSnapshot,
  type SuspectSnapshot,
} from "./plan-retention.js";
export { DEFAULT_SUSPECT_TOLERANCE, type SuspectTolerance } from "./suspect-snapshots.js";
