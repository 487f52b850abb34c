restic-0.14.0 -r rest:http://alice:alicepass-secret-4@127.0.0.1:53105/alice/0.14.0/ init
