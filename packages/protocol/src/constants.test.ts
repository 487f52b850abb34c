/**
 * @module constants.test
 * Contract constants: the literals other teams rely on.
 */
import { describe, expect, it } from "vitest";
import { CommandRunKinds } from "./command-run.js";
import { Keep } from "./common.js";
import {
  ACTIVE_JOB_STATUSES,
  AGENT_DIR_MAX_LENGTH,
  AGENT_DIRS_MAX,
  AGENT_DIRS_PROTOCOL_VERSION,
  AGENT_KINDS,
  CATALOG_ACK_STATUSES,
  CATALOG_DELTA_MAX_PARTS,
  CATALOG_PART_ENTRIES_MAX,
  CATALOG_PATH_MAX_LENGTH,
  CATALOG_PROTOCOL_VERSION,
  CATALOG_TAG_MAX_LENGTH,
  CLOSE_CODES,
  CROSS_HOST_RESTORE_PROTOCOL_VERSION,
  DRILL_MAX_SAMPLE_FILES,
  DRILL_PROTOCOL_VERSION,
  ERROR_CODES,
  FINISHED_JOB_STATUSES,
  FORGET_HOSTS_MAX,
  HOSTNAME_MAX_LENGTH,
  isActiveJobStatus,
  isFatalCloseCode,
  JOB_KINDS,
  JOB_STATUSES,
  KEEP_KEYS,
  MAX_FRAME_BYTES,
  MIN_AGENT_PROTOCOL_VERSION,
  PLATFORM_NAME_MAX_LENGTH,
  PROTOCOL_VERSION,
  RESTORE_ORDER_PROTOCOL_VERSION,
  RESTORE_ORDER_TTL_MS,
  SNAPSHOT_OWNER_PROTOCOL_VERSION,
  SNAPSHOTS_REPORT_MAX_PARTS,
  TREE_CHILD_NAME_MAX_LENGTH,
  TREE_PAGING_PROTOCOL_VERSION,
  UPDATE_RESULT_STATUSES,
  UPDATE_TRIAL_MS,
  VERSION_MAX_LENGTH,
} from "./constants.js";

describe("contract constants", () => {
  it("freezes the literals other teams rely on", () => {
    expect(PROTOCOL_VERSION).toBe(15);
    expect(CATALOG_PROTOCOL_VERSION).toBe(15);
    expect(CATALOG_DELTA_MAX_PARTS).toBe(4096);
    expect(CATALOG_PART_ENTRIES_MAX).toBe(10_000);
    expect(CATALOG_PATH_MAX_LENGTH).toBe(4096);
    expect(CATALOG_TAG_MAX_LENGTH).toBe(255);
    expect(CATALOG_ACK_STATUSES).toEqual(["applied", "resend_full", "refused"]);
    expect(CROSS_HOST_RESTORE_PROTOCOL_VERSION).toBe(14);
    expect(AGENT_DIRS_PROTOCOL_VERSION).toBe(12);
    expect(RESTORE_ORDER_PROTOCOL_VERSION).toBe(13);
    expect(RESTORE_ORDER_TTL_MS).toBe(86_400_000);
    expect(AGENT_DIRS_MAX).toBe(8);
    expect(AGENT_DIR_MAX_LENGTH).toBe(4096);
    expect(SNAPSHOT_OWNER_PROTOCOL_VERSION).toBe(11);
    expect(FORGET_HOSTS_MAX).toBe(16);
    expect(DRILL_PROTOCOL_VERSION).toBe(6);
    expect(DRILL_MAX_SAMPLE_FILES).toBe(100);
    expect(TREE_PAGING_PROTOCOL_VERSION).toBe(4);
    expect(TREE_CHILD_NAME_MAX_LENGTH).toBe(1024);
    expect(HOSTNAME_MAX_LENGTH).toBe(253);
    expect(VERSION_MAX_LENGTH).toBe(64);
    expect(PLATFORM_NAME_MAX_LENGTH).toBe(32);
    expect(UPDATE_TRIAL_MS).toBe(120_000);
    expect(UPDATE_RESULT_STATUSES).toEqual(["restarting", "refused", "rolled_back"]);
    expect(AGENT_KINDS).toEqual(["bundle", "sea"]);
    // Protocol-1 agents (whole snapshot reports only) are still accepted.
    expect(MIN_AGENT_PROTOCOL_VERSION).toBe(1);
    expect(SNAPSHOTS_REPORT_MAX_PARTS).toBe(64);
    expect(MAX_FRAME_BYTES).toBe(1_048_576);
    expect(CLOSE_CODES).toEqual({
      noHello: 4000,
      protocolTooOld: 4001,
      replaced: 4002,
      hostDeleted: 4003,
      tooManyInvalidFrames: 4008,
    });
    expect(Object.values(ERROR_CODES)).toEqual([
      "unauthorised",
      "ErrProtocolTooOld",
      "invalid_message",
      "unknown_type",
      "not_found",
      "host_deleted",
      "internal",
    ]);
  });

  it("treats only protocol-too-old and host-deleted as fatal", () => {
    const fatal = Object.values(CLOSE_CODES).filter(isFatalCloseCode);
    expect(fatal).toEqual([4001, 4003]);
    expect(isFatalCloseCode(1006)).toBe(false);
  });

  it("has active and finished statuses as disjoint subsets of all statuses", () => {
    expect(JOB_STATUSES.filter(isActiveJobStatus)).toEqual([...ACTIVE_JOB_STATUSES]);
    for (const status of FINISHED_JOB_STATUSES) {
      expect(JOB_STATUSES).toContain(status);
      expect(isActiveJobStatus(status)).toBe(false);
    }
    expect(isActiveJobStatus("lost")).toBe(false);
  });

  it("keeps KEEP_KEYS, JOB_KINDS and their schemas in step", () => {
    expect(Object.keys(Keep.properties)).toEqual([...KEEP_KEYS]);
    expect(Object.keys(CommandRunKinds)).toEqual([...JOB_KINDS]);
  });
});
