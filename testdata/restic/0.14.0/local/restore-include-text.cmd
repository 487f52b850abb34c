restic-0.14.0 -r /tmp/fleetback-fixtures/work/0.14.0/local/repo restore dde37704 --target /tmp/fleetback-fixtures/work/0.14.0/local/restore-text --include /tmp/fleetback-fixtures/src/tree/docs
