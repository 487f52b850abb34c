/**
 * @module auth/step-up
 * Proving it is still the person before an action that hands out secrets (the recovery kit): a
 * borrowed, unlocked browser or a stolen session cookie alone must not be enough. A password user
 * types their password again; a single sign-on user has no password here, so their session must
 * come from a sign-in at the provider within STEP_UP_SSO_MAX_AGE_MS. API tokens never step up:
 * a token is a long-lived bearer secret with no person behind the request to ask.
 * Guesses are limited per user like a password change; the caller audits a refusal.
 */
import { verifyPassword } from "@fleetback/crypto";
import { sessions, users } from "@fleetback/db";
import { eq } from "drizzle-orm";
import type { AppDeps } from "../app-deps.js";
import { RequestError } from "../errors.js";
import type { Actor } from "../http/app-env.js";
import { createRateLimiter, type RateLimiter } from "./rate-limit.js";
import { DUMMY_PASSWORD_HASH } from "./users.js";

/**
 * Where a single sign-on user signs in again (routes/sso-pages.ts SSO_START_PATH; a route may not
 * import another route module, and recovery-kit.test.ts holds the two equal).
 */
export const SSO_SIGN_IN_PATH = "/auth/sso";

/** How recent a single sign-on must be to count as having just proved who one is. */
export const STEP_UP_SSO_MAX_AGE_MS = 10 * 60_000;

export type StepUpRefusal = "api_token" | "wrong_password" | "password_missing" | "sso_sign_in_too_old";

export type StepUpResult = { ok: true } | { ok: false; reason: StepUpRefusal; error: RequestError };

export function createStepUpLimiter(deps: Pick<AppDeps, "db" | "clock">): RateLimiter {
  return createRateLimiter({
    db: deps.db,
    scope: "step-up-user",
    limit: 10,
    windowMs: 5 * 60_000,
    clock: deps.clock,
  });
}

function refused(reason: StepUpRefusal, message: string): StepUpResult {
  return { ok: false, reason, error: new RequestError("forbidden", message) };
}

/** Whether the person just proved who they are; a limited caller throws rate_limited. */
export async function checkStepUp(
  deps: Pick<AppDeps, "db" | "clock">,
  limiter: RateLimiter,
  actor: Actor,
  password: string | undefined,
): Promise<StepUpResult> {
  if (actor.via !== "session" || actor.sessionId === undefined) {
    return refused("api_token", "This needs a person signed in to the web interface; API tokens may not.");
  }
  const [row] = await deps.db
    .select({
      passwordHash: users.passwordHash,
      ssoSubject: users.ssoSubject,
      signedInAt: sessions.createdAt,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(eq(sessions.id, actor.sessionId));
  if (!row) {
    throw new RequestError("unauthorised", "Sign in first.");
  }
  if (row.ssoSubject !== null) {
    const age = deps.clock.now().getTime() - row.signedInAt.getTime();
    return age <= STEP_UP_SSO_MAX_AGE_MS
      ? { ok: true }
      : refused(
          "sso_sign_in_too_old",
          `password: you sign in through single sign-on; sign in again (within ${STEP_UP_SSO_MAX_AGE_MS / 60_000} minutes before this) to confirm it is you`,
        );
  }
  if (password === undefined || password === "") {
    return refused("password_missing", "password: type your password again to confirm it is you");
  }
  const limited = await limiter.hit(actor.userId);
  if (!limited.allowed) {
    throw new RequestError("rate_limited", "Too many password attempts; wait and try again.", {
      headers: { "Retry-After": String(limited.retryAfterSeconds) },
    });
  }
  if (!(await verifyPassword(password, row.passwordHash ?? DUMMY_PASSWORD_HASH))) {
    return refused("wrong_password", "password: is wrong");
  }
  await limiter.reset(actor.userId);
  return { ok: true };
}
