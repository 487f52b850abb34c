/**
 * @module fleet/bare-ws
 * B2's memory baseline: a bare `ws` server in a child process of its own, holding the same number
 * of sockets as the measured server, so the ratio says what Fleetback keeps per connection on top
 * of what a WebSocket costs at all.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { freePort } from "./server-child.js";
import { pool } from "./sim-agents.js";

const benchDir = join(dirname(fileURLToPath(import.meta.url)), "../..");

const SERVER = `
const { WebSocketServer } = require("ws");
const server = new WebSocketServer({ host: "127.0.0.1", port: Number(process.argv[1]) });
server.on("connection", (socket) => socket.on("message", () => {}));
server.on("listening", () => process.stdout.write("listening\\n"));
`;

async function rssOf(pid: number | undefined): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) * 1024;
}

/** Resident bytes of a bare ws server holding `sockets` connections (after they settle). */
export async function bareWsRssBytes(sockets: number): Promise<number> {
  const port = await freePort();
  // cwd: the bench package, so the child resolves the same `ws` as the bench.
  const child = spawn(process.execPath, ["-e", SERVER, String(port)], {
    cwd: benchDir,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const clients: WebSocket[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("listening")) {
          resolve();
        }
      });
      void exited.then(() => reject(new Error("the bare ws server exited")));
    });
    await pool(
      Array.from({ length: sockets }, (_, i) => i),
      32,
      async () => {
        const socket = new WebSocket(`ws://127.0.0.1:${port}`);
        clients.push(socket);
        await new Promise<void>((resolve, reject) => {
          socket.once("open", () => resolve());
          socket.once("error", reject);
        });
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    return await rssOf(child.pid);
  } finally {
    for (const socket of clients) {
      socket.terminate();
    }
    child.kill("SIGTERM");
    await exited;
  }
}
