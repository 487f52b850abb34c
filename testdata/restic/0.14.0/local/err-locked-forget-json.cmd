restic-0.14.0 -r /tmp/fleetback-fixtures/work/0.14.0/local/repo forget --json --keep-last 1
