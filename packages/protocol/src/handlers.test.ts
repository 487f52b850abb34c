/**
 * @module handlers.test
 * Handler maps: exhaustive at compile time, routing at run time.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { decodeAgentMessage, decodeServerMessage } from "./codec.js";
import type { CommandRun } from "./command-run.js";
import type { Direction } from "./envelope.js";
import {
  type AgentMessageHandlers,
  dispatchAgentMessage,
  dispatchServerMessage,
  type ServerMessageHandlers,
} from "./handlers.js";
import { loadFixtures } from "./test-fixtures.js";

const fixtures = loadFixtures();

const agentHandlers: AgentMessageHandlers<string> = {
  hello: (payload) => `hello ${payload.hostname}`,
  heartbeat: (payload) => `heartbeat ${payload.running_job_ids.length}`,
  "schedule.ack": (payload) => `ack ${payload.version}`,
  "schedule.fire": (payload) => `fire ${payload.schedule_id}`,
  "job.started": (payload) => `started ${payload.kind}`,
  "job.progress": (payload) => `progress ${payload.percent_done}`,
  "job.finished": (payload) => `finished ${payload.status}`,
  "log.stream": (payload) => `log ${payload.stream}`,
  "snapshots.report": (payload) => `snapshots ${payload.snapshots.length}`,
  "repo.stats": (payload) => `stats ${payload.last_check_status}`,
  "tree.list.result": (payload, envelope) =>
    `tree ${envelope.id} ${"error" in payload ? "error" : "entries"}`,
  "update.result": (payload) => `update ${payload.version} ${payload.status}`,
  "dump.chunk": (payload) => `chunk ${payload.request_id} ${payload.seq}`,
  "dump.end": (payload) => `end ${payload.request_id} ${payload.status}`,
  "catalog.delta": (payload) => `catalog ${payload.tag} ${payload.part}/${payload.parts}`,
};

function describeRun(run: CommandRun): string {
  switch (run.kind) {
    case "backup":
      return `backup ${run.tag}`;
    case "forget":
      return `forget ${run.forget_groups.length}`;
    case "restore":
      return `restore ${run.restore.target_dir}`;
    case "diff":
      return `diff ${run.diff.snapshot_a}`;
    case "check":
      return `check ${run.check.read_data_subset}`;
    default:
      return `${run.kind} ${run.job_id}`;
  }
}

const serverHandlers: ServerMessageHandlers<string> = {
  "config.update": (payload) => (payload.slot === undefined ? "caps" : `creds ${payload.slot}`),
  "schedule.set": (payload) => `schedules ${payload.schedules.length}`,
  "command.run": describeRun,
  "command.cancel": (payload) => `cancel ${payload.job_id}`,
  "command.update": (payload) => `update ${payload.version}`,
  "tree.list": (payload) => `tree ${payload.path}`,
  "dump.request": (payload) => `dump ${payload.path} ${payload.archive ?? "plain"}`,
  "dump.ack": (payload) => `ack ${payload.seq}`,
  "catalog.ack": (payload) => `catalog ${payload.tag} ${payload.status}`,
  "dump.cancel": (payload) => `cancel ${payload.request_id}`,
  error: (payload) => `error ${payload.code}`,
};

function route(direction: Direction, text: string): string | undefined {
  if (direction === "agent-to-server") {
    const result = decodeAgentMessage(text);
    return result.ok ? dispatchAgentMessage(agentHandlers, result.message) : undefined;
  }
  const result = decodeServerMessage(text);
  return result.ok ? dispatchServerMessage(serverHandlers, result.message) : undefined;
}

describe("handler maps", () => {
  it("route every golden frame to the handler of its type", () => {
    for (const fixture of fixtures) {
      expect(route(fixture.direction, fixture.text), fixture.file).toBeTypeOf("string");
    }
  });

  it("narrow command.run on kind", () => {
    const restore = fixtures.find((f) => f.file === "command.run.restore.json");
    expect(route("server-to-agent", restore?.text ?? "")).toMatch(/^restore \$HOME\//);
  });

  it("do not compile when a type is missing", () => {
    const { hello: _dropped, ...incomplete } = agentHandlers;
    // @ts-expect-error: `hello` has no handler
    const broken: AgentMessageHandlers<string> = incomplete;
    expect(broken).toBeDefined();
    expectTypeOf<Parameters<AgentMessageHandlers["job.finished"]>[0]["exit_code"]>().toEqualTypeOf<
      number | null
    >();
  });
});
