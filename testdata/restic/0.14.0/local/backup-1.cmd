restic-0.14.0 -r /tmp/fleetback-fixtures/work/0.14.0/local/repo backup --json --tag t1 --host vm /tmp/fleetback-fixtures/src/tree
