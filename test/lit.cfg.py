# -*- Python -*-
import os
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "DPC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "mlp", "lenet", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dpc_obj_root, "test")
# As the runtime's gtests run (runtime/CMakeLists.txt): OpenMP's default
# spin-wait after a parallel region takes the cores that the step's other
# threads (the communication stream, the other devices) need; on a loaded
# 2-core runner a first epoch took 28 s instead of 1 s.
config.environment["OMP_WAIT_POLICY"] = "passive"

llvm_config.use_default_substitutions()
config.substitutions.append(("%models", config.dpc_models_dir))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%dpc_src", config.dpc_src_root))
config.substitutions.append(
    ("%kill_in_write",
     os.path.join(config.dpc_obj_root, "lib", "libdpc_kill_in_write.so")))


def asan_options(*extra):
    """ASAN_OPTIONS=... with the caller's options (the sanitizer suite's
    abort_on_error, say) kept and `extra` appended."""
    return "ASAN_OPTIONS=" + ":".join(
        filter(None, [os.environ.get("ASAN_OPTIONS")] + list(extra)))


# For `env %preload_asan_options LD_PRELOAD=...`: in a sanitizer build ASan
# refuses to start after a preloaded library unless told not to check.
config.substitutions.append(
    ("%preload_asan_options", asan_options("verify_asan_link_order=0")))
config.substitutions.append(("%model_python", config.dpc_model_python))
config.substitutions.append(
    ("%make_models", config.dpc_model_python + " " +
     os.path.join(config.dpc_src_root, "tools", "models", "make_models.py")))

llvm_config.add_tool_substitutions(
    ["dpc", "dpc-opt", "dpc-check-reference", "dpc-check-gradients",
     "dpc-compare-plans",
     "dpc-make-test-plan", "FileCheck", "not", "count",
     "split-file"],
    [config.dpc_tools_dir, config.llvm_tools_dir, "/usr/lib/llvm-19/bin"])

# A second ONNX runtime for the models `dpc export` writes: onnxruntime in
# the test virtual environment that tools/setup.sh creates in the build
# directory (REQUIRES: onnxruntime).
import subprocess


def python_importing(python, modules):
    """`python` if it exists and imports `modules`, else None."""
    if not python or not os.path.exists(python):
        return None
    check = subprocess.run([python, "-c", "import " + ", ".join(modules)],
                           capture_output=True)
    return python if check.returncode == 0 else None


test_venv_python = os.path.join(config.dpc_obj_root, "test-venv", "bin",
                                "python")
if python_importing(test_venv_python, ["onnxruntime", "numpy"]):
    config.available_features.add("onnxruntime")
    config.substitutions.append(("%ort_python", test_venv_python))
else:
    lit_config.note("ONNX export tests (REQUIRES: onnxruntime) skipped: no "
                    "onnxruntime in " + test_venv_python +
                    " (tools/setup.sh build creates it)")

# ONNX's own checker with the schemas of opsets up to 21 (onnx 1.16 or
# newer: the test environment's, from PyPI), for the differential check of
# dpc's model checks (REQUIRES: onnx-checker).
checker_python = next(
    (python for python in (os.environ.get("DPC_ONNX_PYTHON"),
                           test_venv_python)
     if python_importing(python, ["onnx"]) and subprocess.run(
         [python, "-c", "import onnx.defs, sys; "
          "sys.exit(onnx.defs.onnx_opset_version() < 21)"]).returncode == 0),
    None)
if checker_python:
    config.available_features.add("onnx-checker")
    config.substitutions.append(("%onnx_python", checker_python))
else:
    lit_config.note("ONNX checker comparison (REQUIRES: onnx-checker) "
                    "skipped: no onnx 1.16 or newer in " + test_venv_python +
                    " (tools/setup.sh build installs it) or DPC_ONNX_PYTHON")

# PyTorch, where installed (never in CI): DPC_TORCH_PYTHON, else the test
# environment's or Debian's Python (REQUIRES: torch).
torch_python = next(
    (python for python in (os.environ.get("DPC_TORCH_PYTHON"),
                           test_venv_python, "/usr/bin/python3")
     if python_importing(python, ["torch", "numpy"])), None)
if torch_python:
    config.available_features.add("torch")
    config.substitutions.append(("%torch_python", torch_python))
else:
    lit_config.note("PyTorch tests (REQUIRES: torch) skipped: no Python with "
                    "torch (set DPC_TORCH_PYTHON to one)")

# The dpc Python module (python/), where pybind11 was there to build it, run
# by the Python it was built for with PYTHONPATH at the build's package
# (REQUIRES: dpc-python); with PyTorch too where that Python has it
# (REQUIRES: dpc-python-torch).
import glob
dpc_python_path = os.path.join(config.dpc_obj_root, "python")
python_env = "env PYTHONPATH=%s DPC_BINARY=%s " % (
    dpc_python_path, os.path.join(config.dpc_tools_dir, "dpc"))
# In an ASan build the interpreter is not instrumented but the module is:
# ASan's runtime must be the first library loaded, so it is preloaded, and
# leak detection is off for these processes (the interpreter keeps its
# objects alive at exit by design, which LeakSanitizer would report; the
# module's own code runs leak-checked in the dpc tests). The C++ runtime is
# preloaded after it: ASan finds the real __cxa_throw when it starts, and
# Python loads libstdc++ only with the module, so without it the first C++
# exception (any error the module reports) stops in an ASan CHECK.
asan_runtime = getattr(config, "dpc_asan_runtime", "")
python_asan_ok = True
if "address" in getattr(config, "dpc_sanitize", ""):
    if os.path.isabs(asan_runtime) and os.path.exists(asan_runtime):
        python_env += "LD_PRELOAD='%s libstdc++.so.6' %s " % (
            asan_runtime, asan_options("detect_leaks=0"))
    else:
        python_asan_ok = False
        lit_config.note("Python module tests (REQUIRES: dpc-python) skipped: "
                        "the compiler names no shared ASan runtime to "
                        "preload into Python (got '%s')" % asan_runtime)
if python_asan_ok and glob.glob(
        os.path.join(dpc_python_path, "dpc", "_dpc*.so")):
    config.available_features.add("dpc-python")
    config.substitutions.append(
        ("%dpc_python", python_env + config.dpc_python_executable))
    if torch_python:
        config.available_features.add("dpc-python-torch")
        config.substitutions.append(
            ("%dpc_torch_python", python_env + torch_python))
elif python_asan_ok:
    lit_config.note("Python module tests (REQUIRES: dpc-python) skipped: "
                    "no dpc module in " + dpc_python_path +
                    " (apt-get install pybind11-dev, then build)")

# The CUDA backend's GPU tests (REQUIRES: cuda-gpu) need a GPU this runtime
# can use; dpc-cuda-probe, built with the backend, says whether there is one
# and, if not, why: the reason is printed, so skipped tests say why.
cuda_probe = os.path.join(config.dpc_tools_dir, "dpc-cuda-probe")
if os.path.exists(cuda_probe):
    config.available_features.add("cuda-build")
    try:
        probe = subprocess.run([cuda_probe], capture_output=True, text=True,
                               timeout=300)
        probe_line, probe_ok = probe.stdout.strip(), probe.returncode == 0
    except subprocess.TimeoutExpired:
        probe_line, probe_ok = "dpc-cuda-probe timed out", False
    if probe_ok:
        config.available_features.add("cuda-gpu")
        if int(probe_line.split()[0]) >= 2:
            config.available_features.add("cuda-gpus-2")
    else:
        lit_config.note("GPU tests (REQUIRES: cuda-gpu) skipped: " + probe_line)
else:
    lit_config.note("GPU tests (REQUIRES: cuda-gpu) skipped: built without "
                    "the CUDA backend")

# Full and read-only disks (REQUIRES: tmpfs): a small tmpfs, mounted by
# `unshare -rm` in a mount namespace of the test's own (no root needed
# where unprivileged user namespaces are allowed).
import subprocess
tmpfs_probe = subprocess.run(
    ["unshare", "-rm", "sh", "-c",
     "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d && umount $d "
     "&& rmdir $d"], capture_output=True, text=True)
if tmpfs_probe.returncode == 0:
    config.available_features.add("tmpfs")
else:
    lit_config.note("full-disk tests (REQUIRES: tmpfs) skipped: unshare -rm "
                    "cannot mount a tmpfs: " + tmpfs_probe.stderr.strip())

# A sanitizer build (DPC_SANITIZE): ASan reserves terabytes of address
# space, so tests that limit it (ulimit -v) cannot run (UNSUPPORTED: asan).
if "address" in getattr(config, "dpc_sanitize", ""):
    config.available_features.add("asan")
