/**
 * Every plain form answers at its field (issue 35): each `<form method="post">` in the views is
 * listed here, either with a value its route refuses for a named field, or with why it has no
 * field to refuse (a button). Posted as a browser without script posts it (from its page, Accept
 * text/html), the refusal must be the form's own page with the message at that input and the
 * typed value kept, never the bare error page. A new form without an entry fails the first test.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "@fleetback/db";
import { runDbSuite } from "@fleetback/db/testing";
import { viewsDir } from "@fleetback/web";
import { describe, expect, it } from "vitest";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { addReportMailChannel } from "../testing/report-mail-channel.js";
import { seedHost } from "../testing/seed.js";
import { startSignedInApp } from "../testing/signed-in-app.js";

interface Ids {
  host: string;
  group: string;
  schedule: string;
  channel: string;
  user: string;
  policy: string;
}

interface Refusal {
  page: (ids: Ids) => string;
  post?: (ids: Ids) => string;
  fields: Record<string, string>;
  /** The input the message must sit at. */
  at: string;
}

const BUTTON = "a button: nothing typed to refuse";
const LONG = "x".repeat(5000);

/** Keyed by the template's action with each `{{ expression }}` read as `:param`. */
const FORMS: Record<string, Refusal | string> = {
  "/logout": BUTTON,
  "/login": "the sign-in form refuses as a whole (which of name or password is wrong is not said)",
  "/bootstrap": "the first-admin form exists only before any user; its refusals are in form-errors.test",
  "/account/password": {
    page: () => "/account/password",
    fields: { current_password: "correct horse battery", new_password: "short", confirm_password: "short" },
    at: "new_password",
  },
  "/alerts/:id/resolve": BUTTON,
  "/enroll": {
    page: () => "/enroll",
    fields: { initial_paths: "etc", initial_cron: "1 2 * * *" },
    at: "initial_paths",
  },
  "/enroll/tokens/:id/revoke": BUTTON,
  "/enroll/pending/reject": "checked rows or one network from a hidden input: nothing typed",
  "/enroll/pending/:id/reject": BUTTON,
  "/enroll/pending/:id/approve": "walked in approve-step.test, which needs an announced host",
  "/agent-updates": { page: () => "/hosts", fields: { version: LONG, all: "on" }, at: "version" },
  "/agent-rollouts": {
    page: () => "/agent-rollouts",
    fields: { version: "1.0.0", rings_0_on: "1", rings_0_selector: "env in (prod", rings_0_max_failed: "0" },
    at: "rings_0_selector",
  },
  "/hosts/:id/maintenance": {
    page: (ids) => `/hosts/${ids.host}/maintenance`,
    fields: {
      forget_cron: "every night",
      forget_enabled: "on",
      prune_cron: "0 4 * * 0",
      check_cron: "0 5 * * 0",
      check_read_data_subset: "",
      drill_cron: "0 6 1 * *",
      drill_sample_files: "5",
    },
    at: "forget_cron",
  },
  "/hosts/:id/jobs": "a button per job kind: the kind is the button's own value",
  "/hosts/:id/diff": "two snapshots chosen from lists of the host's own snapshots",
  "/hosts/:id/source-groups/:id/run": "a button (its bandwidth boxes are numbers the browser bounds)",
  "/hosts/:id/source-groups/:id": {
    page: (ids) => `/hosts/${ids.host}/sources`,
    post: (ids) => `/hosts/${ids.host}/source-groups/${ids.group}`,
    fields: { name: "etc", includes: "etc" },
    at: "includes",
  },
  "/hosts/:id/source-groups/:id/delete": BUTTON,
  "/hosts/:id/source-groups": {
    page: (ids) => `/hosts/${ids.host}/sources`,
    fields: { name: "", includes: "/srv" },
    at: "name",
  },
  "/hosts/:id/schedules/:id": {
    page: (ids) => `/hosts/${ids.host}/sources`,
    post: (ids) => `/hosts/${ids.host}/schedules/${ids.schedule}`,
    fields: { cron: "99 * * * *" },
    at: "cron",
  },
  "/hosts/:id/schedules/:id/delete": BUTTON,
  "/hosts/:id/schedules": {
    page: (ids) => `/hosts/${ids.host}/sources`,
    fields: { cron: "every night" },
    at: "cron",
  },
  "/hosts/:id/hooks": {
    page: (ids) => `/hosts/${ids.host}/sources`,
    fields: { pre_hook_default: LONG.repeat(4) },
    at: "pre_hook_default",
  },
  "/hosts/:id/deletion-holds/:id/release": "exists only while a hold does; its reason is optional",
  "/hosts/:id/labels": {
    page: (ids) => `/hosts/${ids.host}`,
    fields: { labels: "env=pr od" },
    at: "labels",
  },
  "/hosts/:id/keeper": "a choice among the fleet's own hosts",
  "/hosts/:id/mirror/copy": BUTTON,
  "/hosts/:id/mirror": {
    page: (ids) => `/hosts/${ids.host}`,
    fields: { url: LONG, password: "secret-Mirror-1" },
    at: "url",
  },
  "/hosts/:id/mirror/remove": BUTTON,
  "/hosts/:id/credentials/:slot": {
    page: (ids) => `/hosts/${ids.host}`,
    post: (ids) => `/hosts/${ids.host}/credentials/repo`,
    fields: { url: LONG, password: "secret-Repo-1" },
    at: "url",
  },
  "/hosts/:id/bandwidth": {
    page: (ids) => `/hosts/${ids.host}`,
    fields: { up_kbps: "-5", down_kbps: "" },
    at: "up_kbps",
  },
  "/hosts/:id/rename": { page: (ids) => `/hosts/${ids.host}`, fields: { name: LONG }, at: "name" },
  "/hosts/:id/delete": BUTTON,
  "/hosts/:id/successor-token": BUTTON,
  "/hosts/:id/recover": {
    page: (ids) => `/hosts/${ids.host}`,
    fields: { where: "in_place", confirm_hostname: "not-the-name", target_dir: "" },
    at: "confirm_hostname",
  },
  "/jobs/:id/cancel": BUTTON,
  "/settings/notifications/:id/test": BUTTON,
  "/settings/notifications/:id/state": "a button: the state is its own value",
  "/settings/notifications/:id/delete": BUTTON,
  "/settings/notifications/:id": {
    page: () => "/settings/notifications",
    post: (ids) => `/settings/notifications/${ids.channel}`,
    fields: { name: LONG.slice(0, 101) },
    at: "name",
  },
  "/settings/notifications/reports/:id/delete": BUTTON,
  "/settings/notifications/reports": {
    page: () => "/settings/notifications",
    fields: {
      name: "weekly",
      channel_id: "none",
      recipients: "a@example.org",
      period: "weekly",
      time: "25:99",
    },
    at: "time",
  },
  "/settings/notifications": {
    page: () => "/settings/notifications",
    fields: {
      kind: "webhook",
      name: LONG.slice(0, 101),
      url: "https://hooks.example.org/x",
      secret: "0123456789abcdef",
    },
    at: "name",
  },
  ":action": "the recovery kit's password is checked by the kit's own test (recovery-kit.test)",
  "/hosts/:id/restore": "the restore wizard's steps, with their own refusals in restore-refused.test",
  "/hosts/:id/snapshots/:id/forget":
    "exists only for a snapshot; its confirmation is in snapshots-forget.test",
  "/settings/tokens/:id/revoke": BUTTON,
  "/policies/preview": {
    page: () => "/policies",
    fields: { name: "base", selector: "", priority: "100", spec: "{ not json" },
    at: "spec",
  },
  "/policies/:id/preview": {
    page: (ids) => `/policies/${ids.policy}`,
    post: (ids) => `/policies/${ids.policy}/preview`,
    fields: {
      name: "base",
      selector: "",
      priority: "100",
      spec: '{"groups":[{"name":"etc","includes":["etc"]}]}',
    },
    at: "spec",
  },
  "/policies": "applies exactly what its preview showed (hidden fields): the preview's refusals are above",
  "/policies/:id":
    "applies exactly what its preview showed (hidden fields): the preview's refusals are above",
  "/policies/:id/versions/:id/rollback": BUTTON,
  "/policies/:id/delete": BUTTON,
  "/hosts/actions": {
    page: () => `/hosts?selector=${encodeURIComponent("env=prod")}`,
    fields: { selector: "env in (prod", action: "pause" },
    at: "selector",
  },
  "/hosts/labels": {
    page: () => `/hosts?selector=${encodeURIComponent("env=prod")}`,
    fields: { selector: "env=prod", set: "tier=gold, bad key=1", remove: "" },
    at: "set",
  },
  "/settings/tokens": {
    page: () => "/settings/tokens",
    fields: { name: LONG.slice(0, 101), expires_at: "" },
    at: "name",
  },
  "/settings/users/:id": {
    page: () => "/settings/users",
    post: (ids) => `/settings/users/${ids.user}`,
    fields: { role: "emperor" },
    at: "role",
  },
  "/settings/users/:id/password": {
    page: () => "/settings/users",
    post: (ids) => `/settings/users/${ids.user}/password`,
    fields: { password: "short" },
    at: "password",
  },
  "/settings/users": {
    page: () => "/settings/users",
    fields: { username: "bob", role: "viewer", password: "short" },
    at: "password",
  },
};

/**
 * The forms that save something (issue 35.7), so say "Saved" after it (data-saves, app.js). The
 * others are actions with their own answer: run, delete, cancel, approve, mint (the page shows
 * the secret), sign in, restore, compare.
 */
const SAVES = [
  "/account/password",
  "/agent-updates",
  "/hosts/:id/maintenance",
  "/hosts/:id/source-groups/:id",
  "/hosts/:id/source-groups",
  "/hosts/:id/schedules/:id",
  "/hosts/:id/schedules",
  "/hosts/:id/hooks",
  "/hosts/:id/labels",
  "/hosts/:id/keeper",
  "/hosts/:id/mirror",
  "/hosts/:id/credentials/:slot",
  "/hosts/:id/bandwidth",
  "/hosts/:id/rename",
  "/policies",
  "/policies/:id",
  "/settings/notifications/:id",
  "/settings/notifications",
  "/settings/notifications/reports",
  "/settings/users/:id",
  "/settings/users/:id/password",
  "/settings/users",
];

function templateActions(marked?: "data-saves"): string[] {
  const actions = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else if (entry.name.endsWith(".njk")) {
        for (const form of readFileSync(path, "utf8").matchAll(/<form\b[^>]*\bmethod="post"[^>]*>/g)) {
          const action = /\baction="([^"]*)"/.exec(form[0])?.[1] ?? "";
          if (marked !== undefined && !new RegExp(`\\s${marked}[\\s>]`).test(form[0])) {
            continue;
          }
          actions.add(action.replace(/\{\{\s*(slot|action)\s*\}\}/g, ":$1").replace(/\{\{[^}]*\}\}/g, ":id"));
        }
      }
    }
  };
  walk(viewsDir);
  return [...actions].sort();
}

describe("the list of forms", () => {
  it("names every post form in the views", () => {
    expect(templateActions()).toEqual(Object.keys(FORMS).sort());
  });

  it("marks every form that saves, and only those, to say Saved after its save", () => {
    expect(templateActions("data-saves")).toEqual([...SAVES].sort());
    expect(SAVES.filter((action) => !(action in FORMS))).toEqual([]);
  });
});

async function fixtures(admin: TestClient, db: Database): Promise<Ids> {
  const { host } = await seedHost({ db }, { name: "web-01" });
  const group = (await (
    await admin.json("POST", `/api/hosts/${host.id}/source-groups`, { name: "etc", includes: ["/etc"] })
  ).json()) as { source_group: { id: string } };
  const schedule = (await (
    await admin.json("POST", `/api/hosts/${host.id}/schedules`, {
      cron: "0 3 * * *",
      source_group_ids: [group.source_group.id],
    })
  ).json()) as { schedule: { id: string } };
  const channel = (await (
    await admin.json("POST", "/api/notification-channels", {
      kind: "webhook",
      name: "ops",
      config: { url: "https://hooks.example.org/ops", secret: "0123456789abcdef" },
    })
  ).json()) as { channel?: { id: string }; notification_channel?: { id: string } };
  // The scheduled report's form is shown once an email channel exists to send it.
  await addReportMailChannel(admin);
  const created = await admin.json("POST", "/api/users", {
    username: "carol",
    password: "a long pass phrase 42",
    role: "viewer",
  });
  expect(created.status).toBe(201);
  const user = (await created.json()) as { user: { id: string } };
  const policy = (await (
    await admin.json("POST", "/api/policies", { name: "base", selector: "env=none", spec: { groups: [] } })
  ).json()) as { policy: { id: string } };
  return {
    host: host.id,
    group: group.source_group.id,
    schedule: schedule.schedule.id,
    channel: (channel.channel ?? channel.notification_channel)?.id ?? "",
    user: user.user.id,
    policy: policy.policy.id,
  };
}

runDbSuite("every plain form refused at its field", (getDb) => {
  it("answers each with its own page, the message at the input and the typed value kept", async () => {
    const { deps, admin } = await startSignedInApp({ deps: { db: getDb() }, adminName: "root" });
    try {
      const ids = await fixtures(admin, getDb());
      const failures: string[] = [];
      for (const [action, refusal] of Object.entries(FORMS)) {
        if (typeof refusal === "string") {
          continue;
        }
        const page = refusal.page(ids);
        const csrf = csrfFrom(await (await admin.request(page)).text());
        const post = refusal.post?.(ids) ?? action.replace(":id", ids.host);
        const res = await admin.form(
          post,
          { _csrf: csrf, ...refusal.fields },
          {
            Accept: "text/html",
            Referer: `${deps.config.baseUrl}${page}`,
          },
        );
        const html = await res.text();
        // A select cannot show a value it does not offer; the message at it is what counts there.
        const typed = html.includes(`<select name="${refusal.at}"`) ? "" : (refusal.fields[refusal.at] ?? "");
        const problems = [
          res.status >= 400 && res.status < 500 ? "" : `status ${res.status}`,
          html.includes('data-testid="error-page"')
            ? `the error page (${/data-testid="error-message">([^<]*)/.exec(html)?.[1]})`
            : "",
          html.includes(`data-testid="field-error-${refusal.at}"`) ? "" : `no error at ${refusal.at}`,
          new RegExp(`name="${refusal.at}"[^>]*aria-invalid="true"`).test(html)
            ? ""
            : `${refusal.at} not marked invalid`,
          refusal.at.includes("password") ||
          html.includes(typed.replaceAll("&", "&amp;").replaceAll('"', "&quot;"))
            ? ""
            : "typed value lost",
        ].filter(Boolean);
        if (problems.length > 0) {
          failures.push(`${action} (${post}): ${problems.join(", ")}`);
        }
      }
      expect(failures).toEqual([]);
    } finally {
      await deps.close();
    }
  }, 240_000);
});
