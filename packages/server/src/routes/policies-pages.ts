/**
 * @module routes/policies-pages
 * Fleet policies in the browser (issue 37.3): the list, a policy with its versions and what each
 * changed, and an edit that shows what it does to the fleet before it applies (how many hosts,
 * which groups and schedules change, what hosts keep apart or in conflict). The document is
 * edited as YAML (JSON is accepted too): the policy's `spec` as the API and a fleet file hold it. The JSON twins are in routes/policies-api.ts.
 */
import { hosts } from "@fleetback/db";
import { count } from "drizzle-orm";
import { type Context, Hono } from "hono";
import { type Static, Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, requireRole } from "../auth/actor.js";
import { idButton } from "../auth/id-button.js";
import { invalid, isRequestError } from "../errors.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { EmptyForm, readForm, validate } from "../http/validate.js";
import { parseSelector } from "../labels/selector.js";
import { selectorSql } from "../labels/selector-sql.js";
import { documentText, parseDocumentText } from "../policies/document-text.js";
import { exportedContent } from "../policies/policy-hooks.js";
import { policyJson, versionJson } from "../policies/policy-json.js";
import { PolicyBody } from "../policies/policy-spec.js";
import {
  createPolicy,
  deletePolicy,
  getPolicy,
  listPolicies,
  listVersions,
  type PlanSummary,
  previewPolicy,
  rollbackPolicy,
  updatePolicy,
} from "../policies/policy-store.js";
import { versionChanges } from "../policies/spec-diff.js";

const PolicyForm = Type.Object(
  {
    name: Type.String({ maxLength: 64 }),
    selector: Type.Optional(Type.String({ maxLength: 4096 })),
    priority: Type.Optional(Type.String({ maxLength: 5 })),
    spec: Type.String({ maxLength: 200_000 }),
    note: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
type PolicyForm = Static<typeof PolicyForm>;

const EXAMPLE_SPEC = {
  groups: [{ name: "etc", includes: ["/etc"], retention_policy: { daily: 7, weekly: 4 } }],
  schedules: [{ name: "nightly", cron: "0 2 * * *", groups: ["etc"] }],
};

/** The form as the API's body; a problem anywhere in the document is said at the spec input. */
function bodyOf(form: PolicyForm): PolicyBody {
  let spec: unknown;
  try {
    spec = parseDocumentText(form.spec);
  } catch (err) {
    const message = err instanceof Error ? err.message : "unreadable";
    throw invalid(`spec: ${message}`, [{ field: "spec", message }]);
  }
  const priority = form.priority?.trim() ? Number(form.priority) : undefined;
  const raw = {
    name: form.name.trim(),
    selector: form.selector?.trim() ?? "",
    ...(priority === undefined ? {} : { priority }),
    spec,
    ...(form.note?.trim() ? { note: form.note.trim() } : {}),
  };
  return validate(PolicyBody, raw);
}

/** Runs `run`; a refusal about a path inside the document is said at the spec input with its path. */
async function atSpec<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isRequestError(err) && err.code === "invalid") {
      const field = /^([a-z_]+(?:\.[\w-]+)*): /.exec(err.message)?.[1];
      if (field?.startsWith("spec.")) {
        const message = err.message;
        throw invalid(message, [{ field: "spec", message }]);
      }
    }
    throw err;
  }
}

function formOf(policy?: { name: string; selector: string; priority: number; spec: unknown }) {
  return {
    name: policy?.name ?? "",
    selector: policy?.selector ?? "",
    priority: String(policy?.priority ?? 100),
    // Hooks left out: the form is posted back, and a left-out hook is kept.
    spec: documentText(policy ? exportedContent(policy.spec as Record<string, unknown>) : EXAMPLE_SPEC),
    note: "",
  };
}

export function policyPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");
  const admin = requireRole("admin");

  /** Each policy with how many hosts its selector matches now (one indexed count each). */
  const listed = async () =>
    Promise.all(
      (await listPolicies(deps.db)).map(async (row) => {
        const [counted] = await deps.db
          .select({ n: count() })
          .from(hosts)
          .where(selectorSql(hosts.labels, parseSelector(row.selector)));
        return { ...policyJson(row), hosts: counted?.n ?? 0 };
      }),
    );

  routes.get("/policies", viewer, async (c) => {
    return renderPage(c, deps.views, "pages/policies.njk", {
      title: "Policies",
      policies: await listed(),
      form: formOf(),
    });
  });

  async function renderPolicy(
    c: Context<AppEnv>,
    id: string,
    extra: Record<string, unknown> = {},
    status: 200 | 400 = 200,
  ) {
    const policy = await getPolicy(deps.db, id);
    const rows = await listVersions(deps.db, id);
    const withChanges = rows.map((row, i) => {
      const before = rows[i + 1];
      return {
        ...versionJson(row),
        changes: before ? versionChanges(deps.keys.secret, id, before, row) : [],
      };
    });
    const current = await previewPolicy(
      deps,
      {
        name: policy.name,
        selector: policy.selector,
        priority: policy.priority,
        spec: exportedContent(policy.spec as Record<string, unknown>) as PolicyBody["spec"],
      },
      id,
    );
    return renderPage(
      c,
      deps.views,
      "pages/policy.njk",
      {
        title: `Policy ${policy.name}`,
        policy: policyJson(policy),
        versions: withChanges,
        covered: current.hosts_covered,
        current,
        form: formOf(policy),
        ...extra,
      },
      status,
    );
  }

  routes.get("/policies/:id", viewer, (c) => renderPolicy(c, c.req.param("id")));

  // A new policy: preview first (nothing written), then apply what was previewed.
  routes.post("/policies/preview", admin, async (c) => {
    const form = await readForm(c, PolicyForm);
    const plan: PlanSummary = await atSpec(() => previewPolicy(deps, bodyOf(form)));
    return renderPage(c, deps.views, "pages/policies.njk", {
      title: "Policies",
      policies: await listed(),
      form,
      preview: plan,
    });
  });
  routes.post("/policies", admin, async (c) => {
    const form = await readForm(c, PolicyForm);
    const created = await atSpec(() => createPolicy(deps, auditOf(c), bodyOf(form)));
    return redirectAfterPost(c, `/policies/${created.id}`);
  });
  routes.post("/policies/:id/preview", admin, async (c) => {
    const form = await readForm(c, PolicyForm);
    const id = c.req.param("id");
    const plan = await atSpec(() => previewPolicy(deps, bodyOf(form), id));
    return renderPolicy(c, id, { form, preview: plan });
  });
  routes.post("/policies/:id", admin, async (c) => {
    const form = await readForm(c, PolicyForm);
    const id = c.req.param("id");
    await atSpec(() => updatePolicy(deps, auditOf(c), id, bodyOf(form)));
    return redirectAfterPost(c, `/policies/${id}`);
  });
  routes.post("/policies/:id/versions/:version/rollback", admin, async (c) => {
    await readForm(c, EmptyForm);
    const id = c.req.param("id");
    const version = Number(c.req.param("version"));
    if (!Number.isInteger(version) || version < 1) {
      throw invalid("version: a version number, from 1", [
        { field: "version", message: "a version number, from 1" },
      ]);
    }
    await rollbackPolicy(deps, auditOf(c), id, version);
    return redirectAfterPost(c, `/policies/${id}`);
  });
  routes.post("/policies/:id/delete", admin, idButton(deps, deletePolicy, "/policies"));
  return routes;
}
