#!/bin/sh
# Writes the secret files docker-compose.yml mounts under /run/secrets (compose `secrets:`), so no
# secret sits in a container's environment, where `docker inspect` shows it to anyone allowed to
# ask the Docker daemon. A file that exists is kept: running this again changes nothing, and a
# password PostgreSQL already uses is never replaced behind its back.
#   sh deploy/make-secrets.sh [DIR]    DIR defaults to secrets/ next to docker-compose.yml
# Each file is one line. The directory is 0700, so no other user on this machine reaches them;
# the files are 0444 because the containers read their bind mounts as their own users (postgres,
# node), not as the owner here.
set -eu

dir=${1:-"$(dirname "$0")/../secrets"}
umask 077
mkdir -p "$dir"
chmod 0700 "$dir"

# 24 random bytes as hex: URL-safe, so the password goes into the database URL as it is.
random_hex() {
	od -An -N24 -tx1 /dev/urandom | tr -d ' \n'
}

# write NAME VALUE: creates DIR/NAME holding VALUE unless it exists; a rename, so a reader never
# sees half a file.
write() {
	if [ -e "$dir/$1" ]; then
		echo "kept    $dir/$1"
		return 0
	fi
	printf '%s\n' "$2" >"$dir/$1.new"
	chmod 0444 "$dir/$1.new"
	mv "$dir/$1.new" "$dir/$1"
	echo "created $dir/$1"
}

write postgres-password "$(random_hex)"
# The URL the replicas connect with carries the password the postgres service was given: the
# user and database are the compose file's POSTGRES_USER and POSTGRES_DB.
password=$(cat "$dir/postgres-password")
write database-url "postgres://fleetback:$password@postgres:5432/fleetback"
write bootstrap-token "$(random_hex)"
write metrics-token "$(random_hex)"
