#!/usr/bin/env node
/**
 * @module cli/fleetback
 * `fleetback export` and `fleetback apply` (issue 37.4): the fleet's configuration as a YAML or
 * JSON file a team keeps in git, read from and applied to a server through its API. The API
 * token comes from FLEETBACK_API_TOKEN, never the command line (argv is visible to every user of
 * the machine); the server from --server or FLEETBACK_URL.
 *
 *   fleetback export [--format yaml|json] [-o FILE]
 *   fleetback apply -f FILE [--dry-run]
 */
import { realpathSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { documentText, parseDocumentText } from "../policies/document-text.js";

const USAGE = `usage: fleetback export [--server URL] [--format yaml|json] [-o FILE]
       fleetback apply -f FILE [--server URL] [--dry-run]
The API token is read from FLEETBACK_API_TOKEN; the server from --server or FLEETBACK_URL.`;

const EXIT_REFUSED = 1;
const EXIT_USAGE = 2;

class CliError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

interface Change {
  subject: string;
  path: string;
  before: unknown;
  after: unknown;
}

function show(value: unknown): string {
  return value === null || value === undefined ? "(none)" : JSON.stringify(value);
}

/** One line a change: what, where in it, before → after. */
export function describeChanges(changes: readonly Change[]): string[] {
  return changes.map((change) => {
    if (change.path === "") {
      return change.before === null ? `+ ${change.subject}` : `- ${change.subject}`;
    }
    return `~ ${change.subject}  ${change.path}: ${show(change.before)} → ${show(change.after)}`;
  });
}

async function call(
  server: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(new URL(path, server), {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        Accept: "application/json",
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw new CliError(
      `cannot reach ${server}: ${err instanceof Error ? err.message : String(err)}`,
      EXIT_REFUSED,
    );
  }
  const text = await res.text();
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new CliError(`${server} answered ${res.status} with no JSON`, EXIT_REFUSED);
  }
  if (!res.ok) {
    const message = (answer as { message?: string }).message ?? `status ${res.status}`;
    throw new CliError(`refused (${res.status}): ${message}`, EXIT_REFUSED);
  }
  return answer;
}

function parseDocument(text: string, file: string): unknown {
  try {
    return parseDocumentText(text, file.endsWith(".json") ? "json" : "yaml");
  } catch (err) {
    throw new CliError(`${file}: ${err instanceof Error ? err.message : String(err)}`, EXIT_USAGE);
  }
}

export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
): Promise<number> {
  const [command, ...rest] = argv;
  let values: { server?: string; format?: string; output?: string; file?: string; "dry-run"?: boolean };
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        server: { type: "string" },
        format: { type: "string" },
        output: { type: "string", short: "o" },
        file: { type: "string", short: "f" },
        "dry-run": { type: "boolean" },
      },
      strict: true,
    }));
  } catch (err) {
    throw new CliError(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`, EXIT_USAGE);
  }
  const server = values.server ?? env.FLEETBACK_URL;
  const token = env.FLEETBACK_API_TOKEN;
  if (command !== "export" && command !== "apply") {
    throw new CliError(USAGE, EXIT_USAGE);
  }
  if (!server) {
    throw new CliError(`no server: give --server URL or set FLEETBACK_URL\n${USAGE}`, EXIT_USAGE);
  }
  if (!token) {
    throw new CliError(
      "no API token: set FLEETBACK_API_TOKEN (a token of an admin to apply; any to export)",
      EXIT_USAGE,
    );
  }
  if (command === "export") {
    const format = values.format ?? (values.output?.endsWith(".json") ? "json" : "yaml");
    if (format !== "yaml" && format !== "json") {
      throw new CliError(`--format: yaml or json, not ${format}`, EXIT_USAGE);
    }
    const document = await call(server, token, "GET", "/api/fleet-config");
    const text = documentText(document, format);
    if (values.output) {
      await writeFile(values.output, text, { mode: 0o644 });
    } else {
      out(text.trimEnd());
    }
    return 0;
  }
  if (!values.file) {
    throw new CliError(`apply needs -f FILE\n${USAGE}`, EXIT_USAGE);
  }
  const document = parseDocument(await readFile(values.file, "utf8"), values.file);
  const dryRun = values["dry-run"] === true;
  const result = (await call(server, token, "POST", "/api/fleet-config/apply", {
    document,
    dry_run: dryRun,
  })) as {
    changes: Change[];
    plan: { hosts_changed: number };
  };
  for (const line of describeChanges(result.changes)) {
    out(line);
  }
  const count = `${result.changes.length} change${result.changes.length === 1 ? "" : "s"}`;
  out(
    result.changes.length === 0
      ? "no changes: the fleet is as the document says"
      : dryRun
        ? `${count}; dry run, nothing applied`
        : `${count} applied; ${result.plan.hosts_changed} host${result.plan.hosts_changed === 1 ? "" : "s"} changed`,
  );
  return 0;
}

const invoked = process.argv[1] === undefined ? undefined : realpathSync(process.argv[1]);
if (invoked === fileURLToPath(import.meta.url)) {
  runCli(process.argv.slice(2), process.env, (line) => process.stdout.write(`${line}\n`)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`fleetback: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(err instanceof CliError ? err.code : EXIT_REFUSED);
    },
  );
}
