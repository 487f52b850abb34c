/**
 * @module catalog/catalog-query
 * What a search box's text means (issue 38.3). A text without `/` matches names: `id_rsa` is every
 * file, folder or link called that, `*.conf` every name ending so (`*` any characters, `?` one),
 * case-insensitive. A text with `/` matches a folder and a name: the part after the last `/` is
 * the name, as above; the part before is the folder, where `*` also crosses `/` (`*∕nginx/*.conf`
 * is any .conf right inside any folder called nginx). A folder part not starting with `/` or `*`
 * may sit anywhere (`nginx/nginx.conf` is `*∕nginx/nginx.conf`). Folders are case-sensitive, as on
 * Linux.
 *
 * Names are matched through one of two indexes of the lower-cased name: read forwards for a
 * pattern with a fixed start (`id_rsa`, `nginx*`), backwards for one with a fixed end (`*.conf`),
 * and a pattern fixed at neither end (`*nginx*`) scans.
 */
import { type SQL, sql } from "drizzle-orm";

export const SEARCH_TEXT_MAX_LENGTH = 1024;

export interface CatalogQuery {
  /** The name's glob, lower-cased. */
  name: string;
  /** The folder's glob, or undefined for any folder. */
  dir?: string;
}

export class CatalogQueryError extends Error {}

const WILDCARD = /[*?]/;

export function parseCatalogQuery(text: string): CatalogQuery {
  const q = text.trim();
  if (q === "") {
    throw new CatalogQueryError("give a name, a path or a glob such as *.conf");
  }
  if (q.length > SEARCH_TEXT_MAX_LENGTH) {
    throw new CatalogQueryError(`at most ${SEARCH_TEXT_MAX_LENGTH} characters`);
  }
  if (q.includes("\0")) {
    throw new CatalogQueryError("must not hold a NUL character");
  }
  const slash = q.lastIndexOf("/");
  if (slash < 0) {
    return { name: q.toLowerCase() };
  }
  const name = q.slice(slash + 1);
  if (name === "") {
    throw new CatalogQueryError("ends with /: name what is inside the folder, or * for everything in it");
  }
  let dir = q.slice(0, slash);
  if (dir === "") {
    dir = "/";
  } else if (!dir.startsWith("/") && !dir.startsWith("*")) {
    dir = `*/${dir}`;
  }
  return { name: name.toLowerCase(), dir };
}

function likeOf(glob: string): string {
  return glob
    .replace(/[\\%_]/g, (c) => `\\${c}`)
    .replace(/\*/g, "%")
    .replace(/\?/g, "_");
}

/** A predicate on `name` (the version's name column) that the name indexes can answer. */
export function nameSql(name: SQL, glob: string): SQL {
  if (!WILDCARD.test(glob)) {
    return sql`lower(${name}) = ${glob}`;
  }
  const fixedStart = !/^[*?]/.test(glob);
  const fixedEnd = !/[*?]$/.test(glob);
  if (!fixedStart && fixedEnd) {
    return sql`reverse(lower(${name})) like ${likeOf([...glob].reverse().join(""))}`;
  }
  return sql`lower(${name}) like ${likeOf(glob)}`;
}

export function dirSql(dir: SQL, glob: string): SQL {
  return WILDCARD.test(glob) ? sql`${dir} like ${likeOf(glob)}` : sql`${dir} = ${glob}`;
}
