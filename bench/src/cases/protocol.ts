/**
 * @module cases/protocol
 * Cost of validating agent frames on the server's hot path (progress and log lines from
 * hundreds of agents) against the floor: parsing the same JSON without validation.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { decodeAgentMessage } from "@fleetback/protocol";
import type { BenchCase } from "../harness.js";

const require = createRequire(import.meta.url);

function fixtureFrame(name: string): string {
  const path = require.resolve(`@fleetback/protocol/fixtures/agent-to-server/${name}.json`);
  return JSON.stringify(JSON.parse(readFileSync(path, "utf8")));
}

export function protocolCases(): BenchCase[] {
  return ["job.progress", "log.stream", "heartbeat"].map((name) => {
    const frame = fixtureFrame(name);
    return {
      name: `decode ${name}`,
      baselineName: "JSON.parse",
      batch: 2_000,
      subject: () => {
        if (!decodeAgentMessage(frame).ok) {
          throw new Error(`fixture ${name} must decode`);
        }
      },
      baseline: () => {
        JSON.parse(frame);
      },
    };
  });
}
