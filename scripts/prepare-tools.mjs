#!/usr/bin/env node
// Fetches the real third-party tools the tests run (restic 0.14/0.18, rest-server, htpasswd)
// before any test package starts, so that no package skips them for want of a fetch that another
// package's setup would have done. Under CI=true a failed fetch fails the run here; elsewhere
// (say, no apt-get) it warns, and the tests that need the tools skip, each saying why.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { isCi } from "./check-real-parts.mjs";

const script = fileURLToPath(new URL("./fetch-tools.sh", import.meta.url));
const result = spawnSync("bash", [script], { stdio: "inherit" });
if (result.status !== 0) {
  if (isCi()) {
    console.error(
      "prepare-tools: CI=true, and scripts/fetch-tools.sh could not fetch restic 0.14/0.18, rest-server and htpasswd from Debian's archive (it needs apt-get, dpkg and deb.debian.org)",
    );
    process.exit(1);
  }
  console.warn(
    "prepare-tools: restic/rest-server could not be fetched; tests that need them will be skipped",
  );
}
