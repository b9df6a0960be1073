#!/usr/bin/env bash
# Runs every fuzz target of a libFuzzer build (tools/setup.sh fuzz):
#   fuzz/run.sh BUILD_DIR SECONDS [TARGET...]   each for SECONDS; what it
#       learns is kept in BUILD_DIR/fuzz-corpus/TARGET for the next run
#   fuzz/run.sh BUILD_DIR ci [TARGET...]        each for the number of inputs
#       fuzz/ci-runs gives it, from an empty learned corpus: what CI runs
# Each starts from its seeds (fuzz/corpus/TARGET) and every input that ever
# failed (fuzz/regressions/TARGET), from a fixed seed. A finding is written to
# BUILD_DIR/fuzz-findings/TARGET/ and fails the run: fix it, then copy the
# input into fuzz/regressions/TARGET/, which ctest replays on every build.
set -uo pipefail

fuzz=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage="usage: fuzz/run.sh BUILD_DIR SECONDS|ci [TARGET...]"
build=${1:?$usage}
budget=${2:?$usage}
shift 2
if [[ $budget != ci && ! $budget =~ ^[0-9]+$ ]]; then
  echo "$usage" >&2
  exit 2
fi
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(onnx-import onnx-compile plan-loader checkpoint npy idx)
fi

# Leaks are findings too: each input must free what it allocates.
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons a new slab in the
# instrumented copies of its inline functions and unpoisons it in its
# allocations; Debian's uninstrumented libMLIR allocates from slabs the
# instrumented copy (which the linker may pick) poisoned, a false
# use-after-poison in MLIRContext's construction. ASan's own checks stay.
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:allow_user_poisoning=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The targets write their inputs as files: keep them off the disk.
scratch=$(mktemp -d "${XDG_RUNTIME_DIR:-/dev/shm}/dpc-fuzz.XXXXXX" 2>/dev/null ||
  mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch

failed=()
for target in "${targets[@]}"; do
  findings=$build/fuzz-findings/$target
  log=$build/fuzz-$target.log
  if [[ $budget == ci ]]; then
    runs=$(awk -v t="$target" '$1 == t {print $2}' "$fuzz/ci-runs")
    if [[ -z $runs ]]; then
      echo "fuzz: $target has no count in $fuzz/ci-runs" >&2
      exit 2
    fi
    limits=(-runs="$runs" -max_total_time=300)
    corpus=$scratch/corpus-$target
    echo "fuzz: $target for $runs inputs (log: $log)"
  else
    limits=(-max_total_time="$budget")
    corpus=$build/fuzz-corpus/$target
    echo "fuzz: $target for ${budget}s (log: $log)"
  fi
  mkdir -p "$corpus" "$findings"
  # -timeout: an input that takes 10 s is a hang; -rss_limit_mb: one that
  # needs 2 GiB is unbounded allocation from a small file.
  # A fixed seed: a run explores what the same run explored before, so
  # CI repeats what was checked here and a new finding comes from a change.
  if "$build/bin/dpc-fuzz-$target" "${limits[@]}" -timeout=10 \
    -seed="${DPC_FUZZ_SEED:-1}" \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$corpus" "$fuzz/corpus/$target" \
    "$fuzz/regressions/$target" >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^Done' "$log" | tail -1 |
      sed "s/^/fuzz: $target: /"
  else
    echo "fuzz: $target: FINDING; the end of its log:" >&2
    tail -30 "$log" >&2
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]}: inputs in $build/fuzz-findings/" >&2
  exit 1
fi
echo "fuzz: no findings"
