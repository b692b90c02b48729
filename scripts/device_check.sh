#!/usr/bin/env bash
# The GPU check: run before resolving any issue that touches kernels, the executor or the solve
# loop (CI sees PoCL only). From the repository root on the machine with the GPU:
#
#   scripts/device_check.sh suite    # the whole suite under pytest -n JOBS (default 12), each test
#                                    # limited by pytest-timeout (TEST_TIMEOUT, default 300 s)
#   scripts/device_check.sh storm    # the thread storm (scripts/thread_storm.py): 16 threads cold
#                                    # and warm (STORM_RUNS each, default 20; the warm runs with 2
#                                    # daemon threads still solving at exit), 24 threads (STORM24_RUNS,
#                                    # default 10), two threads cold (TWO_RUNS, default 20); PARALLEL
#                                    # (default 4) fresh processes of each at a time
#   scripts/device_check.sh all      # both
#   scripts/device_check.sh rest LOG # the tests an earlier suite's LOG (its suite.log copied back
#                                    # into, say, .device/suite_prev.log) does not report as passed,
#                                    # skipped or xfailed: a suite that ran out of SUITE_LIMIT on a
#                                    # slower host finished in a second call
#
# Through the device tool each part fits one call (10 minutes): carry .device and start with
# `source .device/setup.sh && GINKPY_MATRICES=$PWD/.device/matrices scripts/device_check.sh suite`.
# Logs go to $OUT (the device tool's) or ./device_check_logs. The last line is the summary:
#   device check: suite 4400 passed, 0 failed in 412 s | storm 16 cold 5/5, 16 warm 5/5, 24 warm 3/3, 2 cold 10/10, exit <= 0.41 s | OK
# and the exit status is 0 only when everything passed.
set -u
cd "$(dirname "$0")/.."
part=${1:-all}
logs=${OUT:-device_check_logs}
mkdir -p "$logs"
export PYTHONUNBUFFERED=1
python=${PYTHON:-python3}
status=0
summary="device check:"

# the test ids still to run after an earlier suite's log (its -v lines "[gwN] [ P%] OUTCOME id")
rest_ids() {
    "$python" - "$1" <<'PY'
import re, subprocess, sys
done = set()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^\[gw\d+\] \[ *\d+%\] (PASSED|SKIPPED|XFAIL|XPASS) (.*?) ?$", line)
    if m:
        done.add(m.group(2))
out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                     capture_output=True, text=True).stdout
ids = [line for line in out.splitlines() if "::" in line and not line.startswith(" ")]
rest = [i for i in ids if i not in done]
print(f"rest: {len(rest)} of {len(ids)} tests ({len(done)} done in {sys.argv[1]})", file=sys.stderr)
print("\n".join(rest))
PY
}

if [ "$part" = suite ] || [ "$part" = all ] || [ "$part" = rest ]; then
    # one BLAS/OpenMP/PoCL thread per pytest worker: JOBS workers each with a thread per core
    # oversubscribe the host (tests that take 1-2 s on a 2-core machine took 80-135 s in the
    # H100 run of 2026-12-06 without this; set them yourself to compare)
    export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} \
           MKL_NUM_THREADS=${MKL_NUM_THREADS:-1} POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-2}
    start=$(date +%s)
    # -v: a line per test as it ends, so that a run stopped by SUITE_LIMIT says what is left
    # (`rest`); the node ids in a file, read by a one-line runner (no length limit, any id)
    ids=/dev/null
    if [ "$part" = rest ]; then
        ids="$logs/rest_ids.txt"
        rest_ids "${2:?rest needs the log of the earlier suite run}" > "$ids" || exit 1
        [ -s "$ids" ] || { echo "device check: rest: nothing left to run | OK"; exit 0; }
    fi
    timeout "${SUITE_LIMIT:-540}" "$python" -c 'import sys, pytest
ids = [line for line in open(sys.argv[1]).read().splitlines() if line]
sys.exit(pytest.main(sys.argv[2:] + ids))' "$ids" -v -p no:cacheprovider -n "${JOBS:-12}" \
        --timeout "${TEST_TIMEOUT:-300}" -rf --durations=40 > "$logs/suite.log" 2>&1
    code=$?
    seconds=$(( $(date +%s) - start ))
    result=$(grep -E "^[0-9]+ (passed|failed)|^=+ .*(passed|failed).* =+$|[0-9]+ passed" "$logs/suite.log" | tail -n 1 |
             sed -e 's/=//g' -e 's/^ *//' -e 's/ *$//')
    [ "$code" = 124 ] && result="$result (stopped at ${SUITE_LIMIT:-540} s: hung or too slow)"
    grep -E "^(FAILED|ERROR)" "$logs/suite.log" | head -n 20
    summary="$summary suite ${result:-no result} in ${seconds} s |"
    [ "$code" = 0 ] || status=1
fi

if [ "$part" = storm ] || [ "$part" = all ]; then
    storm() {  # name, then thread_storm.py's arguments; its log's last line is its summary
        local name=$1; shift
        "$python" scripts/thread_storm.py --parallel "${PARALLEL:-4}" "$@" > "$logs/storm_$name.log" 2>&1
    }
    "$python" scripts/thread_storm.py --threads 1 --runs 1 --rounds 1 > "$logs/storm_fill-caches.log" 2>&1
    storm 16-cold --threads 16 --runs "${STORM_RUNS:-20}" --cold &
    storm 16-warm --threads 16 --daemons 2 --runs "${STORM_RUNS:-20}" &
    wait
    storm 24-warm --threads 24 --runs "${STORM24_RUNS:-10}" &
    storm 2-cold --threads 2 --runs "${TWO_RUNS:-20}" --cold --kinds cg gmres_captured &
    wait
    summary="$summary storm"
    worst=0
    for name in 16-cold 16-warm 24-warm 2-cold; do
        line=$(tail -n 1 "$logs/storm_$name.log")
        runs=$(echo "$line" | grep -oE "[0-9]+/[0-9]+ runs" | cut -d' ' -f1)
        summary="$summary $name ${runs:-failed},"
        case "$runs" in ""|*/*) [ -n "$runs" ] && [ "${runs%/*}" = "${runs#*/}" ] || status=1 ;; esac
        exit_s=$(echo "$line" | grep -oE "exit <= [0-9.]+" | grep -oE "[0-9.]+$")
        [ -n "$exit_s" ] && worst=$(printf "%s\n%s\n" "$worst" "$exit_s" | sort -g | tail -n 1)
    done
    summary="$summary exit <= $worst s |"
fi
echo "$summary $([ $status = 0 ] && echo OK || echo FAILED)"
exit $status
