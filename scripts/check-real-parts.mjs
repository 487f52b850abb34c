#!/usr/bin/env node
// Checks, before any test runs, that the real parts the tests drive are here: restic 0.14 and 0.18,
// rest-server and htpasswd (fetched into .cache/tools by scripts/fetch-tools.sh), Chromium,
// PostgreSQL (TEST_DATABASE_URL, answering), root, and the system tools the installer and sandbox
// tests run. Under CI=true a missing part fails the run here, with one line naming every missing
// part and how .ci/run provides it: a CI run must never go green by skipping what it could not
// find. Elsewhere each missing part is one warning line, the tests that need it skip and say why,
// and scripts/test-summary.mjs lists those skips.
// FLEETBACK_TOOLS_DIR replaces .cache/tools (the tests of this script point it at a copy).
import { accessSync, constants } from "node:fs";
import { connect } from "node:net";
import { delimiter, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The paths e2e/src/support/browser.ts launches, in the same order. */
export const CHROMIUM_PATHS = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

export function isCi(env = process.env) {
  return /^(true|1)$/i.test(env.CI ?? "");
}

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name, path) {
  return (path ?? "").split(delimiter).some((dir) => dir !== "" && executable(join(dir, name)));
}

/**
 * Whether PostgreSQL answers at `url`: an SSLRequest, to which any PostgreSQL answers one byte
 * ("S" or "N") before authentication. Resolves to undefined when it does, else to the reason.
 */
export function probePostgres(url, timeoutMs = 3_000) {
  let host;
  let port;
  try {
    const parsed = new URL(url);
    host = parsed.hostname.replace(/^\[|\]$/g, "") || "localhost";
    port = Number(parsed.port || 5432);
  } catch {
    return Promise.resolve("TEST_DATABASE_URL is not a URL");
  }
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (reason) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(
      () => done(`nothing answered on ${host}:${port} within ${timeoutMs} ms`),
      timeoutMs,
    );
    socket.once("connect", () => {
      const request = Buffer.alloc(8);
      request.writeInt32BE(8, 0);
      request.writeInt32BE(80877103, 4);
      socket.write(request);
    });
    socket.once("data", (data) => {
      const answer = String.fromCharCode(data[0] ?? 0);
      done(answer === "S" || answer === "N" ? undefined : `${host}:${port} answered, but not as PostgreSQL`);
    });
    socket.once("error", (err) => done(`${host}:${port}: ${err.code ?? err.message}`));
  });
}

/**
 * The real parts that are missing, as `{ name, how }`: what is missing and how .ci/run provides it.
 * Every input can be replaced, so that the tests of this script decide what is present.
 */
export async function findMissingParts({
  env = process.env,
  toolsDir = env.FLEETBACK_TOOLS_DIR || join(root, ".cache", "tools"),
  uid = process.getuid?.(),
  chromiumPaths = CHROMIUM_PATHS,
  probe = probePostgres,
} = {}) {
  const shown = relative(root, toolsDir).startsWith("..") ? toolsDir : relative(root, toolsDir);
  const fetched = (name, file) => ({
    name,
    present: executable(join(toolsDir, file)),
    how: `${join(shown, file)}, which scripts/fetch-tools.sh fetches from Debian's archive`,
  });
  const debian = (name, pkg) => ({
    name,
    present: onPath(name, env.PATH),
    how: `not on PATH; .ci/run installs the Debian package ${pkg}`,
  });
  const parts = [
    fetched("restic 0.14", "restic-0.14/usr/bin/restic"),
    fetched("restic 0.18", "restic-0.18/usr/bin/restic"),
    fetched("rest-server", "rest-server/usr/bin/restic-rest-server"),
    fetched("htpasswd", "htpasswd/usr/bin/htpasswd"),
    {
      name: "Chromium",
      present: chromiumPaths.some(executable),
      how: `none of ${chromiumPaths.join(", ")}; .ci/run installs the Debian package chromium`,
    },
    {
      name: "root",
      present: uid === 0,
      how: `id -u is ${uid ?? "unknown"}; the sandbox e2e needs root for unshare -m: run .ci/run as root`,
    },
    debian("systemd-analyze", "systemd"),
    debian("systemd-socket-activate", "systemd"),
    debian("shellcheck", "shellcheck"),
    debian("dash", "dash"),
    debian("setpriv", "util-linux"),
    debian("unshare", "util-linux"),
    debian("curl", "curl"),
    debian("openssl", "openssl"),
    debian("docker-compose", "docker-compose"),
    debian("caddy", "caddy"),
  ];
  const url = env.TEST_DATABASE_URL;
  if (!url) {
    parts.push({
      name: "PostgreSQL",
      present: false,
      how: "TEST_DATABASE_URL is not set; .ci/run exports postgres://postgres@127.0.0.1:5432/postgres when 127.0.0.1:5432 answers",
    });
  } else {
    const problem = await probe(url);
    parts.push({ name: "PostgreSQL", present: problem === undefined, how: `TEST_DATABASE_URL: ${problem}` });
  }
  return parts.filter((part) => !part.present).map(({ name, how }) => ({ name, how }));
}

/** The lines to print and the exit code: under CI one line and 1, else a warning per part and 0. */
export function verdict(missing, ci) {
  if (missing.length === 0) {
    return { lines: [], code: 0 };
  }
  if (ci) {
    const list = missing.map(({ name, how }) => `${name} (${how})`).join("; ");
    return { lines: [`check-real-parts: CI=true, and the tests need what is missing: ${list}`], code: 1 };
  }
  return {
    lines: missing.map(
      ({ name, how }) => `check-real-parts: warning: ${name} missing (${how}); the tests that need it skip`,
    ),
    code: 0,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { lines, code } = verdict(await findMissingParts(), isCi());
  for (const line of lines) {
    console.error(line);
  }
  process.exitCode = code;
}
