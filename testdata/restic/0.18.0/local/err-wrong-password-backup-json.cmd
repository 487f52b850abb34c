env RESTIC_PASSWORD=wrongpass restic-0.18.0 -r /tmp/fleetback-fixtures/work/0.18.0/local/repo backup --json /tmp/fleetback-fixtures/src/tree
