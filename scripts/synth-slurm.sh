#!/usr/bin/env bash
# Offline synthesis on a Slurm cluster: a job array runs the enumeration's
# shards (one array task per shard), then one dependent job merges them and
# runs the phases after it (swizzles, abstraction), writing the same bytes
# as `misaal synth --target x86` on one machine. The shard and merge
# commands are exactly the ones tests/synth_pipeline.rs runs locally; this
# script only schedules them. tests/synth_slurm.rs runs it on a one-node
# cluster (scripts/slurm-local.sh): sharded, killed and resubmitted, failed.
#
#   scripts/synth-slurm.sh [--rerun K[,K...]] [SHARDS] [extra misaal synth options...]
#
# The merge waits for every shard to end, however it ended (afterany), and
# checks them itself: if a shard failed, was cancelled or ran out of time,
# the merge job fails, its log names every unfinished shard, and nothing is
# merged. Each shard checkpoints after every unit and always runs with
# `--resume`, so `--rerun K,...` (same SHARDS and options) submits only
# those shards again, continuing where they stopped, and a new merge.
#
# Options go to the shards and the merge alike (the merge checks by digest
# that they match), except `--rules-out FILE`, which only the merge takes.
#
# Environment: MISAAL (the binary; default target/release/misaal, built
# first with `cargo build --release --bin misaal`), OUT (the report folder
# on a file system every node sees; default reports), TARGET (default x86),
# CPUS (cores per shard; default 4), MERGE_CPUS (cores of the merge job,
# whose abstraction phase is parallel too; default CPUS), TIME (per task;
# default 02:00:00), SBATCH_EXTRA (more sbatch options for every job, e.g.
# "--partition=cpu --account=me"). The jobs run in the folder sbatch is
# called from, where the verdict cache (.misaal-cache/) lives: call it from
# the checkout, on the shared file system.
set -euo pipefail

die() { echo "synth-slurm: $*" >&2; exit 2; }

RERUN=""
if [[ "${1:-}" == --rerun ]]; then
    [[ $# -ge 2 ]] || die "--rerun needs a list of shard numbers, e.g. --rerun 3,7"
    RERUN="$2"
    shift 2
elif [[ "${1:-}" == --rerun=* ]]; then
    RERUN="${1#--rerun=}"
    shift
fi
SHARDS="${1:-16}"
shift || true
MISAAL="${MISAAL:-target/release/misaal}"
OUT="${OUT:-reports}"
TARGET="${TARGET:-x86}"
CPUS="${CPUS:-4}"
MERGE_CPUS="${MERGE_CPUS:-$CPUS}"
TIME="${TIME:-02:00:00}"

command -v sbatch >/dev/null || die "sbatch not found (this script needs a Slurm cluster; scripts/slurm-local.sh starts a one-node one)"
[[ -x "$MISAAL" ]] || die "$MISAAL is not built (cargo build --release --bin misaal)"
[[ "$SHARDS" =~ ^[1-9][0-9]*$ ]] || die "SHARDS must be a positive number, not '$SHARDS'"
[[ "$CPUS" =~ ^[1-9][0-9]*$ ]] || die "CPUS must be a positive number, not '$CPUS'"
[[ "$MERGE_CPUS" =~ ^[1-9][0-9]*$ ]] || die "MERGE_CPUS must be a positive number, not '$MERGE_CPUS'"
[[ "$TARGET" =~ ^[a-z0-9_]+$ ]] || die "TARGET must be a target name (x86, arm, hvx), not '$TARGET'"
ARRAY="0-$((SHARDS - 1))"
if [[ -n "$RERUN" ]]; then
    [[ "$RERUN" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--rerun takes shard numbers separated by commas, not '$RERUN'"
    IFS=, read -ra rerun_list <<<"$RERUN"
    for k in "${rerun_list[@]}"; do
        ((10#$k < SHARDS)) || die "--rerun $RERUN: shard $k is not one of 0..$((SHARDS - 1)) (SHARDS is $SHARDS)"
    done
    ARRAY="$RERUN"
fi

# --rules-out is the merge's alone: a shard writes no ruleset.
SHARD_OPTS=()
MERGE_OPTS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rules-out)
            [[ $# -ge 2 ]] || die "--rules-out needs a file"
            MERGE_OPTS+=("$1" "$(realpath -m -- "$2")")
            shift 2
            ;;
        --rules-out=*)
            MERGE_OPTS+=(--rules-out "$(realpath -m -- "${1#--rules-out=}")")
            shift
            ;;
        --shard | --shard=* | --shards | --shards=* | --out-dir | --out-dir=* | --resume | --phase | --phase=* | --target | --target=* | --jobs | --jobs=* | merge)
            die "$1 is set by this script (SHARDS, OUT, TARGET, CPUS), not an extra option"
            ;;
        *)
            SHARD_OPTS+=("$1")
            MERGE_OPTS+=("$1")
            shift
            ;;
    esac
done

# Absolute paths: a job may start in another folder than this one.
MISAAL="$(realpath -- "$MISAAL")"
mkdir -p "$OUT/slurm"
OUT="$(realpath -- "$OUT")"

# Options are passed through quoted, so the shards and the merge see the
# same enumeration configuration.
printf -v shard_q ' %q' "${SHARD_OPTS[@]+"${SHARD_OPTS[@]}"}"
printf -v merge_q ' %q' "${MERGE_OPTS[@]+"${MERGE_OPTS[@]}"}"
printf -v misaal_q '%q' "$MISAAL"
printf -v out_q '%q' "$OUT"

# One log per shard and submission (shard-K.JOB.log), so a resubmitted
# shard's log does not overwrite the one that says why it stopped.
# shellcheck disable=SC2086
array_id=$(sbatch --parsable ${SBATCH_EXTRA:-} \
    --job-name=misaal-synth-shard --array="$ARRAY" \
    --cpus-per-task="$CPUS" --time="$TIME" --requeue \
    --output="$OUT/slurm/shard-%a.%A.log" \
    --wrap="$misaal_q synth --target $TARGET --shard \${SLURM_ARRAY_TASK_ID}/$SHARDS --resume --jobs $CPUS --out-dir $out_q$shard_q")
array_id="${array_id%%;*}"

# afterany, not afterok: with afterok a failed shard would leave the merge
# pending forever; this way it runs, finds the unfinished shards, and fails
# naming them (misaal synth merge checks every shard before writing).
# shellcheck disable=SC2086
merge_id=$(sbatch --parsable ${SBATCH_EXTRA:-} \
    --job-name=misaal-synth-merge --dependency="afterany:$array_id" \
    --cpus-per-task="$MERGE_CPUS" --time="$TIME" \
    --output="$OUT/slurm/merge.%j.log" \
    --wrap="$misaal_q synth --target $TARGET merge --shards $SHARDS --jobs $MERGE_CPUS --out-dir $out_q$merge_q")
merge_id="${merge_id%%;*}"

echo "submitted shards $ARRAY of $SHARDS as array job $array_id and the merge as job $merge_id"
echo "logs: $OUT/slurm/shard-K.$array_id.log and $OUT/slurm/merge.$merge_id.log"
echo "if the merge fails, its log names the unfinished shards: resubmit them with $0 --rerun K,... $SHARDS (same options)"
