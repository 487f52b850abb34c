restic-0.18.0 version
