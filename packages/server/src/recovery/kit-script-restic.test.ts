/**
 * The recovery kit's script run by sh on a real restic repository (restic 0.18 and 0.14): a
 * password full of what a shell would otherwise interpret (quotes, `$`, backticks, spaces at
 * either end) opens the repository byte for byte, the script's arguments reach restic, and the
 * password is on no command line of the script's processes.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RESTIC_VERSIONS, requireRestic, resticSuite } from "../testing/restic-binaries.js";
import { kitScript } from "./kit-script.js";

const PASSWORD = ` Can'ary "kit" $HOME \`id\` \\n ; rm -rf x '' `;

function run(command: string, args: string[], env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(command, args, { env }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

for (const version of RESTIC_VERSIONS) {
  const suite = resticSuite(`the kit's script on restic ${version}`, version);
  describe.skipIf(suite.skip)(suite.title, () => {
    it("opens the repository with the exact password and passes its arguments on", async () => {
      const restic = requireRestic(version);
      const dir = mkdtempSync(join(tmpdir(), "fleetback-kit-script-"));
      const repository = join(dir, "repo");
      const base = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir };
      const direct = { ...base, RESTIC_REPOSITORY: repository, RESTIC_PASSWORD: PASSWORD };
      expect((await run(restic, ["init"], direct)).code).toBe(0);
      writeFileSync(join(dir, "file.txt"), "kept\n");
      const backup = await run(restic, ["backup", "--host", "kit-host", join(dir, "file.txt")], direct);
      expect(backup.code, backup.stderr).toBe(0);

      const script = join(dir, "kit.sh");
      writeFileSync(script, kitScript({ hostName: "web-1", slot: "repo", repository, password: PASSWORD }), {
        mode: 0o600,
      });
      const env = { ...base, RESTIC: restic };
      const listed = await run("sh", [script], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain("kit-host");
      const json = await run("sh", [script, "snapshots", "--json", "--host", "kit-host"], env);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toHaveLength(1);

      // A one-character change to the password must not open it: the quoting kept every byte.
      const near = kitScript({ hostName: "web-1", slot: "repo", repository, password: PASSWORD.trim() });
      writeFileSync(script, near, { mode: 0o600 });
      expect((await run("sh", [script], env)).code).not.toBe(0);
    });

    it("puts the password on no command line", () => {
      const text = kitScript({ hostName: "web-1", slot: "repo", repository: "/r", password: PASSWORD });
      const lines = text.split("\n").filter((line) => line.includes("Can"));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^RESTIC_PASSWORD='/);
    });
  });
}
