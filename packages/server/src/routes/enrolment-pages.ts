/**
 * @module routes/enrolment-pages
 * The enrol page: mint a token (its secrets rendered once in the response, never redirected to),
 * list and revoke unused tokens, and approve or reject announced hosts one at a time or all from one source network. The JSON
 * twins are in routes/enrolment-api.ts.
 */

import { type Context, Hono } from "hono";
import { type Static, Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { idButton } from "../auth/id-button.js";
import {
  approvePendingHost,
  findPendingHost,
  listPendingHosts,
  rejectPendingHost,
  rejectPendingHosts,
} from "../enrolment/announce.js";
import {
  checkInitialSchedule,
  defaultInitialSchedule,
  InitialScheduleFormFields,
  initialPathsOfForm,
  initialScheduleOfForm,
} from "../enrolment/initial-schedule.js";
import { checkMintInput, mintJson } from "../enrolment/mint-request.js";
import { NetworkText, PendingId, pendingSelection } from "../enrolment/pending-selection.js";
import { listUsableTokens, mintEnrolmentToken, revokeEnrolmentToken } from "../enrolment/tokens.js";
import { RequestError } from "../errors.js";
import { PACKAGED_AGENT_DIRS, refuseAgentDirPaths } from "../hosts/agent-dirs.js";
import { sourceNetwork } from "../http/client-address.js";
import { fieldProblemsOf, formFieldErrors } from "../http/form-errors.js";
import { plainHttpWarning } from "../http/plain-http.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { type FieldProblem, readForm } from "../http/validate.js";
import { parseLabelText } from "../labels/label-rules.js";

const MintForm = Type.Object(
  {
    repository_url: Type.Optional(Type.String({ maxLength: 2048 })),
    repository_username: Type.Optional(Type.String({ maxLength: 256 })),
    repository_password: Type.Optional(Type.String({ maxLength: 1024 })),
    initial_paths: Type.Optional(Type.String({ maxLength: 100_000 })),
    labels: Type.Optional(Type.String({ maxLength: 20_000 })),
    ...InitialScheduleFormFields,
  },
  { additionalProperties: false },
);
// A form sends one checked box as a string and several as an array.
const BulkRejectForm = Type.Object(
  {
    ids: Type.Optional(Type.Union([PendingId, Type.Array(PendingId, { maxItems: 1000 })])),
    source_network: Type.Optional(NetworkText),
  },
  { additionalProperties: false },
);
const ApproveForm = Type.Object(
  { initial_paths: Type.Optional(Type.String({ maxLength: 100_000 })), ...InitialScheduleFormFields },
  { additionalProperties: false },
);
type MintFormValues = Static<typeof MintForm>;
type ApproveFormValues = Static<typeof ApproveForm>;

const MINT_LABELS: Record<string, string> = {
  repository_url: "Repository URL",
  repository_username: "Repository username",
  repository_password: "Repository password",
  initial_paths: "Initial paths",
  initial_cron: "When (cron)",
  labels: "Labels",
};

/** What a refused form renders: the typed values, and each problem at its input. */
function refusedMintForm(form: MintFormValues | ApproveFormValues, problems: FieldProblem[]) {
  const mintErrors = formFieldErrors(problems);
  return {
    mintForm: form,
    mintErrors,
    mintProblems: Object.entries(mintErrors).map(([name, message]) => ({
      name,
      label: MINT_LABELS[name],
      message,
    })),
  };
}

/** The problems of a refusal that the token and approve forms show at one of their inputs. */
function formProblemsOf(err: unknown): FieldProblem[] {
  return fieldProblemsOf(err).filter(
    (problem) => MINT_LABELS[problem.field.replaceAll(".", "_")] !== undefined,
  );
}

/**
 * The approve step's choice: paths checked absolute and outside the agent's own directories (as
 * the API's approve and a token's paths are), the cron checked at its own input.
 */
function approvedStartOf(form: ApproveFormValues) {
  const paths = initialPathsOfForm(form.initial_paths);
  refuseAgentDirPaths("initial_paths", paths, PACKAGED_AGENT_DIRS);
  return {
    paths,
    schedule: checkInitialSchedule(initialScheduleOfForm(form), "initial_cron"),
  };
}

/** Waiting hosts per source network, largest first, for the page's "reject all from" buttons. */
function networksOf(pending: { sourceIp: string | null }[]): { network: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const host of pending) {
    const network = sourceNetwork(host.sourceIp ?? undefined);
    counts.set(network, (counts.get(network) ?? 0) + 1);
  }
  return [...counts].map(([network, count]) => ({ network, count })).sort((a, b) => b.count - a.count);
}

export function enrolmentPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const operator = requireRole("operator");

  async function renderEnrolPage(
    c: Context<AppEnv>,
    minted?: ReturnType<typeof mintJson>,
    refused?: { form: MintFormValues; problems: FieldProblem[] },
  ) {
    const [tokens, pending] = await Promise.all([
      listUsableTokens(deps.db, deps.clock),
      listPendingHosts(deps.db, deps.clock),
    ]);
    return renderPage(
      c,
      deps.views,
      "pages/enroll.njk",
      {
        title: "Enrol a host",
        tokens,
        pending,
        pendingNetworks: networksOf(pending),
        minted,
        baseUrl: deps.config.baseUrl,
        htpasswdPath: deps.config.htpasswdPath,
        plainHttpWarning: plainHttpWarning(deps.config.baseUrl),
        // A fresh draw per page view: each token minted from it spreads the fleet's start times.
        initialSchedule: defaultInitialSchedule(),
        ...(refused ? refusedMintForm(refused.form, refused.problems) : {}),
      },
      refused ? 400 : 200,
    );
  }

  routes.get("/enroll", operator, (c) => renderEnrolPage(c));
  routes.post("/enroll", operator, async (c) => {
    const form: MintFormValues = await readForm(c, MintForm);
    try {
      return await mintFromForm(c, form);
    } catch (err) {
      const problems = formProblemsOf(err);
      if (problems.length === 0 || c.req.header("HX-Request") === "true") {
        throw err;
      }
      // The form again with what was typed, the password too: it is the operator's own input in
      // this very response, which no cache may keep.
      c.header("Cache-Control", "no-store");
      return renderEnrolPage(c, undefined, { form, problems });
    }
  });
  async function mintFromForm(c: Context<AppEnv>, form: MintFormValues) {
    const url = form.repository_url?.trim();
    const paths = initialPathsOfForm(form.initial_paths);
    // Checked here too so a bad cron is refused at the form's own input.
    checkInitialSchedule(initialScheduleOfForm(form), "initial_cron");
    const minted = await mintEnrolmentToken(
      deps,
      auditOf(c),
      checkMintInput({
        repository: url
          ? {
              url,
              username: form.repository_username?.trim() || undefined,
              password: form.repository_password || undefined,
            }
          : undefined,
        initialPaths: paths,
        initialSchedule: initialScheduleOfForm(form),
        labels: parseLabelText(form.labels ?? "", "labels"),
      }),
    );
    // Rendered in the response, never redirected: the secrets are shown once and never in a URL.
    return renderEnrolPage(c, mintJson(minted));
  }
  routes.post("/enroll/tokens/:id/revoke", operator, idButton(deps, revokeEnrolmentToken, "/enroll"));
  routes.post("/enroll/pending/reject", operator, async (c) => {
    const form = await readForm(c, BulkRejectForm);
    const selection = pendingSelection(form.ids, form.source_network);
    await rejectPendingHosts(deps, auditOf(c), selection);
    return redirectAfterPost(c, "/enroll");
  });
  // The approve step: what the host is, and its first group's paths, schedule and retention,
  // prefilled with the default a token gets (issue 35.2).
  async function renderApprovePage(
    c: Context<AppEnv>,
    refused?: { form: ApproveFormValues; problems: FieldProblem[] },
  ) {
    const host = await findPendingHost(deps.db, deps.clock, c.req.param("id") ?? "");
    if (!host) {
      throw new RequestError(
        "not_found",
        "No such host is waiting for approval (expired, approved or rejected).",
      );
    }
    return renderPage(
      c,
      deps.views,
      "pages/approve-host.njk",
      {
        title: `Approve ${host.hostname}`,
        host,
        initialSchedule: defaultInitialSchedule(),
        ...(refused ? refusedMintForm(refused.form, refused.problems) : {}),
      },
      refused ? 400 : 200,
    );
  }
  routes.get("/enroll/pending/:id/approve", operator, (c) => renderApprovePage(c));
  routes.post("/enroll/pending/:id/approve", operator, async (c) => {
    const form = await readForm(c, ApproveForm);
    try {
      await approvePendingHost(deps, auditOf(c), c.req.param("id"), approvedStartOf(form));
    } catch (err) {
      const problems = formProblemsOf(err);
      if (problems.length === 0 || c.req.header("HX-Request") === "true") {
        throw err;
      }
      return renderApprovePage(c, { form, problems });
    }
    return redirectAfterPost(c, "/enroll");
  });
  routes.post("/enroll/pending/:id/reject", operator, idButton(deps, rejectPendingHost, "/enroll"));
  return routes;
}
