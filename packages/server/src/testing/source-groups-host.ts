/**
 * @module testing/source-groups-host
 * What the source group tests start from: `signedInHostPerTest`'s app, its host named db-01, with
 * the address its groups are posted to, the group most tests post, and a hook they look for.
 */
import { type SignedInHost, signedInHostPerTest } from "./signed-in-app.js";

/** A group of /etc with a retention policy, valid as it stands; tests spread it to vary one field. */
export const ETC_GROUP = { name: "etc", includes: ["/etc"], retention_policy: { daily: 7, within: "30d" } };

/** A hook command that must reach the agent and never a page, a log or the audit. */
export const HOOK_CANARY = "echo Canary-Hook-4417";

export interface SourceGroupsHost extends SignedInHost {
  /** The host's source-groups API collection. */
  groupsUrl(): string;
}

/** `signedInHostPerTest` with host db-01, refilled for each test of the calling file. */
export function sourceGroupsHostPerTest(): SourceGroupsHost {
  const s = signedInHostPerTest({ name: "db-01" }) as SourceGroupsHost;
  s.groupsUrl = () => `/api/hosts/${s.hostId}/source-groups`;
  return s;
}
