import { describe, expect, it } from "vitest";
import { createLogger } from "./log.js";

describe("logger redaction", () => {
  it("censors credential fields wherever our objects carry them", () => {
    const lines: string[] = [];
    const log = createLogger("info", { write: (line: string) => lines.push(line) });
    log.info(
      {
        password: "Canary-1",
        repository: { url: "rest:http://h/", password: "Canary-2", login_password: "Canary-6" },
        login_password: "Canary-7",
        req: { headers: { authorization: "Bearer Canary-3", cookie: "fleetback_session=Canary-4" } },
        body: { token: "Canary-5" },
      },
      "event",
    );
    const text = lines.join("");
    for (const canary of [
      "Canary-1",
      "Canary-2",
      "Canary-3",
      "Canary-4",
      "Canary-5",
      "Canary-6",
      "Canary-7",
    ]) {
      expect(text).not.toContain(canary);
    }
    expect(text).toContain("rest:http://h/");
  });
});
