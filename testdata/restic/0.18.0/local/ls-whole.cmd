restic-0.18.0 -r /tmp/fleetback-fixtures/work/0.18.0/local/repo ls --json d2bec9aed4bf51d16cd0a438317dff948b93c57671d2023c1b7c6e9b9b4e97e7
