/**
 * @module restore-helper/helper-wire
 * The local wire between the confined agent and the restore helper: one JSON line from the agent
 * (the request), then JSON lines from the helper (output lines, then one end frame). Both sides
 * validate every frame; the request carries the repository credentials, so it only ever travels
 * over the root-only Unix socket and is never logged.
 */
import { RestoreOrder } from "@fleetback/protocol";
import { type Static, Type } from "typebox";
import { Check } from "typebox/value";

/** 2: the request carries the server's signed restore order (protocol 13). */
export const HELPER_WIRE_VERSION = 2;
/** argv, a handful of variables and an order of at most one protocol frame: far below this. */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** Longest output line the helper forwards (the agent's own splitter cuts it again). */
export const MAX_FRAME_LINE = 64 * 1024;

/** The restic environment the helper accepts from the agent: repository, its key, progress rate. */
export const HELPER_ENV_NAMES = ["RESTIC_REPOSITORY", "RESTIC_PASSWORD", "RESTIC_PROGRESS_FPS"] as const;

export const HelperRequest = Type.Object(
  {
    v: Type.Literal(HELPER_WIRE_VERSION),
    /** restic argv as restic.ts builds it for `restore`: global flags, `restore`, its options. */
    args: Type.Array(Type.String({ maxLength: 8192 }), { minItems: 2, maxItems: 20_000 }),
    env: Type.Object(
      {
        RESTIC_REPOSITORY: Type.String({ minLength: 1, maxLength: 8192 }),
        RESTIC_PASSWORD: Type.String({ maxLength: 8192 }),
        RESTIC_PROGRESS_FPS: Type.Optional(Type.String({ pattern: "^[0-9.]{1,8}$" })),
      },
      { additionalProperties: false },
    ),
    max_line_length: Type.Optional(Type.Integer({ minimum: 80, maximum: MAX_FRAME_LINE })),
    /** Optional on the wire only so that its absence gets a sentence: the helper requires it. */
    order: Type.Optional(RestoreOrder),
  },
  { additionalProperties: false },
);
export type HelperRequest = Static<typeof HelperRequest>;

export const HelperFrame = Type.Union([
  Type.Object(
    {
      t: Type.Literal("line"),
      s: Type.Union([Type.Literal("stdout"), Type.Literal("stderr")]),
      x: Type.String({ maxLength: MAX_FRAME_LINE + 64 }),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      t: Type.Literal("exit"),
      code: Type.Union([Type.Integer(), Type.Null()]),
      signal: Type.Union([Type.String({ maxLength: 32 }), Type.Null()]),
    },
    { additionalProperties: false },
  ),
  /** The helper ran nothing: the request was not a restore it may run, or restic is missing. */
  Type.Object(
    {
      t: Type.Literal("refused"),
      message: Type.String({ maxLength: 2048 }),
      missing: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
]);
export type HelperFrame = Static<typeof HelperFrame>;

export function encodeFrame(frame: HelperFrame | HelperRequest): string {
  return `${JSON.stringify(frame)}\n`;
}

export function parseRequest(
  line: string,
): { ok: true; request: HelperRequest } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, error: "the request is not JSON" };
  }
  if (!Check(HelperRequest, value)) {
    // Names the field, never its value: the value may be the repository password.
    const fields = value !== null && typeof value === "object" ? Object.keys(value) : [];
    const known = new Set(["v", "args", "env", "max_line_length", "order"]);
    const unknown = fields.find((field) => !known.has(field));
    return {
      ok: false,
      error:
        unknown === undefined
          ? `the request does not match the restore helper's wire version ${HELPER_WIRE_VERSION} (v, args, env, order): the agent and its helper must be the same version`
          : `the request has an unknown field ${JSON.stringify(unknown.slice(0, 64))}`,
    };
  }
  return { ok: true, request: value };
}

export function parseFrame(line: string): HelperFrame | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return Check(HelperFrame, value) ? value : undefined;
  } catch {
    return undefined;
  }
}
