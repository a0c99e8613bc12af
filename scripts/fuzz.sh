#!/usr/bin/env bash
# Runs one cargo-fuzz target for SECONDS on one core, niced, with debug
# assertions on, continuing from the committed grown corpus
# fuzz/corpus/TARGET (new finds are written there) and seeding from the
# project's own files of that format (copied to fuzz/seeds/TARGET).
#
#   scripts/fuzz.sh TARGET [SECONDS] [extra libFuzzer flags...]
#   scripts/fuzz.sh TARGET min     # minimise fuzz/corpus/TARGET (not while it runs)
#   TARGET: sema | stmt | egg | baseline | manifest
#
# Needs scripts/fuzz-setup.sh once. The log goes to fuzz/logs/TARGET-*.log,
# and its final stats (seconds, executions) are printed at the end; crashing
# inputs land in fuzz/artifacts/TARGET/. A crash, once fixed, belongs in
# fuzz/regressions/TARGET/ (replayed by tests/fuzz_regressions.rs).
# The whole script is one function, read before it runs: editing this file
# during a run does not derail the run.
main() {
    set -euo pipefail
    ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    target="${1:?usage: scripts/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]}"
    secs="${2:-1800}"
    shift $(( $# >= 2 ? 2 : 1 ))
    cd "$ROOT"

    seeds=()
    case "$target" in
        sema) max_len=16384
              seeds=(isa/specs/*/*.sema isa/tests/pass/*.sema isa/tests/fail/*.sema frontends/halide/*.sema) ;;
        stmt) max_len=16384
              seeds=(benchmarks/stmt/*.stmt frontends/src/stmt/samples/*.stmt frontends/tests/fail/*.stmt) ;;
        egg) max_len=8192
              seeds=(rulesets/*.egg tests/broken-rules/*.egg tests/rule-load-errors/*.egg) ;;
        baseline) max_len=4096
              seeds=(datalog/baselines/*.csv) ;;
        manifest) max_len=8192
              seeds=(benchmarks/manifest.json) ;;
        *) echo "fuzz.sh: unknown target \`$target\` (sema, stmt, egg, baseline, manifest)" >&2; exit 2 ;;
    esac

    seed_dir="$ROOT/fuzz/seeds/$target"
    corpus="$ROOT/fuzz/corpus/$target"
    artifacts="$ROOT/fuzz/artifacts/$target"
    rm -rf "$seed_dir"
    mkdir -p "$seed_dir" "$corpus" "$ROOT/fuzz/logs" "$artifacts"
    for f in "${seeds[@]}"; do
        [ -f "$f" ] && cp "$f" "$seed_dir/$(echo "$f" | tr '/' '_')"
    done
    # Earlier crashes seed too: their neighbourhood is where bugs were.
    # (README.md in a regression folder is its note, not an input.)
    for f in fuzz/regressions/"$target"/*; do
        if [ -f "$f" ] && [ "$(basename "$f")" != README.md ]; then cp "$f" "$seed_dir/"; fi
    done

    if [ "$secs" = min ]; then
        # Keeps of the grown corpus only the inputs that add coverage beyond
        # the seeds (which every run loads anyway): libFuzzer's merge into a
        # folder that already holds the seeds, which are then taken out.
        # Inputs are cut to 4 KiB so the committed corpus stays small (the
        # stmt corpus: 1.6 MB instead of 6.9 MB, 80% of the new edges);
        # runs grow them again up to the format's max_len.
        nice -n 19 cargo +nightly fuzz build -a -s none "$target"
        local bin="$ROOT/fuzz/target/x86_64-unknown-linux-gnu/release/$target"
        local tmp="$ROOT/fuzz/seeds/$target.min"
        rm -rf "$tmp"
        mkdir -p "$tmp"
        cp "$seed_dir"/* "$tmp"/
        nice -n 19 "$bin" -merge=1 -timeout=10 -rss_limit_mb=2048 -max_len=4096 "$tmp" "$corpus" \
            >"$ROOT/fuzz/logs/$target-min-$(date -u +%Y%m%dT%H%M%SZ).log" 2>&1
        for f in "$seed_dir"/*; do rm -f "$tmp/$(basename "$f")"; done
        rm -rf "$corpus"
        mv "$tmp" "$corpus"
        echo "fuzz.sh: $target corpus minimised to $(ls "$corpus" | wc -l) files, $(du -sh "$corpus" | cut -f1)"
        return 0
    fi

    log="$ROOT/fuzz/logs/$target-$(date -u +%Y%m%dT%H%M%SZ).log"
    echo "fuzz.sh: $target for ${secs}s, log $log"
    dict=()
    [ -f "$ROOT/fuzz/dicts/$target.dict" ] && dict=(-dict="$ROOT/fuzz/dicts/$target.dict")
    status=0
    # -a: debug assertions (and overflow checks) stay on while fuzzing.
    # -s none: no sanitizer; this is safe Rust, and ASan would slow it down.
    # -fork=1 with -ignore_*: one worker process at a time that is restarted
    # after a crash, timeout or OOM, so a run of SECONDS finds more than its
    # first crash; each is saved in fuzz/artifacts/TARGET/.
    nice -n 19 cargo +nightly fuzz run -a -s none "$target" "$corpus" "$seed_dir" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
        -print_final_stats=1 -artifact_prefix="$artifacts/" \
        -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 "${dict[@]}" "$@" \
        >"$log" 2>&1 || status=$?
    # The last status line: `#EXECS: cov: .. crash/timeout/oom ..: C/T/O time: SECONDSs`.
    grep -E '^#[0-9]+: cov' "$log" | tail -1 || true
    grep -E '^stat::|^INFO: exiting|^INFO: fuzzed for' "$log" || true
    ls "$artifacts" | sed 's/^/artifact: /' 
    exit "$status"
}
main "$@"
