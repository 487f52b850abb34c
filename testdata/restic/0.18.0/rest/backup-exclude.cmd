restic-0.18.0 -r rest:http://alice:alicepass-secret-4@127.0.0.1:53105/alice/0.18.0/ backup --json --tag t2 --host vm --exclude '*.log' /tmp/fleetback-fixtures/src/tree
