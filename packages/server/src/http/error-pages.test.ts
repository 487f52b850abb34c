import { Hono } from "hono";
import { requestId } from "hono/request-id";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RequestError } from "../errors.js";
import { createLogger } from "../log.js";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { startSignedInApp } from "../testing/signed-in-app.js";
import type { TestDeps } from "../testing/test-deps.js";
import type { AppEnv } from "./app-env.js";
import { handleError, notFoundHandler } from "./error-handler.js";

/** What Chromium sends when a person follows a link or types an address. */
const BROWSER = { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };
const MISSING = "01JD0000000000000000000000";

let deps: TestDeps;
let admin: TestClient;
let viewer: TestClient;

beforeAll(async () => {
  const started = await startSignedInApp({ users: [{ username: "watcher", role: "viewer" }] });
  ({ deps, admin } = started);
  viewer = started.users.watcher;
});
afterAll(async () => {
  await deps.close();
});

function titleOf(html: string): string {
  return /<title>([\s\S]*?)<\/title>/.exec(html)?.[1] ?? "";
}

describe("error pages for a browser", () => {
  it("answers a viewer opening an admin page with a 403 page in the layout, and a script with JSON", async () => {
    const page = await viewer.request("/settings/users", { headers: BROWSER });
    expect(page.status).toBe(403);
    expect(page.headers.get("Content-Type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('data-testid="error-page" data-status="403"');
    expect(html).toContain("This needs the admin role; you are viewer.");
    expect(html).toContain('data-testid="logout"');
    expect(titleOf(html)).toBe("Forbidden · Fleetback");
    expect(html).not.toContain("error-request-id");

    const script = await viewer.request("/settings/users");
    expect(script.status).toBe(403);
    expect(await script.json()).toMatchObject({ code: "forbidden" });
    const api = await viewer.request("/api/users", { headers: BROWSER });
    expect(api.status).toBe(403);
    expect(api.headers.get("Content-Type")).toMatch(/^application\/json/);
  });

  it("answers a missing host, job and route with a 404 page; the API keeps JSON", async () => {
    for (const path of [`/hosts/${MISSING}`, `/jobs/${MISSING}`, "/no/such/page"]) {
      const res = await admin.request(path, { headers: BROWSER });
      expect(res.status, path).toBe(404);
      const html = await res.text();
      expect(html, path).toContain('data-status="404"');
      expect(titleOf(html), path).toBe("Not found · Fleetback");
      expect(html, path).toContain('href="/" data-testid="error-home"');
    }
    const api = await admin.request(`/api/hosts/${MISSING}`, { headers: BROWSER });
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ code: "not_found" });
    const plain = await admin.request("/no/such/page");
    expect(await plain.text()).toBe("Not found");
  });

  it("escapes the path it names", async () => {
    const res = await admin.request("/%3Cscript%3Ealert(1)%3C%2Fscript%3E", { headers: BROWSER });
    expect(res.status).toBe(404);
    const html = await res.text();
    expect(html).not.toContain("<script>alert");
    expect(html).toContain("&lt;script&gt;");
  });

  it("gives an htmx request the toast trigger and no page", async () => {
    const page = await viewer.request("/alerts", { headers: BROWSER });
    const csrf = csrfFrom(await page.text());
    const res = await viewer.form(
      `/alerts/${MISSING}/resolve`,
      { _csrf: csrf },
      { "HX-Request": "true", ...BROWSER },
    );
    expect(res.status).toBe(403);
    expect(res.headers.get("HX-Reswap")).toBe("none");
    expect(JSON.parse(res.headers.get("HX-Trigger") ?? "{}")).toEqual({
      "fleetback:toast": { level: "error", message: "This needs the operator role; you are viewer." },
    });
    expect(await res.text()).not.toContain("<html");
  });

  it("shows a 500 with its request id and never the internal message", async () => {
    const app = new Hono<AppEnv>();
    app.use(requestId({ headerName: "X-Request-Id" }));
    app.get("/boom", () => {
      throw new Error("secret internal detail");
    });
    app.get("/gone", () => {
      throw new RequestError("gone", "This was removed.");
    });
    app.notFound(notFoundHandler(deps.views));
    app.onError(handleError(createLogger("silent"), deps.views));
    const res = await app.request("/boom", { headers: BROWSER });
    expect(res.status).toBe(500);
    const id = res.headers.get("X-Request-Id") ?? "";
    expect(id).not.toBe("");
    const html = await res.text();
    expect(html).toContain(`<code data-testid="error-request-id">${id}</code>`);
    expect(html).not.toContain("secret internal detail");
    const json = await app.request("/boom");
    expect(await json.json()).toEqual({
      code: "internal",
      message: "Internal error; the server log has the details under this request id.",
      request_id: json.headers.get("X-Request-Id"),
    });
    const toast = await app.request("/boom", { headers: { "HX-Request": "true" } });
    expect(toast.headers.get("HX-Trigger")).toContain(toast.headers.get("X-Request-Id") ?? "missing");
    const gone = await app.request("/gone", { headers: BROWSER });
    expect(gone.status).toBe(410);
    expect(await gone.text()).toContain("This was removed.");
  });
});
