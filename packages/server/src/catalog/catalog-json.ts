/**
 * @module catalog/catalog-json
 * Search hits and file versions as the API answers them (openapi/catalog-schemas.ts).
 */
import type { SearchHit, SearchResult, SnapshotRef } from "./catalog-search.js";
import type { FileVersion } from "./file-history.js";

function refJson(ref: SnapshotRef) {
  return { id: ref.id, time: ref.time.toISOString() };
}

export function hitJson(hit: SearchHit) {
  return {
    host_id: hit.host.id,
    host_name: hit.host.name,
    group: hit.group,
    path: hit.path,
    type: hit.type,
    size: hit.size,
    mtime: hit.mtime.toISOString(),
    snapshot_count: hit.snapshotCount,
    first_snapshot: refJson(hit.first),
    last_snapshot: refJson(hit.last),
    current: hit.current,
  };
}

export function searchJson(result: SearchResult) {
  return { hits: result.hits.map(hitJson), more: result.more, not_catalogued: result.notCatalogued };
}

export function versionJson(version: FileVersion) {
  return { ...hitJson(version), snapshots: version.snapshots.map(refJson) };
}
