#!/usr/bin/env bash
# One-command set-up for a fresh Debian 12 machine: installs what dpc needs
# (idempotently: only missing packages), configures and builds, then runs
# the requested job.
#
#   tools/setup.sh demo    install, build, compile the bundled LeNet and
#                          train it on Fashion-MNIST (the README's first
#                          command)
#   tools/setup.sh test    install, build, run the whole test suite
#   tools/setup.sh build   install and build only
#   tools/setup.sh sanitize  install, build with ASan and UBSan (every
#                          finding fatal) into a build directory of its
#                          own, run the whole test suite there
#   tools/setup.sh fuzz [SECONDS|ci]  install clang, build the fuzz targets
#                          (fuzz/: libFuzzer, ASan, UBSan) into a build
#                          directory of their own, run each for SECONDS
#                          (default 60), or for fuzz/ci-runs' inputs (ci),
#                          from its seeds and regressions
#
# DPC_BUILD_DIR overrides the build directory (default: <repo>/build;
# <repo>/build-sanitize for sanitize, <repo>/build-fuzz for fuzz).
# `build`, `test` and `sanitize` also create the tests' Python environment,
# <build>/test-venv, once: onnxruntime and numpy from PyPI, a second ONNX
# runtime that runs the models `dpc export` writes, and onnx, whose checker
# the differential test of dpc's model checks compares against (pinned:
# a newer checker may refuse more).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
job=${1:-demo}
if [[ $job == sanitize || $job == fuzz ]]; then
  build=${DPC_BUILD_DIR:-$root/build-$job}
else
  build=${DPC_BUILD_DIR:-$root/build}
fi

packages=(
  # Toolchain.
  build-essential cmake ninja-build ccache lld git
  # MLIR 19 with FileCheck and lit.
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools zlib1g-dev
  # Frontend: ONNX (C++ and Debian's python3-onnx for the model zoo).
  libonnx-dev libprotobuf-dev protobuf-compiler python3 python3-onnx
  python3-numpy
  # Runtime: plans, CPU kernels, communicators, data.
  libflatbuffers-dev flatbuffers-compiler libdnnl-dev ocl-icd-opencl-dev
  libgloo-dev libhiredis-dev libibverbs-dev libopenmpi-dev openmpi-bin
  dataset-fashion-mnist
  # The Python module (python/): pybind11 and Python's headers.
  pybind11-dev python3-dev
  # Tests (iproute2: `ip netns`, hosts as network namespaces; python3-venv:
  # the test virtual environment).
  libgtest-dev iproute2 python3-venv
)
if [[ $job == fuzz ]]; then
  # libFuzzer is clang's; Debian 12's clang 14 compiles MLIR 19's headers.
  packages+=(clang-14 libclang-rt-14-dev)
fi

install_packages() {
  local missing=()
  for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed" || missing+=("$package")
  done
  if ((${#missing[@]} == 0)); then
    return
  fi
  echo "setup: installing ${missing[*]}"
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q \
    --no-install-recommends "${missing[@]}"
}

# configure_and_build [CMAKE_ARGS...]; $targets (default: all) to build.
configure_and_build() {
  # A build directory elsewhere (a CI clone) still hits the compiler cache.
  export CCACHE_BASEDIR=$root
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_USE_LINKER=lld "$@"
  cmake --build "$build" ${targets:+--target $targets}
}

# Idempotent: kept while it imports what the tests need.
make_test_venv() {
  local venv=$build/test-venv
  if [[ -x $venv/bin/python ]] &&
    "$venv/bin/python" -c "import numpy, onnxruntime, onnx" 2>/dev/null; then
    return
  fi
  echo "setup: creating $venv (onnxruntime, onnx, numpy)"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q onnxruntime onnx==1.23.2 numpy
}

case $job in
demo)
  install_packages
  configure_and_build
  "$build/bin/dpc" compile "$build/models/lenet_relu.onnx" --batch 256 \
    -o "$build/lenet.plan"
  "$build/bin/dpc" run "$build/lenet.plan" --data fashion-mnist --epochs 10 \
    --metrics "$build/lenet-metrics.jsonl" --plot "$build/lenet.svg"
  ;;
test)
  install_packages
  configure_and_build
  make_test_venv
  ctest --test-dir "$build" --output-on-failure
  ;;
build)
  install_packages
  configure_and_build
  make_test_venv
  ;;
sanitize)
  install_packages
  # -O1 -g1: readable reports, a quicker build (NDEBUG as LLVM was built).
  configure_and_build -DDPC_SANITIZE=address,undefined \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -g1 -DNDEBUG"
  make_test_venv
  # Leaks are findings too (LeakSanitizer, at each process's exit);
  # tools/lsan.supp names the third-party leaks it tolerates, and why.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  # A full unwind: Open MPI's leaks are matched below its unloaded plugins.
  export LSAN_OPTIONS=suppressions=$root/tools/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  ctest --test-dir "$build" --output-on-failure
  ;;
fuzz)
  install_packages
  # Only the fuzz targets and what they link; CUDA's host code is not
  # fuzzed (nvcc does not take clang's sanitizer flags).
  targets=dpc-fuzzers configure_and_build \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DDPC_FUZZ=ON -DDPC_SANITIZE=address,undefined -DDPC_ENABLE_CUDA=OFF \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only -DNDEBUG"
  bash "$root/fuzz/run.sh" "$build" "${2:-60}"
  ;;
*)
  echo "usage: tools/setup.sh [demo|test|build|sanitize|fuzz [SECONDS|ci]]" >&2
  exit 2
  ;;
esac
