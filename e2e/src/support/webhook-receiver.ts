/**
 * @module support/webhook-receiver
 * A real HTTP endpoint for the server's webhook channel: records each delivery's raw body and
 * signature header and answers 204.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface WebhookDelivery {
  body: string;
  signature: string | undefined;
}

export interface WebhookReceiver {
  /** Where the channel posts: http://127.0.0.1:<port>/hooks/fleetback */
  url: string;
  deliveries: WebhookDelivery[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const deliveries: WebhookDelivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const signature = req.headers["x-fleetback-signature"];
      deliveries.push({
        body: Buffer.concat(chunks).toString("utf8"),
        signature: typeof signature === "string" ? signature : undefined,
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/fleetback`,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
