/**
 * @module support/browser
 * Headless Debian Chromium driven by playwright-core (no browser download). The flags keep it
 * off the network: this machine reaches nothing but loopback and the package registries.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

export const chromiumPath = CANDIDATES.find((path) => existsSync(path));

export async function launchBrowser(): Promise<Browser> {
  if (!chromiumPath) {
    throw new Error("Chromium is not installed: apt-get install chromium (.ci/run does it)");
  }
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
}
