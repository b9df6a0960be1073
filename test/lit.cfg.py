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
config.substitutions.append(("%model_python", config.dpc_model_python))
config.substitutions.append(
    ("%make_models", config.dpc_model_python + " " +
     os.path.join(config.dpc_src_root, "tools", "models", "make_models.py")))

llvm_config.add_tool_substitutions(
    ["dpc", "dpc-opt", "dpc-check-reference", "dpc-compare-plans", "FileCheck", "not", "count",
     "split-file"],
    [config.dpc_tools_dir, config.llvm_tools_dir, "/usr/lib/llvm-19/bin"])
