# lit configuration for tfm's .mlir tests, which live beside the code they
# test under compiler/lib. Loaded from the generated lit.site.cfg.py, which
# says where tfm-opt and FileCheck are.
import os

import lit.formats

config.name = "tfm"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tfm_obj_root, "compiler", "lit")

# tfm-opt first, then FileCheck/not from LLVM 22.
config.environment["PATH"] = os.pathsep.join(
    [config.tfm_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)
