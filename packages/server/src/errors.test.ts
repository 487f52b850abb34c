import { Hono } from "hono";
import { Compile } from "typebox/compile";
import { describe, expect, it } from "vitest";
import { ErrorBody, errorBody, isErrorCode, RequestError, statusOf } from "./errors.js";
import { handleError, handleNotFound } from "./http/error-handler.js";
import { createLogger } from "./log.js";

// API clients match on these strings and statuses; a change here breaks them.
const CONTRACT = {
  invalid: 400,
  unauthorised: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  uri_too_long: 414,
  upgrade_required: 426,
  rate_limited: 429,
  internal: 500,
  agent_error: 502,
  unavailable: 503,
  timeout: 504,
} as const;

describe("error codes", () => {
  it("answers each code with the status of the contract", () => {
    for (const [code, status] of Object.entries(CONTRACT)) {
      expect(isErrorCode(code)).toBe(true);
      expect(statusOf(code as keyof typeof CONTRACT)).toBe(status);
    }
    expect(isErrorCode("teapot")).toBe(false);
    expect(isErrorCode("toString")).toBe(false);
  });

  it("builds bodies that match the one schema, leaving absent options out", () => {
    const check = Compile(ErrorBody);
    expect(errorBody("timeout", "no reply")).toEqual({ code: "timeout", message: "no reply" });
    const full = errorBody("invalid", "name: is required", { requestId: "r1", details: [{ field: "name" }] });
    expect(full).toEqual({
      code: "invalid",
      message: "name: is required",
      request_id: "r1",
      details: [{ field: "name" }],
    });
    expect(check.Check(full)).toBe(true);
    expect(check.Check({ code: "teapot", message: "no" })).toBe(false);
  });

  it("maps a thrown timeout and agent error to 504 and 502 with the request id", async () => {
    const app = new Hono();
    app.use(async (c, next) => {
      c.set("requestId" as never, "req-1" as never);
      await next();
    });
    app.get("/api/slow", () => {
      throw new RequestError("timeout", "the agent did not answer");
    });
    app.get("/api/broken", () => {
      throw new RequestError("agent_error", "boom");
    });
    app.notFound(handleNotFound);
    app.onError(handleError(createLogger("silent")));
    const slow = await app.request("/api/slow");
    expect(slow.status).toBe(504);
    expect(await slow.json()).toEqual({
      code: "timeout",
      message: "the agent did not answer",
      request_id: "req-1",
    });
    const broken = await app.request("/api/broken");
    expect(broken.status).toBe(502);
    expect(await broken.json()).toEqual({ code: "agent_error", message: "boom", request_id: "req-1" });
    const missing = await app.request("/api/nothing");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ code: "not_found", message: "No route for GET /api/nothing" });
  });
});
