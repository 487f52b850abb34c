import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { attachUpgradeRouter } from "./upgrade-router.js";

function statusOf(url: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.once("open", () => {
      ws.close();
      resolve(101);
    });
    ws.once("unexpected-response", (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    ws.once("error", () => resolve(0));
  });
}

describe("upgrade router", () => {
  const server = createServer();
  afterEach(() => {
    server.close();
  });

  it("hands an upgrade to the route that claims its path and answers 404 for any other path", async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const router = attachUpgradeRouter(server);
    const wss = new WebSocketServer({ noServer: true });
    const claimed: string[] = [];
    const remove = router.add({
      matches: (path) => path === "/live",
      handle(req, socket, head) {
        claimed.push(req.url ?? "");
        wss.handleUpgrade(req, socket, head, (ws) => ws.close());
      },
    });
    expect(await statusOf(`ws://127.0.0.1:${port}/live?x=1`)).toBe(101);
    expect(await statusOf(`ws://127.0.0.1:${port}/elsewhere`)).toBe(404);
    expect(claimed).toEqual(["/live?x=1"]);
    remove();
    expect(await statusOf(`ws://127.0.0.1:${port}/live`)).toBe(404);
    router.detach();
    wss.close();
  });
});
