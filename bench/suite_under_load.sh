#!/usr/bin/env bash
# The whole suite as CI runs it (.ci/run on a clean clone of HEAD) while two busy loops keep both
# cores of a 2-core machine busy; prints the wall time and the result of each run.
#   bench/suite_under_load.sh [RUNS] [BURNERS]     (defaults: 3 runs, 2 burners; 0 burners: idle)
set -uo pipefail
runs=${1:-3}
burners=${2:-2}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d -t ck-suite-under-load-XXXX)
chmod 755 "$work"  # the ssh-placed kernel runs as another user, from the clone's venv
git clone -q "$repo" "$work/clone"
pids=()
for _ in $(seq 1 "$burners"); do python3 -c "while True: pass" & pids+=($!); done
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
for run in $(seq 1 "$runs"); do
  start=$(date +%s)
  (cd "$work/clone" && .ci/run) > "$work/run-$run.log" 2>&1
  code=$?
  summary=$(grep -E "^=+ .*(passed|failed|error).* in " "$work/run-$run.log" | tail -1)
  echo "run $run: exit $code after $(( $(date +%s) - start )) s with $burners busy loop(s): $summary (log: $work/run-$run.log)"
done
