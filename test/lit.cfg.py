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

llvm_config.use_default_substitutions()
config.substitutions.append(("%models", config.dpc_models_dir))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%dpc_src", config.dpc_src_root))
config.substitutions.append(("%model_python", config.dpc_model_python))
config.substitutions.append(
    ("%make_models", config.dpc_model_python + " " +
     os.path.join(config.dpc_src_root, "tools", "models", "make_models.py")))

llvm_config.add_tool_substitutions(
    ["dpc", "dpc-opt", "dpc-check-reference", "dpc-compare-plans",
     "dpc-make-test-plan", "FileCheck", "not", "count",
     "split-file"],
    [config.dpc_tools_dir, config.llvm_tools_dir, "/usr/lib/llvm-19/bin"])

# The CUDA backend's GPU tests (REQUIRES: cuda-gpu) need a GPU this runtime
# can use; dpc-cuda-probe, built with the backend, says whether there is one
# and, if not, why: the reason is printed, so skipped tests say why.
cuda_probe = os.path.join(config.dpc_tools_dir, "dpc-cuda-probe")
if os.path.exists(cuda_probe):
    import subprocess
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
