restic-0.14.0 -r /tmp/fleetback-fixtures/work/0.14.0/local/repo ls --json dde37704851affd7a0a8ff193cddd1e5580511d531f6fb271dbfef14fb18b6e0 /
