/**
 * @module testing/report-mail-channel
 * An email channel for tests that need one to exist, not to deliver: a scheduled report is sent by
 * mail only, so its forms and links appear once such a channel is there.
 */
import type { TestClient } from "./http.js";

/** An SMTP server that is never dialled; the channel is only read, not sent through. */
export const UNSENT_MAIL_CONFIG = {
  host: "smtp.example.org",
  port: 25,
  security: "none",
  from: "f@example.org",
  to: ["a@example.org"],
};

/** Creates the email channel "mail", as `admin`. */
export function addReportMailChannel(admin: TestClient): Promise<Response> {
  return admin.json("POST", "/api/notification-channels", {
    name: "mail",
    kind: "email",
    config: UNSENT_MAIL_CONFIG,
  });
}
