import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { processLaunchPorts } from "./launch-ports.js";

async function script(body: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "fleetback-exe-")), "agent-0.2.0");
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

const posixOnly = process.platform === "win32" ? " (skipped: POSIX executables, not on Windows)" : "";

describe.skipIf(process.platform === "win32")(`processLaunchPorts.spawnExecutable${posixOnly}`, () => {
  it("passes arguments and environment on and its exit status back", async () => {
    const path = await script(
      '[ "$1 $2" = "run --x" ] && [ "$FLEETBACK_AGENT_LAUNCHED" = "0.2.0" ] && exit 75; exit 1',
    );
    const child = processLaunchPorts.spawnExecutable(path, ["run", "--x"], {
      PATH: process.env.PATH,
      FLEETBACK_AGENT_LAUNCHED: "0.2.0",
    });
    expect(await child.exited).toBe(75);
  });

  it("ends the child on terminate (SIGTERM, as 128 + 15 unless it handles it)", async () => {
    const path = await script("exec sleep 30");
    const child = processLaunchPorts.spawnExecutable(path, [], { PATH: process.env.PATH });
    setTimeout(() => child.terminate(75), 100);
    expect(await child.exited).toBe(143);
  });

  it("rejects when the file cannot be executed", async () => {
    const child = processLaunchPorts.spawnExecutable("/nonexistent/agent-0.2.0", [], {});
    await expect(child.exited).rejects.toThrow(/ENOENT/);
  });
});
