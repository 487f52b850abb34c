#!/usr/bin/env bash
# Runs CI's test command (.ci/run) with one core kept busy by a CPU burner for the whole run, to
# prove that no test depends on the machine being idle (issue 32). The burner is a plain busy loop
# in its own process group; it stops when the run ends, however it ends. The exit code is the run's.
# FLEETBACK_LOAD_PROCESSES sets how many burners (default 1: one core of the two here).
set -euo pipefail
cd "$(dirname "$0")/.."

burners=()
# shellcheck disable=SC2317 # called by the EXIT trap
stop_burners() {
  for pid in "${burners[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
}
trap stop_burners EXIT

for _ in $(seq 1 "${FLEETBACK_LOAD_PROCESSES:-1}"); do
  node -e 'for (;;) {}' &
  burners+=("$!")
done
echo "ci-under-load: ${#burners[@]} CPU burner(s) running (pids ${burners[*]})"
started=$(date +%s)
status=0
bash .ci/run || status=$?
echo "ci-under-load: .ci/run exited $status after $(($(date +%s) - started)) s with ${#burners[@]} busy core(s)"
exit "$status"
