/**
 * @module anomaly
 * Backups far outside their group's baseline (issue 33): the pure judgement; raising the alert and
 * holding deletions are the caller's.
 */
export { type AnomalyVerdict, BACKUP_ANOMALY_THRESHOLDS, judgeBackup } from "./backup-anomaly.js";
export type { BackupBaseline } from "./backup-baseline.js";
export { type BackupFacts, backupFactsOf, filesRemovedSince } from "./backup-facts.js";
