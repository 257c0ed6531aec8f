#!/usr/bin/env bash
# Fuzz smoke run for CI: every atheris target for a fixed number of runs from the seeds,
# each capped at FUZZ_SECONDS of wall time (whichever comes first).
# Fails (non-zero exit) on any crash, uncaught exception, >10 s input or >2 GB RSS, and
# prints where libFuzzer wrote the failing input. Needs `pip install atheris`.
#
#   fuzz/smoke.sh                   # 20000 runs or 10 s per target, seed 1
#   FUZZ_RUNS=200000 FUZZ_SECONDS=300 FUZZ_SEED=0 fuzz/smoke.sh   # longer, random seed
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python}
runs=${FUZZ_RUNS:-20000}
seed=${FUZZ_SEED:-1}
seconds=${FUZZ_SECONDS:-10}
work=$(mktemp -d "${TMPDIR:-/tmp}/okfx-fuzz.XXXXXX")

for target in frontmatter links; do
    mkdir -p "$work/$target"
    echo "fuzz_$target: $runs runs or ${seconds}s (seed $seed)"
    if ! "$python" "fuzz/fuzz_$target.py" -runs="$runs" -max_total_time="$seconds" \
        -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=0 \
        -artifact_prefix="$work/$target/" "$work/$target" "fuzz/seeds/$target" \
        >"$work/$target.log" 2>&1; then
        grep -v '^#[0-9]' "$work/$target.log" | tail -40
        echo "fuzz_$target FAILED; input and log kept in $work" >&2
        exit 1
    fi
    grep -E '^Done [0-9]+ runs' "$work/$target.log" || true
done
rm -rf "$work"
