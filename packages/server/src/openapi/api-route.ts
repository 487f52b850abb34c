/**
 * @module openapi/api-route
 * One definition per /api operation: what the document says of it (method, path, access, query,
 * body, answers) and its handler, side by side. A route module makes one group, adds its
 * operations, and mounts the group with its dependencies; the group's `operations` is what
 * openapi/operations.ts hands the document builder. So the route table and the document cannot
 * drift apart: both are read off the same object, and the schema the document shows is the one
 * the route validates with (before the handler runs, after the role guard, as readJson did).
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import type { Static, TObject, TSchema } from "typebox";
import type { AppDeps } from "../app-deps.js";
import type { AuditContext } from "../audit/audit.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { readJson, readOptionalJson, readQuery } from "../http/validate.js";
import type { ApiOperation } from "./operation.js";

/** What the route read and validated; a part the operation does not take is `undefined`. */
export interface ApiInput<Q, B> {
  query: Q;
  body: B;
}

type StaticOr<S, Fallback> = S extends TSchema ? Static<S> : Fallback;

export type ApiHandler<Ctx, Q, B, P extends string = string> = (
  c: Context<AppEnv, P>,
  input: ApiInput<StaticOr<Q, undefined>, StaticOr<B, undefined>>,
  ctx: Ctx,
) => Response | Promise<Response>;

export type ApiRouteSpec<
  Ctx,
  Q extends TObject | undefined,
  B extends TSchema | undefined,
  P extends string = string,
> = Omit<ApiOperation, "path" | "query" | "body" | "tag"> & {
  /** The group's tag unless this operation belongs in another section of the document. */
  tag?: string;
  /** Hono's pattern; its `:name` parts type `c.req.param`. */
  path: P;
  query?: Q;
  body?: B;
  /** Run after the role guard and before validation (a limiter, say); not in the document. */
  middleware?: MiddlewareHandler<AppEnv>[];
  handler: ApiHandler<Ctx, Q, B, P>;
};

export interface ApiGroup<Ctx> {
  /** The group's operations in the order they were added, without their handlers. */
  readonly operations: readonly ApiOperation[];
  add<P extends string, Q extends TObject | undefined = undefined, B extends TSchema | undefined = undefined>(
    spec: ApiRouteSpec<Ctx, Q, B, P>,
  ): void;
  /** A Hono app answering every operation of the group, each behind its role. */
  routes(ctx: Ctx): Hono<AppEnv>;
}

interface Entry<Ctx> {
  operation: ApiOperation;
  middleware: MiddlewareHandler<AppEnv>[];
  handler: (c: Context<AppEnv>, input: ApiInput<unknown, unknown>, ctx: Ctx) => Response | Promise<Response>;
}

async function readInput(c: Context<AppEnv>, op: ApiOperation): Promise<ApiInput<unknown, unknown>> {
  const query = op.query === undefined ? undefined : readQuery(c, op.query);
  let body: unknown;
  if (op.body !== undefined) {
    body = op.bodyOptional === true ? await readOptionalJson(c, op.body) : await readJson(c, op.body);
  }
  return { query, body };
}

/** What a group's operations share unless one says otherwise. */
export interface GroupDefaults {
  /** The section of the document the group's operations are listed under. */
  tag: string;
}

export function apiGroup<Ctx>(defaults: GroupDefaults): ApiGroup<Ctx> {
  const entries: Entry<Ctx>[] = [];
  const operations: ApiOperation[] = [];
  return {
    operations,
    add(spec) {
      const { handler, middleware, ...own } = spec;
      const operation: ApiOperation = { ...own, tag: own.tag ?? defaults.tag };
      if (entries.some((e) => e.operation.id === operation.id)) {
        throw new Error(`operation ${operation.id} is defined twice`);
      }
      operations.push(operation);
      entries.push({
        operation,
        middleware: middleware ?? [],
        // The input was read with the very schemas that typed the handler's parameter.
        handler: handler as unknown as Entry<Ctx>["handler"],
      });
    },
    routes(ctx) {
      const routes = new Hono<AppEnv>();
      for (const { operation, middleware, handler } of entries) {
        // Agents prove themselves with their own token, which their handler checks.
        const guard =
          operation.access === "public" || operation.access === "agent"
            ? []
            : [requireRole(operation.access)];
        const answer: MiddlewareHandler<AppEnv> = async (c) => handler(c, await readInput(c, operation), ctx);
        // Hono's overloads type a fixed number of handlers; this chain's length varies.
        const on = routes.on.bind(routes) as (
          method: string,
          path: string,
          ...chain: MiddlewareHandler<AppEnv>[]
        ) => void;
        on(operation.method.toUpperCase(), operation.path, ...guard, ...middleware, answer);
      }
      return routes;
    },
  };
}

/** The answer of an operation that answers nothing but its status. */
export const NO_CONTENT = { 204: { description: "Done." } } as const;

/**
 * The handler of an operation that does one audited thing to the `:id` of its path (delete,
 * revoke, reject) and answers nothing but 204; the thing throws for an id that names nothing.
 */
export function actOnPathId(act: (deps: AppDeps, audit: AuditContext, id: string) => Promise<unknown>) {
  return async (
    c: Context<AppEnv, `${string}/:id${string}`>,
    _input: unknown,
    deps: AppDeps,
  ): Promise<Response> => {
    await act(deps, auditOf(c), c.req.param("id"));
    return c.body(null, 204);
  };
}

/** The path parameter most operations take. */
export const HOST_ID = { id: "The host's id." };

/** The 503 of an operation that needs the host's agent connected. */
export const OFFLINE = "The host is offline; nothing was sent.";
