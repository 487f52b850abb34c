/**
 * The audit page reads as words: the actor's kind and name apart ("user admin", not "useradmin"),
 * the target's kind and name apart, and each entry's details (the policy a change set, a failed
 * sign-in's user) shown escaped and cut to a bound, as the API gives them whole.
 */
import { afterEach, describe, expect, it } from "vitest";
import { writeAudit } from "../audit/audit.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";
import { AUDIT_DETAIL_MAX } from "./audit-pages.js";

let deps: TestDeps | undefined;
afterEach(async () => {
  await deps?.close();
  deps = undefined;
});

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, "")
    .replace(/\s+/g, " ")
    .trim();

function row(page: string, action: string): string {
  return page.split("<tr>").find((tr) => tr.includes(`<code>${action}</code>`)) ?? "";
}

function cell(tr: string, testid: string): string {
  const match = new RegExp(`<td[^>]* data-testid="${testid}"[^>]*>([\\s\\S]*?)</td>`).exec(tr);
  return text(match?.[1] ?? "");
}

describe("audit page", () => {
  it("separates kinds from names and shows the details, escaped and bounded", async () => {
    const started = await startSignedInApp({ adminName: "alice" });
    deps = started.deps;
    const { admin, adminId: aliceId } = started;
    await writeAudit(deps.db, deps, {
      actor: "system",
      action: "policy.changed",
      targetKind: "user",
      targetId: aliceId,
      details: { keep_daily: 7, note: `<script>x</script>${"y".repeat(600)}`, zone: "z" },
    });
    const page = await (await admin.request("/audit", { headers: { Accept: "text/html" } })).text();

    const bootstrap = row(page, "auth.bootstrap");
    expect(cell(bootstrap, "audit-actor")).toBe("user alice");
    expect(cell(bootstrap, "audit-target")).toMatch(/^user alice \S+$/);

    const policy = row(page, "policy.changed");
    expect(cell(policy, "audit-actor")).toBe("system");
    const details = cell(policy, "audit-details");
    // The key order is the database's (jsonb reorders); a long value is cut, the others stay.
    expect(details).toContain("keep daily: 7");
    expect(details).toContain("zone: z");
    expect(details).toMatch(/note: &lt;script&gt;x&lt;\/script&gt;y+…/);
    expect(policy).not.toContain("<script>");
    const note = /note: ([^;]*)/.exec(details.replaceAll("&lt;", "<").replaceAll("&gt;", ">"))?.[1] ?? "";
    expect(note.length).toBe(AUDIT_DETAIL_MAX);
  });

  it("prints each entry's moment in FLEETBACK_TZ with the zone's name, ISO on hover", async () => {
    const started = await startSignedInApp({
      adminName: "alice",
      deps: { config: { timeZone: "Europe/Berlin" } },
    });
    deps = started.deps;
    const { admin } = started;
    const page = await (await admin.request("/audit", { headers: { Accept: "text/html" } })).text();
    const iso = deps.clock
      .now()
      .toISOString()
      .replace(/\.\d{3}Z$/, "Z");
    const time = new RegExp(`<time datetime="${iso}" title="${iso}">([^<]+)</time>`).exec(
      row(page, "auth.bootstrap"),
    );
    // The test clock stands at 12:00 UTC, 13:00 in Berlin.
    expect(time?.[1]).toBe("21 Nov, 13:00 CET");
  });
});
