#!/usr/bin/env bash
# The tests whose outcome could depend on timing (concurrency, faults, interrupts, the
# real desktop), run ROUNDS times (default 5) beside two CPU-bound busy loops: a suite
# that passes here does not pass by luck. Run it after changing the build's processes
# or threads, or a test that waits for something; see README, "Development".
#   bash tests/stress.sh            # with .venv-test from .ci/run
#   ROUNDS=2 PYTHON=python3 bash tests/stress.sh -k parallel
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-.venv-test/bin/python}"
rounds="${ROUNDS:-5}"

busy=()
for _ in 1 2; do
    # bounded: a stress run killed before its trap still frees the CPU in time
    timeout 7200 sh -c 'while :; do :; done' &
    busy+=("$!")
done
trap 'kill "${busy[@]}" 2>/dev/null || true' EXIT

tests=(
    tests/core/test_parallel.py tests/builder/test_early_plans.py tests/builder/test_faults.py
    tests/builder/test_integrity.py tests/cli/test_entry.py tests/cli/test_quick.py
    tests/card/test_desktop.py tests/card/test_desktop_rich.py tests/test_push_desktop.py
)
for round in $(seq "$rounds"); do
    echo "--- round $round of $rounds, beside two busy loops"
    "$python" -m pytest -p no:cacheprovider -q "${tests[@]}" "$@"
done
echo "--- $rounds rounds passed under load"
