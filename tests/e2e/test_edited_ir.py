"""tfmc compiles tfm IR as written: aidreams260k's IR, emitted by tfmc
--emit-mlir, has one kernel's schedule changed by hand (decode_ffn_out:
fast -> plain); tfmc compiles the edited file, manifest.json records that
kernel's new schedule and every other kernel's unchanged one, and the
library reproduces the greedy goldens. An edit that breaks the module's
tfm.config (which the runtime reads back from the manifest) is refused by
name."""

import json
import os
import re
import sys

import aidreams
import testlib

EDITED_KERNEL = "decode_ffn_out"


def kernel_schedules(model_dir):
    with open(os.path.join(model_dir, "manifest.json")) as f:
        return {k["kernel"]: k["schedule"] for k in json.load(f)["kernels"]}


def main():
    work = testlib.work_dir("e2e-edited-ir")
    original = os.path.join(work, "original")
    ir = os.path.join(work, "aidreams260k.mlir")
    testlib.compile_model(aidreams.config(), original, ("--emit-mlir", ir))
    before = kernel_schedules(original)
    assert before.get(EDITED_KERNEL) == "fast", f"{original}: expected {EDITED_KERNEL} " \
        f"scheduled 'fast' by the default pipeline, found {before}"

    with open(ir) as f:
        text = f.read()
    # The kernel's definition line: func.func private @decode_ffn_out(...) attributes {...}
    pattern = re.compile(r'(func\.func private @' + EDITED_KERNEL +
                         r'\(.*?attributes \{[^}]*tfm\.schedule = )"fast"')
    edited, count = pattern.subn(r'\1"plain"', text)
    assert count == 1, f"{ir}: found {count} definitions of @{EDITED_KERNEL} with a schedule"
    edited_ir = os.path.join(work, "edited.mlir")
    with open(edited_ir, "w") as f:
        f.write(edited)

    out = os.path.join(work, "edited")
    testlib.check_run([testlib.bin("tfmc"), edited_ir, "-o", out])
    after = kernel_schedules(out)
    expected = dict(before, **{EDITED_KERNEL: "plain"})
    if after != expected:
        print(f"FAIL: {out}/manifest.json kernels: found {after}, expected {expected}")
        return 1
    print(f"ok: manifest records {EDITED_KERNEL}: plain, {len(after) - 1} other kernels unchanged")

    broken_ir = os.path.join(work, "broken-config.mlir")
    with open(broken_ir, "w") as f:
        f.write(edited.replace('\\22dim\\22', '\\22width\\22', 1))
    result = testlib.run([testlib.bin("tfmc"), broken_ir, "-o", os.path.join(work, "broken")])
    testlib.assert_clean_failure(result, mentions=("tfm.config", "config.dim"),
                                 what="tfmc on IR whose tfm.config lacks dim")
    print("ok: a broken tfm.config is refused")

    golden_test = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "test_aidreams_golden.py")
    returncode, stdout, stderr = testlib.run([sys.executable, golden_test, "--model", out])
    print(stdout, end="")
    if returncode == testlib.SKIP_EXIT_CODE:
        return returncode  # the goldens are missing; the test says what
    if returncode != 0:
        print(f"FAIL: the edited library does not reproduce the goldens:\n{stderr}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
