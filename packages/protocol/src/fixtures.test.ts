/**
 * @module fixtures.test
 * Golden frames: each decodes and encodes back to itself, and renaming any key breaks that.
 */
import { IsArray, IsNever, IsObject, IsUnion, type TSchema } from "typebox";
import { describe, expect, it } from "vitest";
import { messageTypesOf, payloadSchemaOf } from "./catalog.js";
import { decode, encode } from "./codec.js";
import { JOB_KINDS } from "./constants.js";
import { DIRECTIONS, type Fixture, loadFixtures, roundTrips } from "./test-fixtures.js";

const fixtures = loadFixtures();

/** Payloads kept verbatim (the tool's own summary): renaming inside them is not a contract change. */
const FREE_FORM = new Set(["summary"]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Every key path of a JSON value, "[]" standing for any array index. */
function keyPaths(value: unknown, prefix = ""): string[] {
  if (Array.isArray(value)) {
    return value.flatMap((item) => keyPaths(item, `${prefix}[]`));
  }
  if (!isPlainObject(value)) {
    return [];
  }
  return Object.entries(value).flatMap(([key, child]) => {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    return FREE_FORM.has(key) ? [path] : [path, ...keyPaths(child, path)];
  });
}

/** Every property a schema declares, in the notation of keyPaths; absent (never) ones excluded. */
function schemaPaths(schema: TSchema, prefix = ""): string[] {
  if (IsUnion(schema)) {
    return schema.anyOf.flatMap((member) => schemaPaths(member, prefix));
  }
  if (IsArray(schema)) {
    return schemaPaths(schema.items, `${prefix}[]`);
  }
  if (!IsObject(schema)) {
    return [];
  }
  return Object.entries(schema.properties).flatMap(([key, child]) => {
    if (IsNever(child)) {
      return [];
    }
    const path = prefix === "" ? key : `${prefix}.${key}`;
    return FREE_FORM.has(key) ? [path] : [path, ...schemaPaths(child, path)];
  });
}

/** A copy of `value` with the key at `path` renamed everywhere it occurs, as a careless refactor would. */
function renameAt(value: unknown, path: readonly string[]): unknown {
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    return value.map((item) => renameAt(item, path));
  }
  if (head === undefined || !isPlainObject(value)) {
    return value;
  }
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => {
      if (key !== head) {
        return [key, child];
      }
      return rest.length === 0 ? [`${key}_renamed`, child] : [key, renameAt(child, rest)];
    }),
  );
}

function mutationsOf(fixture: Fixture): Array<{ path: string; frame: unknown }> {
  return [...new Set(keyPaths(fixture.frame.payload))].map((path) => {
    const payload = renameAt(fixture.frame.payload, path.replaceAll("[]", "").split("."));
    return { path, frame: { ...fixture.frame, payload } };
  });
}

describe("golden fixtures", () => {
  it.each(fixtures.map((fixture) => [`${fixture.direction}/${fixture.file}`, fixture] as const))(
    "%s decodes and encodes back to itself",
    (_name, fixture) => {
      const decoded = decode(fixture.text, fixture.direction);
      expect(decoded.ok ? "ok" : decoded.error.message).toBe("ok");
      if (!decoded.ok) {
        return;
      }
      const { id, type, payload } = decoded.message;
      expect(JSON.parse(encode(type, payload, id))).toEqual(fixture.frame);
    },
  );

  it.each(fixtures.map((fixture) => [`${fixture.direction}/${fixture.file}`, fixture] as const))(
    "%s is named after its type",
    (_name, fixture) => {
      const { type } = fixture.frame;
      expect(fixture.file === `${type}.json` || fixture.file.startsWith(`${type}.`)).toBe(true);
      expect(messageTypesOf(fixture.direction)).toContain(type);
    },
  );

  it.each(
    DIRECTIONS.flatMap((direction) => messageTypesOf(direction).map((type) => [direction, type] as const)),
  )("%s %s has a fixture", (direction, type) => {
    expect(fixtures.some((fixture) => fixture.direction === direction && fixture.frame.type === type)).toBe(
      true,
    );
  });

  it("has one command.run fixture per job kind and the three config.update variants", () => {
    const files = new Set(fixtures.map((fixture) => fixture.file));
    for (const kind of JOB_KINDS) {
      expect(files).toContain(`command.run.${kind}.json`);
    }
    for (const variant of ["repo", "admin", "caps"]) {
      expect(files).toContain(`config.update.${variant}.json`);
    }
  });

  it("uses every property of every payload schema in some fixture", () => {
    for (const direction of DIRECTIONS) {
      for (const type of messageTypesOf(direction)) {
        const schema = payloadSchemaOf(type, direction);
        const used = new Set(
          fixtures.filter((fixture) => fixture.frame.type === type).flatMap((f) => keyPaths(f.frame.payload)),
        );
        const missing =
          schema === undefined ? ["(no schema)"] : schemaPaths(schema).filter((p) => !used.has(p));
        expect(missing, `${type}: properties no fixture covers`).toEqual([]);
      }
    }
  });
});

describe("a renamed field fails the golden check", () => {
  it.each(fixtures.map((fixture) => [`${fixture.direction}/${fixture.file}`, fixture] as const))(
    "%s, each key renamed in turn",
    (_name, fixture) => {
      const survivors = mutationsOf(fixture)
        .filter((mutation) => roundTrips(fixture.direction, mutation.frame))
        .map((mutation) => mutation.path);
      expect(survivors).toEqual([]);
      expect(mutationsOf(fixture).length).toBeGreaterThan(0);
    },
  );
});
