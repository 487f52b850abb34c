/**
 * @module testing/suite-receivers
 * A real webhook receiver and a real SMTP server shared by the tests of one suite: started
 * before its first test and closed after its last.
 */
import { afterAll, beforeAll } from "vitest";
import { type HttpReceiver, startHttpReceiver } from "./http-receiver.js";
import { type SmtpReceiver, startSmtpReceiver } from "./smtp-receiver.js";

export interface SuiteReceivers {
  webhook: HttpReceiver;
  smtp: SmtpReceiver;
  /** Forgets what both have received so far. */
  clear(): void;
}

/**
 * Call at a suite's top level, before hooks that use the receivers after its tests (they close
 * last); the fields are set once its tests run. `smtpLogin` makes the SMTP server ask for one.
 */
export function useSuiteReceivers(smtpLogin: Parameters<typeof startSmtpReceiver>[0] = {}): SuiteReceivers {
  const receivers = {
    clear() {
      receivers.webhook.requests.length = 0;
      receivers.smtp.messages.length = 0;
    },
  } as SuiteReceivers;
  beforeAll(async () => {
    receivers.webhook = await startHttpReceiver();
    receivers.smtp = await startSmtpReceiver(smtpLogin);
  });
  afterAll(async () => {
    await receivers.webhook.close();
    await receivers.smtp.close();
  });
  return receivers;
}
