/**
 * The four secret settings read from files (`<NAME>_FILE`), through loadConfig as the server
 * reads them at start, on real files in a temporary directory.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashToken } from "@fleetback/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Config, loadConfig } from "./config.js";

const OIDC = { FLEETBACK_OIDC_ISSUER: "https://id.example.com", FLEETBACK_OIDC_CLIENT_ID: "fleetback" };

/** Each secret setting, a value it accepts, and where loadConfig puts what it read. */
const SETTINGS: Array<{
  name: string;
  value: string;
  extra?: Record<string, string>;
  read: (c: Config) => unknown;
  expected: (v: string) => unknown;
}> = [
  {
    name: "DATABASE_URL",
    value: "postgres://fleetback:Canary-Db-Passw0rd@postgres:5432/fleetback",
    read: (config) => config.databaseUrl,
    expected: (value) => value,
  },
  {
    name: "FLEETBACK_BOOTSTRAP_TOKEN",
    value: "Canary-Bootstrap-0123456789",
    read: (config) => config.bootstrapToken,
    expected: (value) => value,
  },
  {
    name: "FLEETBACK_METRICS_TOKEN",
    value: "Canary-Metrics-0123456789",
    read: (config) => config.metricsTokenHash,
    expected: (value) => hashToken(value),
  },
  {
    name: "FLEETBACK_OIDC_CLIENT_SECRET",
    value: "Canary-Oidc-Secret-0123",
    extra: OIDC,
    read: (config) => config.sso?.clientSecret,
    expected: (value) => value,
  },
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fleetback-secret-file-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function secretFile(name: string, contents: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, contents, { mode: 0o600 });
  return path;
}

function errorsOf(env: Record<string, string>): string[] {
  const result = loadConfig(env, dir);
  return result.ok ? [] : result.errors;
}

describe.each(SETTINGS)(
  "the secret setting $name from a file",
  ({ name, value, extra = {}, read, expected }) => {
    const fileVariable = `${name}_FILE`;

    it("reads the value from the file when the variable itself is unset, less one trailing newline", async () => {
      for (const [label, contents] of [
        ["plain", value],
        ["newline", `${value}\n`],
        ["crlf", `${value}\r\n`],
      ] as const) {
        const path = await secretFile(`${name}-${label}`, contents);
        const result = loadConfig({ ...extra, [fileVariable]: path }, dir);
        expect(result.ok ? read(result.config) : result.errors, label).toEqual(expected(value));
      }
      // Relative to the working directory, as every path setting is.
      await secretFile(`${name}-relative`, value);
      const relative = loadConfig({ ...extra, [fileVariable]: `${name}-relative` }, dir);
      expect(relative.ok ? read(relative.config) : relative.errors).toEqual(expected(value));
    });

    it("refuses the variable and the file together, naming both, and reads neither", async () => {
      const path = await secretFile(`${name}-both`, value);
      const errors = errorsOf({ ...extra, [name]: value, [fileVariable]: path });
      expect(errors).toEqual([`${name} and ${fileVariable}: set one, not both (both are set)`]);
    });

    it("names the setting and the path of a file it cannot read, and nothing of what the file holds", async () => {
      const absent = join(dir, `${name}-absent`);
      expect(errorsOf({ ...extra, [fileVariable]: absent })).toEqual([
        `${fileVariable}: cannot read ${absent} (ENOENT)`,
      ]);
      const folder = join(dir, `${name}-folder`);
      await mkdir(folder, { recursive: true });
      expect(errorsOf({ ...extra, [fileVariable]: folder })).toEqual([
        `${fileVariable}: cannot read ${folder} (EISDIR)`,
      ]);
    });

    it("refuses an empty file or one of two lines without echoing a line of it", async () => {
      const empty = await secretFile(`${name}-empty`, "\n");
      expect(errorsOf({ ...extra, [fileVariable]: empty })).toEqual([`${fileVariable}: ${empty} is empty`]);
      const twoLines = await secretFile(`${name}-two`, `${value}\n${value}-second\n`);
      const errors = errorsOf({ ...extra, [fileVariable]: twoLines });
      expect(errors).toEqual([`${fileVariable}: ${twoLines} must hold the value on one line`]);
      expect(errors.join("\n")).not.toContain("Canary");
    });
  },
);

describe("a secret read from a file is judged like one from the environment", () => {
  it("names the _FILE variable when the value it holds is refused, never the value", async () => {
    const database = await secretFile("bad-database-url", "mysql://root:Canary-Wrong-Db@db/x\n");
    const bootstrap = await secretFile("short-bootstrap", "Canary-short\n");
    const metrics = await secretFile("short-metrics", "Canary-tiny\n");
    const errors = errorsOf({
      DATABASE_URL_FILE: database,
      FLEETBACK_BOOTSTRAP_TOKEN_FILE: bootstrap,
      FLEETBACK_METRICS_TOKEN_FILE: metrics,
    });
    expect(errors).toEqual([
      "DATABASE_URL_FILE: must start with postgres:// or postgresql:// (unset it to use the embedded database)",
      "FLEETBACK_BOOTSTRAP_TOKEN_FILE: must be at least 16 characters",
      "FLEETBACK_METRICS_TOKEN_FILE: must be at least 16 characters",
    ]);
    expect(errors.join("\n")).not.toContain("Canary");
  });

  it("keeps the defaults when no file and no variable is set (pnpm start, the image)", () => {
    const result = loadConfig({}, dir);
    expect(result.ok && [result.config.databaseUrl, result.config.bootstrapToken]).toEqual([
      undefined,
      undefined,
    ]);
  });
});
