/**
 * @module support/sim-agents
 * Many hosts without restic, for the fleet-scale e2e tests: each is enrolled through the API as a
 * real agent would be (token minted by the admin, `POST /api/agents/enroll`), then held online by
 * the agent's own connection code (createAgentConnection: its hello, heartbeats and backoff), with
 * handlers that ignore what the server sends.
 */
import { type AgentConnection, type ConnectionOptions, createAgentConnection } from "@fleetback/agent";
import { PROTOCOL_VERSION, type ServerMessageHandlers, ServerMessages } from "@fleetback/protocol";
import type { Api } from "./api.js";

export interface SimHost {
  hostId: string;
  token: string;
}

/** Runs `work` over `items` with at most `limit` in flight; results in the items' order. */
export async function pool<T, R>(
  items: T[],
  limit: number,
  work: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i] as T, i);
      }
    }),
  );
  return results;
}

/** Enrols one host named `name` (its repository on a closed port: no job of it ever runs). */
export async function enrolSimHost(api: Api, serverUrl: string, name: string): Promise<SimHost> {
  const minted = await api.send<{ token: string }>("POST", "/api/enrollment-tokens", {
    repository: { url: `rest:http://127.0.0.1:9/${name}/`, username: name },
  });
  if (minted.status !== 201) {
    throw new Error(`enrolment token for ${name}: ${minted.status} ${JSON.stringify(minted.body)}`);
  }
  const res = await fetch(`${serverUrl}/api/agents/enroll`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      token: minted.body.token,
      hostname: name,
      os: "linux",
      arch: "x64",
      agent_version: "0.1.0",
      tool_version: "0.18.0",
    }),
  });
  if (res.status !== 201) {
    throw new Error(`enrol ${name}: ${res.status} ${await res.text()}`);
  }
  const enrolled = (await res.json()) as { host_id: string; agent_token: string };
  return { hostId: enrolled.host_id, token: enrolled.agent_token };
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const ignoreAll = Object.fromEntries(
  Object.keys(ServerMessages).map((type) => [type, () => undefined]),
) as unknown as ServerMessageHandlers<void>;

/** The agent's connection for a simulated host; `run()` it to connect. */
export function simConnection(
  serverUrl: string,
  host: SimHost,
  hooks: Pick<ConnectionOptions, "onReady" | "onAccepted"> = {},
): AgentConnection {
  return createAgentConnection({
    target: { serverUrl, token: host.token },
    identity: {
      hostname: `sim-${host.hostId}`,
      os: "linux",
      arch: "x64",
      agent_version: "0.1.0",
      tool_version: "0.18.0",
      protocol_version: PROTOCOL_VERSION,
    },
    runningJobIds: () => [],
    handlers: ignoreAll,
    log: quiet,
    ...hooks,
  });
}
