/**
 * @module catalog/catalog-keys
 * The catalogue's keys: 64-bit hashes the server computes instead of ids the database generates,
 * so that applying thousands of paths takes no round trip to learn ids, and a version row holds
 * two integers where a path or a host id and tag would be ~100 bytes. Within one lineage, two of
 * its ~10,000 directories share a key with odds of ~10⁻¹¹; a lineage key is unique per database
 * (a primary key), and a clash would be refused there, not merged.
 */
import { createHash } from "node:crypto";

function key64(text: string): bigint {
  return createHash("sha256").update(text).digest().readBigInt64BE(0);
}

export function lineageKey(hostId: string, tag: string): bigint {
  return key64(`lineage\n${hostId}\n${tag}`);
}

export function dirKey(path: string): bigint {
  return key64(`dir\n${path}`);
}

/** The folder and name of an absolute path; undefined for the root, which names no entry. */
export function splitPath(path: string): { dir: string; name: string } | undefined {
  const slash = path.lastIndexOf("/");
  const name = path.slice(slash + 1);
  if (name === "") {
    return undefined;
  }
  return { dir: slash === 0 ? "/" : path.slice(0, slash), name };
}

export function joinPath(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}
