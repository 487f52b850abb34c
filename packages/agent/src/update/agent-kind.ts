/**
 * @module update/agent-kind
 * Whether this agent runs as a JavaScript bundle under a Node.js it found or as a single
 * executable (Node SEA): the server sends updates of the same kind (hello.agent_kind).
 */
import type { AgentKind } from "@fleetback/protocol";

interface SeaModule {
  isSea?: () => boolean;
}

export function detectAgentKind(): AgentKind {
  try {
    // getBuiltinModule works in ESM, CommonJS and a SEA's embedded script alike; Node before
    // 20.16 lacks it, but SEA artefacts are built with the server's newer Node.
    const sea = process.getBuiltinModule?.("node:sea") as SeaModule | undefined;
    return sea?.isSea?.() === true ? "sea" : "bundle";
  } catch {
    return "bundle";
  }
}
