/**
 * One definition is both the route and its document entry: this file defines a group the way a
 * route module does (one `add` per operation, nothing else) and holds that the Hono route answers
 * behind its role, validates before the handler with field-naming errors, reads an integer query
 * parameter from its text, and that the document built from the group says the same things,
 * each operation under the group's tag or its own.
 */
import { Hono } from "hono";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import type { Actor, AppEnv, Role } from "../auth/actor.js";
import { RequestError, statusOf } from "../errors.js";
import { apiGroup, NO_CONTENT } from "./api-route.js";
import { buildOpenApiDocument } from "./document.js";

const Note = Type.Object({ text: Type.String({ minLength: 1 }) }, { additionalProperties: false });
const Page = Type.Object(
  { page: Type.Optional(Type.Integer({ minimum: 1, maximum: 999 })) },
  { additionalProperties: false },
);

interface Ctx {
  prefix: string;
}

function group() {
  const notes = apiGroup<Ctx>({ tag: "Notes" });
  notes.add({
    id: "listNotes",
    method: "get",
    path: "/api/notes",
    summary: "List notes",
    access: "viewer",
    query: Page,
    responses: { 200: { description: "A page.", schema: Type.Object({ page: Type.Integer() }) } },
    handler: (c, { query }) => c.json({ page: query.page ?? 1, type: typeof query.page }),
  });
  notes.add({
    id: "addNote",
    method: "post",
    path: "/api/notes/:id",
    tag: "Writing",
    summary: "Add a note",
    access: "operator",
    params: { id: "The note's id." },
    body: Note,
    responses: { 201: { description: "Added.", schema: Note } },
    handler: (c, { body }, { prefix }) => c.json({ text: `${prefix}${c.req.param("id")}:${body.text}` }, 201),
  });
  notes.add({
    id: "touchNote",
    method: "put",
    path: "/api/notes/:id/touch",
    summary: "Touch a note",
    access: "operator",
    body: Type.Object({ at: Type.Optional(Type.String()) }, { additionalProperties: false }),
    bodyOptional: true,
    responses: NO_CONTENT,
    handler: (c) => c.body(null, 204),
  });
  return notes;
}

/** The app as createApp shapes it: an actor set before the routes, RequestErrors as JSON. */
function appWith(routes: Hono<AppEnv>) {
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    const role = c.req.header("x-role") as Role | undefined;
    const actor: Actor | undefined = role
      ? { userId: "u1", username: "ann", role, via: "api_token" }
      : undefined;
    c.set("actor", actor);
    await next();
  });
  app.route("/", routes);
  app.onError((err, c) => {
    if (err instanceof RequestError) {
      return c.json({ error: err.code, message: err.message }, statusOf(err.code) as 400);
    }
    throw err;
  });
  return app;
}

describe("apiGroup", () => {
  const notes = group();
  const app = appWith(notes.routes({ prefix: "n-" }));

  it("mounts each operation behind its role, then validates, then runs the handler with the context", async () => {
    const post = (role: string | undefined, body: string) =>
      app.request("/api/notes/7", {
        method: "POST",
        headers: { "content-type": "application/json", ...(role ? { "x-role": role } : {}) },
        body,
      });
    expect((await post(undefined, "{}")).status).toBe(401);
    // The role is checked before the body: a viewer with a bad body is refused, not told the field.
    expect((await post("viewer", "{}")).status).toBe(403);
    const invalid = await post("operator", JSON.stringify({ text: "", extra: 1 }));
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({
      error: "invalid",
      message: expect.stringMatching(/^(text|extra): /),
    });
    expect((await post("operator", "not json")).status).toBe(400);
    const ok = await post("admin", JSON.stringify({ text: "hi" }));
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ text: "n-7:hi" });
  });

  it("reads an empty optional body as {} and a required one as invalid", async () => {
    const touch = await app.request("/api/notes/7/touch", {
      method: "PUT",
      headers: { "x-role": "operator" },
    });
    expect(touch.status).toBe(204);
  });

  it("reads an integer query parameter from its text and names it when it is not one", async () => {
    const get = (qs: string) => app.request(`/api/notes${qs}`, { headers: { "x-role": "viewer" } });
    expect(await (await get("?page=3")).json()).toEqual({ page: 3, type: "number" });
    for (const bad of ["?page=0", "?page=three", "?page=1.5", "?other=1"]) {
      const res = await get(bad);
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as { message: string }).message, bad).toMatch(/^(page|other): /);
    }
  });

  it("gives the document what the route does: method, path, access, schemas, and page as an integer", () => {
    const doc = buildOpenApiDocument(notes.operations, { baseUrl: "http://x.invalid", version: "t" });
    const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;
    expect(Object.keys(paths)).toEqual(["/api/notes", "/api/notes/{id}", "/api/notes/{id}/touch"]);
    const list = paths["/api/notes"]?.get;
    expect(list?.["x-fleetback-access"]).toBe("viewer");
    expect(list?.parameters).toEqual([
      { name: "page", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 999 } },
    ]);
    const add = paths["/api/notes/{id}"]?.post;
    expect(add?.["x-fleetback-access"]).toBe("operator");
    expect(Object.keys(add?.responses as object).sort()).toEqual(["201", "400", "401", "403", "404"]);
    expect(paths["/api/notes/{id}/touch"]?.put?.requestBody).toMatchObject({ required: false });
    // Each operation is under its group's tag unless it names its own.
    expect([list?.tags, add?.tags, paths["/api/notes/{id}/touch"]?.put?.tags]).toEqual([
      ["Notes"],
      ["Writing"],
      ["Notes"],
    ]);
    // The handler stays out of the document's view of the operation.
    expect(notes.operations.every((op) => !("handler" in op))).toBe(true);
  });

  it("refuses an operation id given twice", () => {
    const twice = apiGroup<Ctx>({ tag: "X" });
    const op = {
      id: "same",
      method: "get",
      path: "/api/x",
      summary: "x",
      access: "public",
      responses: NO_CONTENT,
      handler: () => new Response(null, { status: 204 }),
    } as const;
    twice.add(op);
    expect(() => twice.add({ ...op, path: "/api/y" })).toThrow(/same is defined twice/);
  });
});
