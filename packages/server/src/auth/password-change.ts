/**
 * @module auth/password-change
 * A signed-in user changing their own password over HTTP, shared by the JSON API and the account
 * page. Guessing the current password through this form is limited like signing in: per user,
 * counted in the database (limiters of one scope share counts across replicas and route sets).
 */
import type { Context } from "hono";
import type { AppDeps } from "../app-deps.js";
import { RequestError } from "../errors.js";
import { type AppEnv, auditOf } from "./actor.js";
import { createRateLimiter, type RateLimiter } from "./rate-limit.js";
import { changeOwnPassword } from "./users.js";

export function createPasswordChangeLimiter(deps: Pick<AppDeps, "db" | "clock">): RateLimiter {
  return createRateLimiter({
    db: deps.db,
    scope: "password-change-user",
    limit: 10,
    windowMs: 5 * 60_000,
    clock: deps.clock,
  });
}

export async function attemptPasswordChange(
  c: Context<AppEnv>,
  deps: AppDeps,
  limiter: RateLimiter,
  input: { currentPassword: string; newPassword: string },
): Promise<void> {
  const audit = auditOf(c);
  const result = await limiter.hit(audit.actor.userId);
  if (!result.allowed) {
    throw new RequestError("rate_limited", "Too many password change attempts; wait and try again.", {
      headers: { "Retry-After": String(result.retryAfterSeconds) },
    });
  }
  await changeOwnPassword(deps, audit, input);
  await limiter.reset(audit.actor.userId);
}
