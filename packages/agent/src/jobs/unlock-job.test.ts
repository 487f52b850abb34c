import type { CommandRunUnlock } from "@fleetback/protocol";
import { describe, expect, it } from "vitest";
import { ADMIN_PASSWORD, fixture, linesOf, resticCalls, runJobForTest } from "../testing/job-run.js";
import { NO_ADMIN_CREDENTIALS_ERROR } from "./repository-job.js";
import { createUnlockJob } from "./unlock-job.js";

const ADMIN = { url: "/srv/repo", password: ADMIN_PASSWORD };
const command: CommandRunUnlock = {
  job_id: "01M807SKJ8H7QEZZS1A0ZWSK9T",
  kind: "unlock",
  requires_admin_creds: true,
};

describe("unlock", () => {
  it("needs the admin slot", async () => {
    const ran = await runJobForTest(createUnlockJob, command, { replay: () => fixture("0.14.0", "unlock") });
    expect(ran.outcome).toEqual({ status: "failed", exit_code: null, error: NO_ADMIN_CREDENTIALS_ERROR });
    expect(ran.calls).toEqual([]);
  });

  it.each(["0.14.0", "0.18.0"] as const)(
    "%s: runs `unlock` with admin credentials and logs its text",
    async (version) => {
      const ran = await runJobForTest(createUnlockJob, command, {
        replay: () => fixture(version, "locked-unlock"),
        admin: ADMIN,
        version,
      });
      expect(ran.outcome).toEqual({ status: "succeeded", exit_code: 0 });
      const [unlock] = resticCalls(ran);
      expect(unlock?.args).toEqual(["--cache-dir", "/state/cache", "unlock"]);
      expect(unlock?.env.RESTIC_PASSWORD).toBe(ADMIN_PASSWORD);
      expect(linesOf(ran, "stdout")).toEqual(version === "0.14.0" ? ["successfully removed locks"] : []);
      expect(ran.stats).toEqual([]);
      expect(ran.reports).toEqual([]);
    },
  );
});
