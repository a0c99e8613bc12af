#!/usr/bin/env bash
# Offline synthesis on a Slurm cluster: a job array runs the enumeration's
# shards (one array task per shard), then one dependent job merges them and
# runs the phases after it (swizzles, abstraction), writing the same bytes
# as `misaal synth --target x86` on one machine. The shard and merge
# commands are exactly the ones tests/synth_pipeline.rs runs locally; this
# script only schedules them. It cannot run on a machine without Slurm.
#
#   scripts/synth-slurm.sh [SHARDS] [extra misaal synth options...]
#
# Environment: MISAAL (the binary; default target/release/misaal, built
# first with `cargo build --release --bin misaal`), OUT (the report folder
# on a file system every node sees; default reports), TARGET (default x86),
# CPUS (cores per shard; default 4), TIME (per task; default 02:00:00),
# SBATCH_EXTRA (more sbatch options, e.g. "--partition=cpu --account=me").
# Each shard checkpoints after every unit: a preempted or failed task is
# resubmitted with `--resume` (the array task below always passes it, so a
# requeue continues where it stopped; a fresh OUT starts from nothing).
set -euo pipefail

SHARDS="${1:-16}"
shift || true
EXTRA=("$@")
MISAAL="${MISAAL:-target/release/misaal}"
OUT="${OUT:-reports}"
TARGET="${TARGET:-x86}"
CPUS="${CPUS:-4}"
TIME="${TIME:-02:00:00}"

command -v sbatch >/dev/null || { echo "synth-slurm: sbatch not found (this script needs a Slurm cluster)" >&2; exit 2; }
[[ -x "$MISAAL" ]] || { echo "synth-slurm: $MISAAL is not built (cargo build --release --bin misaal)" >&2; exit 2; }
[[ "$SHARDS" =~ ^[1-9][0-9]*$ ]] || { echo "synth-slurm: SHARDS must be a positive number, not $SHARDS" >&2; exit 2; }
mkdir -p "$OUT/slurm"

# Options are passed through quoted, so the shards and the merge see the
# same enumeration configuration (the merge checks it by digest).
printf -v extra_q ' %q' "${EXTRA[@]+"${EXTRA[@]}"}"

# shellcheck disable=SC2086
array_id=$(sbatch --parsable ${SBATCH_EXTRA:-} \
    --job-name=misaal-synth-shard --array="0-$((SHARDS - 1))" \
    --cpus-per-task="$CPUS" --time="$TIME" --requeue \
    --output="$OUT/slurm/shard-%a.log" \
    --wrap="$(printf '%q' "$MISAAL") synth --target $TARGET --shard \${SLURM_ARRAY_TASK_ID}/$SHARDS --resume --jobs $CPUS --out-dir $(printf '%q' "$OUT")$extra_q")

# The merge runs only when every shard succeeded (afterok on the array).
# shellcheck disable=SC2086
merge_id=$(sbatch --parsable ${SBATCH_EXTRA:-} \
    --job-name=misaal-synth-merge --dependency="afterok:$array_id" \
    --cpus-per-task="$CPUS" --time="$TIME" \
    --output="$OUT/slurm/merge.log" \
    --wrap="$(printf '%q' "$MISAAL") synth --target $TARGET merge --shards $SHARDS --jobs $CPUS --out-dir $(printf '%q' "$OUT")$extra_q")

echo "submitted shards as array job $array_id (0-$((SHARDS - 1))) and the merge as job $merge_id"
echo "logs: $OUT/slurm/; the ruleset: rulesets/${TARGET}_synth.egg once job $merge_id ends"
