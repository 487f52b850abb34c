/**
 * @module testing/outage-output
 * What real restic printed on stderr while its rest-server was stopped under it and started again
 * (2026-11-27, restic 0.14.0 and 0.18.0, rest-server killed mid-backup; issue 31). A graceful stop
 * (SIGTERM) lets uploads in flight finish first, so the lines then start with the index or
 * snapshot save; a kill cuts the uploads at once.
 */

export const OUTAGE_0_18 = {
  /** The upload in flight when the server went away. */
  cut: 'Save(<data/ad0bfe9eb3>) returned error, retrying after 1.487702717s: Post "http://:***@127.0.0.1:18734/repo/data/ad0bfe9eb37d538cc65f3de88221b9a3f566e05f737a1ec3a6d99c65fdd744ac": readfrom tcp 127.0.0.1:39054->127.0.0.1:18734: write tcp 127.0.0.1:39054->127.0.0.1:18734: use of closed network connection',
  refused:
    'Save(<data/ad0bfe9eb3>) returned error, retrying after 3.893630022s: Post "http://:***@127.0.0.1:18734/repo/data/ad0bfe9eb37d538cc65f3de88221b9a3f566e05f737a1ec3a6d99c65fdd744ac": dial tcp 127.0.0.1:18734: connect: connection refused',
  /** Opening a repository whose server is down (restic retries this for 15 minutes). */
  openRefused:
    'Stat(<config/>) returned error, retrying after 1.114883504s: Head "http://:***@127.0.0.1:18718/repo/config": dial tcp 127.0.0.1:18718: connect: connection refused',
  /** The server came back and the retried upload went through. */
  recovered: "Save(<data/b42f1fedbb>) operation successful after 3 retries",
  /** SIGINT while the server was down: the cleanup cannot delete the lock either. */
  lockRemoveRefused:
    'Remove(<lock/b8149395e6>) returned error, retrying after 1.106172339s: client.Do: Delete "http://:***@127.0.0.1:18730/repo/locks/b8149395e69dba638684bf4104631c9150077008f1bc565511e9f2c96ce78f32": dial tcp 127.0.0.1:18730: connect: connection refused',
  /** Its exit after the agent's SIGINT once the server is back. */
  cancelled:
    '{"message_type":"exit_error","code":1,"message":"Fatal: unable to save snapshot: context canceled"}',
  /** A backup's status line, printed every second whether anything reaches the repository or not. */
  status:
    '{"message_type":"status","seconds_elapsed":55,"percent_done":1,"total_files":30,"files_done":30,"total_bytes":31457280,"bytes_done":31457280}',
  /** `check` refused by the lock the stopped backup left (its PID gone, same host). */
  locked: [
    "unable to create lock in backend: repository is already locked by PID 17541 on vm by root (UID 0, GID 0)",
    "lock was created at 2026-11-27 18:44:07 (52.062416064s ago)",
    "storage ID b8149395",
    "the `unlock` command can be used to remove stale locks",
  ],
  /** `restic unlock` removing it. */
  unlocked: "successfully removed 1 locks",
} as const;

export const OUTAGE_0_14 = {
  cut: 'Save(<data/8276c42a9a>) returned error, retrying after 552.330144ms: client.Post: Post "http://127.0.0.1:18735/repo/data/8276c42a9a45502e5173eb7a9730d97525a001ba6b32ad4998e792703e53dd36": readfrom tcp 127.0.0.1:45154->127.0.0.1:18735: write tcp 127.0.0.1:45154->127.0.0.1:18735: use of closed network connection',
  refused:
    'Save(<data/7727feda16>) returned error, retrying after 873.42004ms: client.Post: Post "http://127.0.0.1:18731/repo/data/7727feda16511781b0359ca74ff0115060c73926d95403ef6622df9b65d7bb20": dial tcp 127.0.0.1:18731: connect: connection refused',
  /** 0.14 gives up on a request after ten tries. */
  gaveUp:
    'Fatal: unable to save snapshot: client.Post: Post "http://127.0.0.1:18721/repo/index/8cb171da3196237fc6da49a42147cedb142aebb5698ba02db47df13c79c2db39": dial tcp 127.0.0.1:18721: connect: connection refused',
  /** 0.14 does not retry opening: a repository down at the start fails the command at once. */
  openRefused:
    'Fatal: unable to open config file: client.Head: Head "http://127.0.0.1:18719/repo/config": dial tcp 127.0.0.1:18719: connect: connection refused',
  locked: [
    "unable to create lock in backend: repository is already locked by PID 17513 on vm by root (UID 0, GID 0)",
    "lock was created at 2026-11-27 18:44:07 (46.953227939s ago)",
    "storage ID 418d205e",
    "the `unlock` command can be used to remove stale locks",
  ],
  unlocked: "successfully removed locks",
} as const;
