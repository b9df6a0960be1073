#!/usr/bin/env bash
# Regenerates the input IR of the back end's pass tests: each test runs one
# pass on what dpc-opt prints after the passes before it, here on
# Inputs/mlp.mlir on two devices (so that there are gradient buckets and
# all-reduces). Everything below a test's marker line is replaced.
#   test/codegen/make-inputs.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
opt=${1:?usage: make-inputs.sh BUILD_DIR}/bin/dpc-opt
marker='// ---- input: make-inputs.sh, the output of the passes before ----'
front=(-nn-set-batch=batch=8 '-nn-build-train-step=momentum=0.9'
  '-dpc-partition-data-parallel=devices=cpu:0,cpu:1 split=3,5'
  '-dpc-bucket-gradients=first-bucket-mb=0.0001 bucket-mb=0.001')

# regenerate TEST PASSES...: TEST's input is Inputs/mlp.mlir after PASSES.
regenerate() {
  local test=$here/$1
  shift
  local body
  body=$(sed "/^${marker//\//\\/}\$/q" "$test")
  grep -qxF "$marker" <<<"$body" || { echo "$test: no marker line" >&2; exit 1; }
  { echo "$body"; "$opt" "$here/Inputs/mlp.mlir" "${front[@]}" "$@"; } >"$test.new"
  mv "$test.new" "$test"
}

regenerate schedule-exec-streams.mlir -convert-nn-to-exec
regenerate plan-exec-arena.mlir -convert-nn-to-exec -schedule-exec-streams
regenerate report-exec-memory.mlir -convert-nn-to-exec -schedule-exec-streams \
  -plan-exec-arena
