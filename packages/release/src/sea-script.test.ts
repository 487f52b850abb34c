import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findAgentPackage } from "./agent-package.js";
import { buildSeaScript, wrapTopLevelAwait } from "./sea-script.js";

describe("wrapTopLevelAwait", () => {
  it("keeps the imports on top and runs the rest in an async function", () => {
    const wrapped = wrapTopLevelAwait(
      '#!/usr/bin/env node\nimport { a } from "./a.js";\nimport {\n  b,\n  c,\n} from "./b.js";\nimport "./side.js";\nprocess.exitCode = await a(b, c);\n',
    );
    const [imports, body] = wrapped.split("(async () => {");
    expect(imports).toBe(
      'import { a } from "./a.js";\nimport {\n  b,\n  c,\n} from "./b.js";\nimport "./side.js";\n',
    );
    expect(body).toContain("process.exitCode = await a(b, c);");
    expect(wrapped).not.toContain("#!");
  });
});

describe("the SEA script of the agent CLI", () => {
  let dir: string;
  let script: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "fleetback-sea-script-"));
    script = join(dir, "agent.cjs");
    const agent = await findAgentPackage();
    await buildSeaScript({
      entry: join(agent.dir, "dist", "cli.js"),
      outfile: script,
      version: "3.2.1-script",
    });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("opens with the version banner and has no import statements left", async () => {
    const text = await readFile(script, "utf8");
    expect(text.split("\n", 1)[0]).toBe("// fleetback-agent 3.2.1-script");
    expect(text).not.toMatch(/^import\s/m);
  });

  it("runs the agent CLI as CommonJS under plain node with the baked-in version", async () => {
    // A .cjs copy next to a package.json of type module must still be read as CommonJS.
    await writeFile(join(dir, "package.json"), '{"type":"module"}');
    expect(execFileSync(process.execPath, [script, "--version"], { encoding: "utf8" })).toBe(
      "3.2.1-script\n",
    );
    expect(execFileSync(process.execPath, [script, "help"], { encoding: "utf8" })).toMatch(
      /^Usage: fleetback-agent/,
    );
  });
});
