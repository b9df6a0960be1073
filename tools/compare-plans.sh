#!/usr/bin/env bash
# Compiles every model under test/ (ONNX files and nn-dialect .mlir models)
# with two builds' dpc under several option sets and checks that the plan
# files are byte for byte the same: a refactoring of the compiler must not
# change what it writes.
#   tools/compare-plans.sh BASE_BUILD NEW_BUILD [MODEL_REGEX]
# Prints one line per differing plan (with `dpc inspect` of both) and a
# summary; exits non-zero if any plan differs or one build fails where the
# other does not. A model both builds refuse with the same error counts as
# the same.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
base=${1:?usage: compare-plans.sh BASE_BUILD NEW_BUILD [MODEL_REGEX]}/bin/dpc
new=${2:?usage: compare-plans.sh BASE_BUILD NEW_BUILD [MODEL_REGEX]}/bin/dpc
filter=${3:-.}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Option sets: one device; two devices with small buckets (collectives,
# events); sync-bn; momentum + grad accumulation; AdamW; recomputation
# (which measures memory through the lowering); bf16/auto precision; no
# layouts or fusion; CUDA devices (workspaces).
full_options=(
  "--batch 4"
  "--batch 5 --devices cpu:0,cpu:1 --bucket-mb 0.01"
  "--batch 6 --devices cpu:0,cpu:1,cpu:2 --sync-bn --optimizer adamw"
  "--batch 8 --grad-accum 2 --momentum 0.9"
  "--batch 8 --remat auto"
  "--batch 8 --remat segments=2 --devices cpu:0,cpu:1"
  "--batch 4 --precision auto"
  "--batch 4 --no-layouts --no-fusion"
  "--batch 6 --devices cuda:0,cuda:1 --split 2,4"
)
# The large zoo models: fewer sets, to keep the run short.
zoo_options=(
  "--batch 2"
  "--batch 3 --devices cpu:0,cpu:1 --bucket-mb 1"
  "--batch 4 --remat auto"
)

# Where plans differ: each device's peak and each step's arena and kernel
# count, before -> after.
summarize() { # BASE_PLAN NEW_PLAN
  python3 - "$1" "$2" "$base" "$new" <<'PY'
import json, subprocess, sys
a, b = (json.loads(subprocess.run([dpc, "inspect", plan, "--json"],
                                  capture_output=True, text=True).stdout)
        for plan, dpc in ((sys.argv[1], sys.argv[3]), (sys.argv[2], sys.argv[4])))
for da, db in zip(a["devices"], b["devices"]):
    line = [f"  {da['name']}: peak {da['peak_bytes']} -> {db['peak_bytes']}"]
    for sa, sb in zip(da["steps"], db["steps"]):
        line.append(f"{sa['name']} arena {sa['arena_bytes']} -> {sb['arena_bytes']}"
                    f", kernels {sa['kernels']} -> {sb['kernels']}")
    print("; ".join(line))
PY
}

same=0 differ=0 refused=0
compare() { # NAME MODEL OPTIONS...
  local name=$1 model=$2
  shift 2
  local a=$work/a.plan b=$work/b.plan
  rm -f "$a" "$b"
  local ea eb
  ea=$("$base" compile "$model" "$@" -o "$a" 2>&1)
  local ra=$?
  eb=$("$new" compile "$model" "$@" -o "$b" 2>&1)
  local rb=$?
  if ((ra != 0 || rb != 0)); then
    if ((ra != 0 && rb != 0)) && [[ $ea == "$eb" ]]; then
      refused=$((refused + 1))
      return
    fi
    echo "DIFFER (exit $ra vs $rb): $name $*"
    echo "  base: $ea" | head -3
    echo "  new:  $eb" | head -3
    differ=$((differ + 1))
    return
  fi
  if cmp -s "$a" "$b"; then
    same=$((same + 1))
    return
  fi
  echo "DIFFER: $name $*"
  summarize "$a" "$b"
  differ=$((differ + 1))
}

while IFS= read -r model; do
  [[ $model =~ $filter ]] || continue
  dir=$(dirname "$model")
  local_model=$model
  options=("${full_options[@]}")
  if [[ -e $dir/../zoo.test || $dir == */zoo/* ]]; then
    options=("${zoo_options[@]}")
  fi
  # Zoo exports keep their (stripped) weights in a file the test makes.
  if grep -q stripped.bin "$model" 2>/dev/null; then
    rm -rf "$work/m" && mkdir -p "$work/m"
    cp "$model" "$work/m/$(basename "$model")"
    truncate -s 2G "$work/m/stripped.bin"
    local_model=$work/m/$(basename "$model")
  fi
  for opts in "${options[@]}"; do
    # shellcheck disable=SC2086
    compare "${model#"$root"/}" "$local_model" $opts
  done
done < <(cd "$root" && find test -name '*.onnx' | sort | sed "s|^|$root/|";
         cd "$root" && grep -l 'func.func @forward' -r test --include='*.mlir' |
           sort | sed "s|^|$root/|")

echo "plans: $same identical, $differ differ, $refused refused by both alike"
((differ == 0))
