#!/usr/bin/env bash
# Fetches the real tools the end-to-end tests run, from Debian's archive, into .cache/tools/,
# without changing the system: private apt lists and cache, `dpkg -x` into folders.
#   restic 0.18.0 (trixie)  -> .cache/tools/restic-0.18/usr/bin/restic
#   restic 0.14.0 (bookworm)-> .cache/tools/restic-0.14/usr/bin/restic
#   rest-server 0.13 (trixie)-> .cache/tools/rest-server/usr/bin/restic-rest-server
#   htpasswd (apache2-utils) -> .cache/tools/htpasswd/usr/bin/htpasswd (+ its libraries)
# Each .deb is checked against the sha256 recorded in this script (the `check` lines below). Idempotent.
# scripts/record-restic-fixtures.mjs runs these binaries to remake the recordings in testdata/restic/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/.cache/tools"
apt_dir="$tools/apt"
marker="$tools/.complete-v1"
[ -f "$marker" ] && exit 0

mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
printf 'deb http://deb.debian.org/debian bookworm main\ndeb http://deb.debian.org/debian trixie main\n' >"$apt_dir/sources.list"
O=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
   -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o Debug::NoLocking=1
   -o APT::Sandbox::User=root)
echo "fetch-tools: updating private apt lists" >&2
apt-get "${O[@]}" -qq update
cd "$apt_dir/debs"
apt-get "${O[@]}" -qq download restic=0.14.0-1+b5 restic=0.18.0-1+b4 restic-rest-server=0.13.0-2 \
  apache2-utils/bookworm libapr1/bookworm libaprutil1/bookworm

check() {
  local file=$1 want=$2
  local got
  got=$(sha256sum "$file" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    echo "fetch-tools: $file has sha256 $got, expected $want" >&2
    exit 1
  fi
}
check restic_0.14.0-1+b5_amd64.deb 9d7e8c210736f3f15ed7cf425ab56aa5259b07d8422b958494bfd4359b5024d1
check restic_0.18.0-1+b4_amd64.deb 4888fb20b272a28b84ac39171b7d7f0d9a58c2aeae51ec28e54684648d66e12c
check restic-rest-server_0.13.0-2_amd64.deb a493b3ddc6a89b8a01a35c4f72ee1aa87ff4cd84041bbd464c5775188495766d

rm -rf "$tools/restic-0.14" "$tools/restic-0.18" "$tools/rest-server" "$tools/htpasswd"
dpkg -x restic_0.14.0-1+b5_amd64.deb "$tools/restic-0.14"
dpkg -x restic_0.18.0-1+b4_amd64.deb "$tools/restic-0.18"
dpkg -x restic-rest-server_0.13.0-2_amd64.deb "$tools/rest-server"
for deb in apache2-utils_*.deb libapr1_*.deb libaprutil1_*.deb; do
  dpkg -x "$deb" "$tools/htpasswd"
done
# htpasswd needs its libraries beside it; a wrapper sets the path so callers run it plainly.
mv "$tools/htpasswd/usr/bin/htpasswd" "$tools/htpasswd/usr/bin/htpasswd.real"
cat >"$tools/htpasswd/usr/bin/htpasswd" <<'WRAP'
#!/usr/bin/env bash
here=$(cd "$(dirname "$0")/../.." && pwd)
LD_LIBRARY_PATH="$here/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/usr/bin/htpasswd.real" "$@"
WRAP
chmod +x "$tools/htpasswd/usr/bin/htpasswd"

"$tools/restic-0.14/usr/bin/restic" version
"$tools/restic-0.18/usr/bin/restic" version
"$tools/rest-server/usr/bin/restic-rest-server" --version
"$tools/htpasswd/usr/bin/htpasswd" -nbB probe probe >/dev/null
rm -rf "$apt_dir/lists" "$apt_dir/cache"
touch "$marker"
