restic-0.18.0 -r rest:http://alice:alicepass-secret-4@127.0.0.1:53105/alice/0.18.0/ --json init
