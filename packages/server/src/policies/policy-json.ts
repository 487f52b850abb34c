/**
 * @module policies/policy-json
 * A policy and a version as the policies API answers them (openapi/policy-schemas.ts): a group's
 * hooks as has_pre_hook / has_post_hook, never their text or sealed bytes.
 */
import { shownContent } from "./policy-hooks.js";
import type { PolicySpec } from "./policy-spec.js";

export interface PolicyAnswer {
  id: string;
  name: string;
  version: number;
  selector: string;
  priority: number;
  spec: PolicySpec;
  created_at: string;
  updated_at: string;
}

export interface VersionAnswer {
  version: number;
  name: string;
  selector: string;
  priority: number;
  spec: PolicySpec;
  actor_user_id: string | null;
  note: string | null;
  created_at: string;
}

export function policyJson(row: {
  id: string;
  name: string;
  version: number;
  selector: string;
  priority: number;
  spec: unknown;
  createdAt: Date;
  updatedAt: Date;
}): PolicyAnswer {
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    selector: row.selector,
    priority: row.priority,
    spec: shownContent(row.spec as Record<string, unknown>) as PolicySpec,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function versionJson(row: {
  version: number;
  name: string;
  selector: string;
  priority: number;
  spec: unknown;
  actorUserId: string | null;
  note: string | null;
  createdAt: Date;
}): VersionAnswer {
  return {
    version: row.version,
    name: row.name,
    selector: row.selector,
    priority: row.priority,
    spec: shownContent(row.spec as Record<string, unknown>) as PolicySpec,
    actor_user_id: row.actorUserId,
    note: row.note,
    created_at: row.createdAt.toISOString(),
  };
}
