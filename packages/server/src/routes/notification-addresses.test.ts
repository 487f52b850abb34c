/**
 * Issue 13, finding 10: notification channels cannot reach internal addresses unless
 * FLEETBACK_NOTIFY_ALLOW_NETWORKS names them (literals refused when saved, host names when sent),
 * and a failed attempt shows its status only, never the body the endpoint answered.
 */
import { notificationLog } from "@fleetback/db";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { csrfFrom, type TestClient } from "../testing/http.js";
import { type HttpReceiver, startHttpReceiver } from "../testing/http-receiver.js";
import { runServerSuite } from "../testing/server-suite.js";
import { signInOn } from "../testing/signed-in-app.js";

const API = "/api/notification-channels";
const MARKER = "internal-body-MARKER-7731";
/** The only internal network this suite allows: a receiver listens there, another on 127.0.0.1. */
const ALLOWED = "127.0.0.2";

/** Where each kind keeps its URL, and a config sending to `base`. */
const KINDS: ReadonlyArray<[kind: string, field: string, config: (base: string) => Record<string, unknown>]> =
  [
    ["webhook", "url", (base) => ({ url: `${base}/hook`, secret: "0123456789abcdef" })],
    ["slack", "url", (base) => ({ url: `${base}/services/T0/B0/x` })],
    ["discord", "url", (base) => ({ url: `${base}/api/webhooks/1/x` })],
    ["ntfy", "server_url", (base) => ({ server_url: base, topic: "alerts" })],
    ["gotify", "server_url", (base) => ({ server_url: base, token: "gotify-token" })],
  ];

runServerSuite(
  "notification channel addresses",
  (server) => {
    let refused: HttpReceiver;
    let allowed: HttpReceiver;
    let admin: TestClient;
    const seen: string[] = [];

    async function body(res: Response): Promise<string> {
      const text = await res.text();
      seen.push(text);
      return text;
    }

    beforeAll(async () => {
      refused = await startHttpReceiver();
      allowed = await startHttpReceiver(ALLOWED);
      ({ admin } = await signInOn(server.deps));
    });
    afterAll(async () => {
      await refused.close();
      await allowed.close();
    });
    beforeEach(() => {
      refused.requests.length = 0;
      allowed.requests.length = 0;
    });

    it("refuses a literal internal address when saving, naming the field", async () => {
      const port = new URL(refused.url).port;
      const hosts = [
        `127.0.0.1:${port}`,
        `0x7f000001:${port}`,
        `[::1]:${port}`,
        `[::ffff:127.0.0.1]:${port}`,
        "169.254.169.254",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "[fd00:ec2::254]",
        "[fe80::1]",
        "[::]",
      ];
      for (const [kind, field, config] of KINDS) {
        for (const host of hosts) {
          const res = await admin.json("POST", API, {
            name: `${kind} ${host}`,
            kind,
            config: config(`http://${host}`),
          });
          const answer = JSON.parse(await body(res)) as { message: string };
          expect([kind, host, res.status]).toEqual([kind, host, 400]);
          expect(answer.message).toMatch(
            new RegExp(`^config\\.${field}: is an? .*address; .*FLEETBACK_NOTIFY_ALLOW_NETWORKS`),
          );
        }
      }
      const email = await admin.json("POST", API, {
        name: "mail",
        kind: "email",
        config: { host: "127.0.0.1", port: 25, security: "none", from: "a@b.c", to: ["a@b.c"] },
      });
      expect(email.status).toBe(400);
      expect(JSON.parse(await body(email))).toMatchObject({
        message: expect.stringMatching(/^config\.host: /),
      });
      expect(refused.requests).toEqual([]);
    });

    it("refuses a host name that resolves to loopback when sending", async () => {
      const port = new URL(refused.url).port;
      for (const [kind, , config] of KINDS) {
        const created = await admin.json("POST", API, {
          name: `${kind} via localhost`,
          kind,
          config: config(`http://localhost:${port}`),
        });
        expect([kind, created.status]).toEqual([kind, 201]);
        const { notification_channel: channel } = JSON.parse(await body(created)) as {
          notification_channel: { id: string };
        };
        const tested = await admin.json("POST", `${API}/${channel.id}/test`, {});
        const { result } = JSON.parse(await body(tested)) as { result: { status: string; error: string } };
        expect([kind, result.status]).toEqual([kind, "failed"]);
        expect(result.error).toMatch(/^localhost resolves to a loopback address; /);
      }
      expect(refused.requests).toEqual([]);
    });

    it("delivers to an allow-listed address, and shows only the status of a failure", async () => {
      for (const [kind, , config] of KINDS) {
        const created = await admin.json("POST", API, {
          name: `${kind} allowed`,
          kind,
          config: config(allowed.url),
        });
        expect([kind, created.status]).toEqual([kind, 201]);
        const { notification_channel: channel } = JSON.parse(await body(created)) as {
          notification_channel: { id: string };
        };
        const sent = await admin.json("POST", `${API}/${channel.id}/test`, {});
        expect(JSON.parse(await body(sent))).toEqual({
          result: { status: "sent", status_code: 200, error: null },
        });

        allowed.reply({ status: 500, body: `stack trace ${MARKER} from the internal service` });
        const failed = await admin.json("POST", `${API}/${channel.id}/test`, {});
        expect(JSON.parse(await body(failed))).toEqual({
          result: { status: "failed", status_code: 500, error: "HTTP 500" },
        });
      }
      expect(allowed.requests).toHaveLength(KINDS.length * 2);

      const page = await admin.request("/settings/notifications");
      const csrf = csrfFrom(await body(page));
      const channelId = /\/settings\/notifications\/([0-9A-Z]{26})\/test/.exec(seen.at(-1) ?? "")?.[1] ?? "";
      allowed.reply({ status: 500, body: MARKER });
      await admin.form(
        `/settings/notifications/${channelId}/test`,
        { _csrf: csrf },
        { "HX-Request": "true" },
      );
      const afterTest = await body(await admin.request(`/settings/notifications?tested=${channelId}`));
      expect(afterTest).toContain("HTTP 500");

      const everything = [
        ...seen,
        JSON.stringify(await server.deps.db.select().from(notificationLog)),
        server.deps.logLines.join("\n"),
      ].join("\n");
      expect(everything).not.toContain(MARKER);
    });
  },
  { config: { notifyAllowNetworks: [`${ALLOWED}/32`] } },
);
