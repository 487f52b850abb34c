#!/usr/bin/env node
// Fetches the real third-party tools the tests run (restic 0.14/0.18, rest-server, htpasswd)
// before any test package starts, so that no package skips them for want of a fetch that another
// package's setup would have done. Where the fetch cannot work (no apt-get), it warns and the
// tests that need the tools skip, each saying why.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("./fetch-tools.sh", import.meta.url));
const result = spawnSync("bash", [script], { stdio: "inherit" });
if (result.status !== 0) {
  console.warn(
    "prepare-tools: restic/rest-server could not be fetched; tests that need them will be skipped",
  );
}
