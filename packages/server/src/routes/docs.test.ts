/**
 * The agent-upgrade help page that ErrProtocolTooOld's help_url and the host page link to: it
 * answers without a session, names this server's protocol versions and installer command, and is
 * escaped like every page.
 */
import { EXIT } from "@fleetback/agent";
import { DEFAULT_AGENT_PATHS, parseUnitDirectives, renderAgentUnit } from "@fleetback/installer";
import { MIN_AGENT_PROTOCOL_VERSION, PROTOCOL_VERSION } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { createApp } from "../app.js";
import { createTestClient } from "../testing/http.js";
import { signInOn } from "../testing/signed-in-app.js";
import { createTestDeps } from "../testing/test-deps.js";
import { AGENT_UPGRADE_PATH, helpUrl } from "../updates/agent-upgrade-help.js";
import { AGENT_EXIT_PROTOCOL_TOO_OLD } from "./docs.js";

async function page(baseUrl: string, signIn = false): Promise<{ status: number; html: string }> {
  const deps = await createTestDeps({ config: { baseUrl } });
  try {
    const client = signIn
      ? (await signInOn(deps)).admin
      : createTestClient(createApp(deps), deps.config.baseUrl);
    const res = await client.request(AGENT_UPGRADE_PATH);
    return { status: res.status, html: await res.text() };
  } finally {
    await deps.close();
  }
}

describe("GET /docs/agent-upgrade", () => {
  it("is the help URL of the too-old error, and answers without a session", async () => {
    expect(helpUrl("https://backup.example.org:8443")).toBe(
      "https://backup.example.org:8443/docs/agent-upgrade",
    );
    const { status, html } = await page("https://backup.example.org:8443");
    expect(status).toBe(200);
    expect(html).toContain(`data-testid="min-protocol">${MIN_AGENT_PROTOCOL_VERSION}<`);
    expect(html).toContain(`data-testid="current-protocol">${PROTOCOL_VERSION}<`);
    expect(html).toContain(`data-testid="exit-code">${EXIT.protocolTooOld}<`);
    // The enrol page's command without a token, shell-quoted, then escaped for HTML.
    expect(html).toContain(
      'data-testid="upgrade-command">curl -fsSL &#39;https://backup.example.org:8443/install/install.sh&#39; | sudo bash</pre>',
    );
    expect(html).toContain("see https://backup.example.org:8443/docs/agent-upgrade)");
    expect(html).not.toMatch(/<script(?![^>]* src=)/);
    expect(html).not.toMatch(/ style=| on[a-z]+=/);
    expect(html).not.toContain("Sign out");
  });

  it("says so, instead of failing, when the base URL cannot go into an installer command", async () => {
    const { status, html } = await page("https://backup.example.org/a'b<c>");
    expect(status).toBe(200);
    expect(html).toContain('data-testid="no-upgrade-command"');
    expect(html).toContain("https://backup.example.org/a&#39;b&lt;c&gt;");
    expect(html).not.toContain("a'b<c>");
  });

  it("shows the navigation to a signed-in reader", async () => {
    const { html } = await page("https://backup.example.org", true);
    expect(html).toContain("Sign out admin");
  });

  it("names the exit status the agent really uses, which the installed unit does not restart", () => {
    expect(AGENT_EXIT_PROTOCOL_TOO_OLD).toBe(EXIT.protocolTooOld);
    const unit = renderAgentUnit({
      execPath: "/usr/bin/node",
      bundle: `${DEFAULT_AGENT_PATHS.bundleDir}/current.mjs`,
      configDir: DEFAULT_AGENT_PATHS.configDir,
      stateDir: DEFAULT_AGENT_PATHS.stateDir,
      restoreDir: DEFAULT_AGENT_PATHS.restoreDir,
      serverUrl: "https://backup.example.org",
    });
    const prevent = parseUnitDirectives(unit).find((d) => d.key === "RestartPreventExitStatus");
    expect(prevent?.value.split(" ")).toContain(String(EXIT.protocolTooOld));
  });
});
