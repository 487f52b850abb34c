/**
 * @module catalog/search-request
 * The fleet search's query, shared by its page and its JSON: the text, and filters by host, label
 * selector, group and time. A text the catalogue cannot read is an `invalid` error on `q`.
 */
import { CATALOG_PATH_MAX_LENGTH } from "@fleetback/protocol";
import { type Static, Type } from "typebox";
import { RequestError } from "../errors.js";
import { selectorFromRequest } from "../labels/selector.js";
import {
  type CatalogQuery,
  CatalogQueryError,
  parseCatalogQuery,
  SEARCH_TEXT_MAX_LENGTH,
} from "./catalog-query.js";
import { SEARCH_LIMIT_MAX, type SearchFilters } from "./catalog-search.js";

const Moment = Type.String({
  // Empty as a form's blank date input sends it: no bound.
  pattern: "^(\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:\\d{2})?)?)?$",
  description: "a day (YYYY-MM-DD, UTC) or an RFC 3339 time; empty: no bound",
});

export const SearchQueryParams = Type.Object(
  {
    q: Type.String({
      maxLength: SEARCH_TEXT_MAX_LENGTH,
      description:
        "a name (`id_rsa`), a glob (`*.conf`) or a path glob (`*/nginx/*.conf`); `*` is any characters, `?` one",
    }),
    hosts: Type.Optional(
      Type.String({ maxLength: 27 * 1000, description: "host ids, comma-separated; empty: every host" }),
    ),
    selector: Type.Optional(
      Type.String({
        maxLength: 4096,
        description: "a label selector (`env=prod,!staging`); empty: every host",
      }),
    ),
    groups: Type.Optional(
      Type.String({
        maxLength: 2048,
        description: "source group names, comma-separated; empty: every group",
      }),
    ),
    from: Type.Optional(Moment),
    to: Type.Optional(Moment),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_LIMIT_MAX })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  },
  { additionalProperties: false },
);
export type SearchQueryParams = Static<typeof SearchQueryParams>;

export const FileVersionsQuery = Type.Object(
  {
    path: Type.String({
      minLength: 2,
      maxLength: CATALOG_PATH_MAX_LENGTH,
      pattern: "^/",
      description: "an absolute path",
    }),
  },
  { additionalProperties: false },
);

export interface SearchRequest {
  query: CatalogQuery;
  filters: SearchFilters;
  limit?: number;
  offset?: number;
}

function listOf(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

function momentOf(text: string | undefined, field: "from" | "to"): Date | undefined {
  if (text === undefined || text === "") {
    return undefined;
  }
  const dayOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  // A day alone means all of it: from its start, to its end.
  const value = dayOnly ? `${text}T${field === "from" ? "00:00:00" : "23:59:59.999"}Z` : text;
  const time = new Date(value.includes("Z") || /[+-]\d{2}:\d{2}$/.test(value) ? value : `${value}Z`);
  if (Number.isNaN(time.getTime())) {
    const message = "is not a date or time";
    throw new RequestError("invalid", `${field}: ${message}`, { details: [{ field, message }] });
  }
  return time;
}

export function searchRequestOf(params: SearchQueryParams): SearchRequest {
  let query: CatalogQuery;
  try {
    query = parseCatalogQuery(params.q);
  } catch (error) {
    if (error instanceof CatalogQueryError) {
      throw new RequestError("invalid", `q: ${error.message}`, {
        details: [{ field: "q", message: error.message }],
      });
    }
    throw error;
  }
  const hostIds = listOf(params.hosts);
  const groups = listOf(params.groups);
  const from = momentOf(params.from, "from");
  const to = momentOf(params.to, "to");
  if (from !== undefined && to !== undefined && from.getTime() > to.getTime()) {
    const message = "is after to";
    throw new RequestError("invalid", `from: ${message}`, { details: [{ field: "from", message }] });
  }
  const selector = selectorFromRequest(params.selector ?? "", "selector");
  return {
    query,
    filters: {
      ...(hostIds.length > 0 ? { hostIds } : {}),
      ...(selector.length > 0 ? { selector } : {}),
      ...(groups.length > 0 ? { groups } : {}),
      ...(from !== undefined ? { from } : {}),
      ...(to !== undefined ? { to } : {}),
    },
    ...(params.limit !== undefined ? { limit: params.limit } : {}),
    ...(params.offset !== undefined ? { offset: params.offset } : {}),
  };
}
