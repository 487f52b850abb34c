restic-0.18.0 -r /tmp/fleetback-fixtures/work/0.18.0/big-1/repo backup --json --tag big --host vm /tmp/fleetback-fixtures/big/content/tree   # stdout TRIMMED: first 3 + last 2 of 65 lines
