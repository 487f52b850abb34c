/**
 * @module agent/server-handlers
 * What the agent does with each server message. The map is typed from the protocol catalog, so a
 * new server message type does not compile until it is handled here. `tree.list` is answered by
 * the tree browser with a `tree.list.result` carrying the request's id, entries or an error.
 * `catalog.ack` goes to the file catalogue's sender, which waits for it (tree/catalog-sender.ts).
 */
import type {
  AgentMessageType,
  CatalogAck,
  CommandUpdate,
  PayloadOf,
  ServerMessageHandlers,
} from "@fleetback/protocol";
import type { DumpStreamer } from "../dump/dump-streamer.js";
import type { JobQueue } from "../jobs/job-queue.js";
import type { Logger } from "../log/logger.js";
import type { CredentialStore } from "../restic/credential-store.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import type { TreeBrowser } from "../tree/tree-browser.js";

export type Reply = <K extends AgentMessageType>(type: K, payload: PayloadOf<K>, requestId: string) => void;

export interface ServerHandlerDeps {
  credentials: CredentialStore;
  queue: JobQueue;
  scheduler: Scheduler;
  log: Logger;
  reply: Reply;
  tree: TreeBrowser;
  /** Downloads (`dump.request`, protocol 7): streamed with their own `dump.chunk` / `dump.end`. */
  dumps: DumpStreamer;
  /** Self-update (update/updater.ts): answers with `update.result` itself. */
  update: (command: CommandUpdate) => Promise<void>;
  /** The file catalogue (protocol 15): the answer to the delta in flight. */
  catalogAck: (ack: CatalogAck) => void;
}

export function createServerHandlers(deps: ServerHandlerDeps): ServerMessageHandlers<void | Promise<void>> {
  const { credentials, queue, log } = deps;
  return {
    "config.update": (payload) => {
      // Only which parts changed is logged; the values never are.
      if (payload.clear === true) {
        credentials.clearRepository(payload.slot);
      } else if (payload.repository !== undefined && payload.slot !== undefined) {
        if (payload.job_id !== undefined) {
          credentials.setJobRepository(payload.job_id, payload.slot, payload.repository);
        } else {
          credentials.setRepository(payload.slot, payload.repository);
        }
      }
      if (payload.caps !== undefined) {
        credentials.setCaps(payload.caps);
      }
      log.info("configuration updated", {
        slot: payload.slot ?? null,
        job_id: payload.job_id ?? null,
        cleared: payload.clear === true,
        caps: payload.caps !== undefined,
      });
    },
    "schedule.set": (payload) => deps.scheduler.apply(payload),
    "command.run": (payload) => queue.submit(payload),
    "command.cancel": (payload) => queue.cancel(payload.job_id),
    "command.update": (payload) => deps.update(payload),
    "tree.list": async (payload, envelope) => {
      let result: PayloadOf<"tree.list.result">;
      try {
        result = await deps.tree.list(payload);
      } catch (cause) {
        log.error("tree.list failed", { snapshot_id: payload.snapshot_id, error: String(cause) });
        result = { error: "the agent could not list this directory; see the agent log" };
      }
      deps.reply("tree.list.result", result, envelope.id);
    },
    "dump.request": (payload) => deps.dumps.start(payload),
    "dump.ack": (payload) => deps.dumps.ack(payload),
    "dump.cancel": (payload) => deps.dumps.cancel(payload),
    "catalog.ack": (payload) => deps.catalogAck(payload),
    error: (payload) => {
      log.warn("the server reported an error", {
        code: payload.code,
        message: payload.message,
        help_url: payload.help_url,
        request_id: payload.request_id,
      });
    },
  };
}
