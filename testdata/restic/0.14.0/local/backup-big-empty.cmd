restic-0.14.0 -r /tmp/fleetback-fixtures/work/0.14.0/big-1/repo backup --json --tag big --host vm /tmp/fleetback-fixtures/big/empty/tree   # stdout TRIMMED: first 3 + last 2 of 107 lines
