restic-0.14.0 version
