restic-0.18.0 -r /tmp/fleetback-fixtures/work/0.18.0/local/repo check
