/**
 * @module recovery/kit-request
 * One export of the recovery kit over HTTP, shared by the JSON API and the pages: the caller steps
 * up (auth/step-up.ts) or is refused and audited, and the answer is never cached anywhere on the
 * way. The body schema is here so both routes and the OpenAPI document validate the same thing.
 */
import type { Context } from "hono";
import { Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf } from "../auth/actor.js";
import type { RateLimiter } from "../auth/rate-limit.js";
import { checkStepUp } from "../auth/step-up.js";
import { auditRefusedExport, exportRecoveryKit, type KitScope, type RecoveryKit } from "./recovery-kit.js";

export const RecoveryKitBody = Type.Object(
  {
    password: Type.Optional(
      Type.String({
        maxLength: 1024,
        writeOnly: true,
        description:
          "your own password, typed again; not needed by a single sign-on user who signed in within 10 minutes",
      }),
    ),
  },
  { additionalProperties: false },
);

/** Secrets in the answer: no browser, proxy or history may keep a copy. */
export function noStore(c: Context<AppEnv>): void {
  c.header("Cache-Control", "no-store");
  c.header("Pragma", "no-cache");
}

export async function stepUpAndExport(
  c: Context<AppEnv>,
  deps: AppDeps,
  limiter: RateLimiter,
  scope: KitScope,
  password: string | undefined,
): Promise<RecoveryKit> {
  noStore(c);
  const audit = auditOf(c);
  const stepUp = await checkStepUp(deps, limiter, audit.actor, password);
  if (!stepUp.ok) {
    await auditRefusedExport(deps, audit, scope, stepUp.reason);
    throw stepUp.error;
  }
  return exportRecoveryKit(deps, audit, scope);
}
