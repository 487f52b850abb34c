/**
 * @module routes/agent-rollouts-pages
 * Agent rollouts in rings in the browser (issue 37.5): every rollout with each ring's state and
 * counts, one rollout's page, and the form that starts one (admins: an update ships code that runs
 * as root on every host it reaches). The form is read as the API's body and started by the same
 * function; its JSON twins are in routes/fleet-actions-api.ts.
 */
import { Hono } from "hono";
import { type TSchema, Type } from "typebox";
import type { AppDeps } from "../app-deps.js";
import { type AppEnv, auditOf, hasRole, requireRole } from "../auth/actor.js";
import { invalid, isRequestError } from "../errors.js";
import { redirectAfterPost, renderPage } from "../http/render.js";
import { readForm, validate } from "../http/validate.js";
import { SELECTOR_MAX_LENGTH } from "../labels/selector.js";
import {
  getRollout,
  listRollouts,
  RingRolloutBody,
  ringViews,
  rolloutView,
  startRingRollout,
} from "../updates/ring-rollout.js";
import { RolloutVersion } from "../updates/rollout.js";

/** As many rows as the API takes rings. */
const RING_ROWS = 10;
const RING_FIELDS = ["on", "selector", "percent", "max_failed"] as const;
type RingField = (typeof RING_FIELDS)[number];

/**
 * One row of inputs per ring, named `rings_<row>_<field>` so that a refusal of `rings.<i>.<field>`
 * lands at its input; a row counts only when its box is ticked, since an empty selector is itself
 * a ring ("every host left").
 */
const ringInputs: Record<string, TSchema> = {};
for (let row = 0; row < RING_ROWS; row += 1) {
  for (const field of RING_FIELDS) {
    const input =
      field === "on"
        ? Type.Literal("1")
        : Type.String({ maxLength: field === "selector" ? SELECTOR_MAX_LENGTH : 12 });
    ringInputs[`rings_${row}_${field}`] = Type.Optional(input);
  }
}
const RolloutForm = Type.Object({ version: RolloutVersion, ...ringInputs }, { additionalProperties: false });

type FormValues = Record<string, string | undefined>;
type RingRow = { row: number; on: boolean; selector: string; percent: string; max_failed: string };

/** The form as first shown: a canary ring, then 10 % of the rest, then every host left. */
function defaultRows(): RingRow[] {
  const preset: Array<Partial<RingRow>> = [{ selector: "ring=canary" }, { percent: "10" }, {}];
  return Array.from({ length: RING_ROWS }, (_, row) => ({
    row,
    on: row < preset.length,
    selector: preset[row]?.selector ?? "",
    percent: preset[row]?.percent ?? "",
    max_failed: row < preset.length ? "0" : "",
  }));
}

function fieldOf(row: number, field: RingField): string {
  return `rings_${row}_${field}`;
}

function wholeNumber(form: FormValues, row: number, field: RingField): number | undefined {
  const name = fieldOf(row, field);
  const text = (form[name] ?? "").trim();
  if (text === "") {
    return undefined;
  }
  if (!/^[0-9]{1,9}$/.test(text)) {
    throw invalid(`${name}: is not a whole number`, [{ field: name, message: "is not a whole number" }]);
  }
  return Number(text);
}

/** Runs `start`; a refusal of the body's ring `i` is said at the inputs of the row it came from. */
async function atRows<T>(rows: number[], start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (!isRequestError(err) || err.code !== "invalid") {
      throw err;
    }
    const toRow = (field: string) =>
      field.replace(/^rings\.(\d+)\.(\w+)/, (whole, index: string, name: string) => {
        const row = rows[Number(index)];
        return row === undefined ? whole : fieldOf(row, name as RingField);
      });
    const details = Array.isArray(err.details)
      ? (err.details as Array<{ field: string; message: string }>).map((problem) => ({
          ...problem,
          field: toRow(problem.field),
        }))
      : err.details;
    throw invalid(toRow(err.message), details);
  }
}

export function agentRolloutPageRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const viewer = requireRole("viewer");

  routes.get("/agent-rollouts", viewer, async (c) => {
    const listed = await listRollouts(deps.db);
    const isAdmin = hasRole(c.get("actor"), "admin");
    return renderPage(c, deps.views, "pages/agent-rollouts.njk", {
      title: "Agent rollouts",
      rollouts: listed.map(({ rollout, rings }) => ({
        ...rolloutView(rollout, rings),
        createdAt: rollout.createdAt,
      })),
      versions: isAdmin ? (await deps.agentBundles.list()).map((bundle) => bundle.version) : [],
      rows: defaultRows(),
    });
  });

  routes.get("/agent-rollouts/:id", viewer, async (c) => {
    const rollout = await getRollout(deps.db, c.req.param("id"));
    return renderPage(c, deps.views, "pages/agent-rollout.njk", {
      title: `Agent rollout ${rollout.version}`,
      rollout: {
        ...rolloutView(rollout, await ringViews(deps.db, rollout)),
        createdAt: rollout.createdAt,
        updatedAt: rollout.updatedAt,
      },
    });
  });

  routes.post("/agent-rollouts", requireRole("admin"), async (c) => {
    const form = (await readForm(c, RolloutForm)) as FormValues;
    const rows = Array.from({ length: RING_ROWS }, (_, row) => row).filter(
      (row) => form[fieldOf(row, "on")] === "1",
    );
    if (rows.length === 0) {
      const field = fieldOf(0, "on");
      throw invalid(`${field}: tick at least one ring`, [{ field, message: "tick at least one ring" }]);
    }
    const rings = rows.map((row) => {
      const percent = wholeNumber(form, row, "percent");
      const maxFailed = wholeNumber(form, row, "max_failed");
      return {
        selector: form[fieldOf(row, "selector")] ?? "",
        ...(percent === undefined ? {} : { percent }),
        ...(maxFailed === undefined ? {} : { max_failed: maxFailed }),
      };
    });
    const started = await atRows(rows, () =>
      startRingRollout(deps, auditOf(c), validate(RingRolloutBody, { version: form.version, rings })),
    );
    return redirectAfterPost(c, `/agent-rollouts/${encodeURIComponent(started.id)}`);
  });
  return routes;
}
