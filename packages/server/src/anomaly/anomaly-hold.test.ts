import { sourceGroups } from "@fleetback/db";
import { ulid } from "ulidx";
import { afterEach, beforeEach, expect, it } from "vitest";
import { openHoldsOf } from "../holds/deletion-holds.js";
import { seedHost, seedJob } from "../testing/seed.js";
import { createTestDeps, type TestDeps } from "../testing/test-deps.js";
import { holdIfAnomalous } from "./anomaly-hold.js";

let deps: TestDeps;
beforeEach(async () => {
  deps = await createTestDeps();
});
afterEach(async () => {
  await deps.close();
});

const summary = (changed: number, added: number) => ({
  files_new: 1,
  files_changed: changed,
  files_unmodified: 200 - changed,
  total_files_processed: 201,
  data_added: added,
  total_bytes_processed: 4_000_000,
  snapshot_id: "0".repeat(64),
});

async function backup(hostId: string, groupId: string, changed: number, added: number): Promise<string> {
  const job = await seedJob(
    deps,
    { hostId, kind: "backup", actorKind: "schedule", sourceGroupId: groupId },
    { status: "succeeded", summary: summary(changed, added), finishedAt: deps.clock.now() },
  );
  return job.id;
}

it("opens the host's backup_anomaly hold for a backup that rewrote most files, and only for it", async () => {
  const { host } = await seedHost(deps, { name: "files-1" });
  const groupId = ulid();
  await deps.db
    .insert(sourceGroups)
    .values({ id: groupId, hostId: host.id, name: "files", includes: ["/srv"] });
  for (const changed of [3, 5, 4]) {
    await holdIfAnomalous(deps, host.id, await backup(host.id, groupId, changed, 20_000));
  }
  await holdIfAnomalous(deps, host.id, await backup(host.id, groupId, 6, 30_000));
  expect(await openHoldsOf(deps.db, host.id)).toEqual([]);

  const encrypted = await backup(host.id, groupId, 190, 3_900_000);
  await holdIfAnomalous(deps, host.id, encrypted);
  const [hold] = await openHoldsOf(deps.db, host.id);
  expect(hold?.kind).toBe("backup_anomaly");
  expect(hold?.details).toMatchObject({ job_id: encrypted, source_group_id: groupId });
  expect(hold?.reason).toContain("95% of the 201 files of the previous backup changed or disappeared");
});
