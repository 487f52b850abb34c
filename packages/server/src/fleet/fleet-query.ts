/**
 * @module fleet/fleet-query
 * The host list's query string (`/hosts`, `/partials/fleet`, `GET /api/hosts`): the state tab, the
 * name search, the label selector (issue 37), sort, order and page, validated with defaults filled
 * in, and the links that change one of them. fleet/fleet-list.ts reads the page they describe.
 */
import { type Static, Type } from "typebox";
import { HOST_STATES, type HostState } from "../freshness/host-states.js";
import { validateQuery } from "../http/validate.js";
import { SELECTOR_MAX_LENGTH, type Selector, selectorFromRequest } from "../labels/selector.js";

export const FLEET_SORTS = ["name", "last_snapshot", "status"] as const;
export type FleetSort = (typeof FLEET_SORTS)[number];
export const FLEET_ORDERS = ["asc", "desc"] as const;
export type FleetOrder = (typeof FLEET_ORDERS)[number];

export const FLEET_PAGE_DEFAULT = 100;
export const FLEET_PAGE_MAX = 500;
/** Pages past this are refused: the offset would make each one a scan of a huge fleet. */
const MAX_PAGE = 100_000;

/** The query string of `/hosts`, `/partials/fleet` and `GET /api/hosts`. */
export const HostListQuery = Type.Object(
  {
    // Empty: no filter, what the page's form sends for "any".
    state: Type.Optional(
      Type.Union([
        Type.Literal(""),
        Type.Literal("online"),
        Type.Literal("offline"),
        Type.Literal("overdue"),
        Type.Literal("failing"),
        Type.Literal("unprotected"),
      ]),
    ),
    q: Type.Optional(Type.String({ maxLength: 100 })),
    selector: Type.Optional(
      Type.String({
        maxLength: SELECTOR_MAX_LENGTH,
        description: "a label selector, e.g. `env=prod,!staging`",
      }),
    ),
    sort: Type.Optional(
      Type.Union([Type.Literal("name"), Type.Literal("last_snapshot"), Type.Literal("status")]),
    ),
    order: Type.Optional(Type.Union([Type.Literal("asc"), Type.Literal("desc")])),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 999_999 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 999 })),
  },
  { additionalProperties: false },
);
export type HostListQuery = Static<typeof HostListQuery>;
// The literals above spelled out (a mapped array would type them as undefined); these keep them in step.
const _states: readonly NonNullable<HostListQuery["state"]>[] = HOST_STATES;
const _sorts: readonly NonNullable<HostListQuery["sort"]>[] = FLEET_SORTS;
const _orders: readonly NonNullable<HostListQuery["order"]>[] = FLEET_ORDERS;
void [_states, _sorts, _orders];

export interface FleetListParams {
  state: HostState | undefined;
  q: string;
  /** The selector's text as given (trimmed) and parsed; empty: no filter. */
  selectorText: string;
  selector: Selector;
  sort: FleetSort;
  order: FleetOrder;
  page: number;
  limit: number;
}

/** Defaults filled in; an empty `q` or `state` (the page's form sends them) means no filter. */
export function fleetListParams(query: HostListQuery): FleetListParams {
  return {
    state: query.state === "" ? undefined : query.state,
    q: (query.q ?? "").trim(),
    selectorText: (query.selector ?? "").trim(),
    selector: selectorFromRequest(query.selector ?? "", "selector"),
    sort: query.sort ?? "name",
    order: query.order ?? "asc",
    page: Math.min(Number(query.page ?? 1), MAX_PAGE),
    limit: Math.min(Number(query.limit ?? FLEET_PAGE_DEFAULT), FLEET_PAGE_MAX),
  };
}

/**
 * The validated list parameters. An empty `state` or `q` (what the page's form sends for "any")
 * is no filter; anything else unknown or malformed is a 400 naming the field.
 */
export function readHostListQuery(query: Record<string, string>): FleetListParams {
  return fleetListParams(validateQuery(HostListQuery, query));
}

/** The query string of a link to another page or sort of the same list; defaults are left out. */
export function fleetHref(base: string, params: FleetListParams, change: Partial<FleetListParams>): string {
  const next = { ...params, ...change };
  const search = new URLSearchParams();
  if (next.state) {
    search.set("state", next.state);
  }
  if (next.q) {
    search.set("q", next.q);
  }
  if (next.selectorText) {
    search.set("selector", next.selectorText);
  }
  if (next.sort !== "name") {
    search.set("sort", next.sort);
  }
  if (next.order !== "asc") {
    search.set("order", next.order);
  }
  if (next.page !== 1) {
    search.set("page", String(next.page));
  }
  if (next.limit !== FLEET_PAGE_DEFAULT) {
    search.set("limit", String(next.limit));
  }
  const text = search.toString();
  return text ? `${base}?${text}` : base;
}
