"""A library knows the CPU features it was compiled for, and the runtime
checks them against this CPU before running anything.

aidreams260k compiled with --target avx512 runs here on an AVX-512 CPU,
with --target avx2 on one with AVX2 only (the project's machines include an
AVX2 AMD EPYC); on neither the test skips. The same library with its
recorded target patched to claim FMA4, which no current Intel or AMD CPU
has, is refused with a message naming fma4: the patch replaces "-avx2" by
"-fma4" (same length) in the library and in manifest.json, so everything
else about the library stays valid. The same target with --profile
(Halide's profiler, not a CPU feature) runs to the same tokens and reports
every kernel's calls and time per call at exit."""

import os
import re
import shutil
import sys

import aidreams
import testlib

# tfmc's --target names, widest first, and the Halide targets they name.
TARGETS = {
    "avx512": "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake",
    "avx2": "x86-64-linux-sse41-avx-f16c-fma-avx2",
}


def patch(path, old, new):
    with open(path, "rb") as f:
        data = f.read()
    count = data.count(old)
    assert count > 0, f"{path}: {old!r} not found"
    with open(path, "wb") as f:
        f.write(data.replace(old, new))
    return count


def main():
    flags = testlib.cpu_flags()
    name = next((t for t in TARGETS if testlib.TARGET_CPU_FLAGS[t] <= flags), None)
    if name is None:
        testlib.skip_unless_cpu_runs("avx2")
    if "fma4" in flags:
        print("skipped: this CPU has FMA4, the feature the test patches in")
        return testlib.SKIP_EXIT_CODE

    work = testlib.work_dir("e2e-target")
    model = testlib.compile_model(aidreams.config(), os.path.join(work, name),
                                  ("--target", name))
    run_args = ["-p", "Once upon a time", "-n", "8", "--temp", "0"]
    returncode, stdout, stderr = aidreams.tfm_run(*run_args, model=model)
    if returncode != 0:
        print(f"FAIL: the --target {name} library does not run here:\n{stderr}")
        return 1
    print(f"ok: --target {name} runs: {stdout.strip()[:60]!r}")

    profiled = testlib.compile_model(aidreams.config(), os.path.join(work, "profiled"),
                                     ("--target", name, "--profile"))
    returncode, profiled_stdout, report = aidreams.tfm_run(*run_args, model=profiled)
    if returncode != 0 or profiled_stdout != stdout:
        print(f"FAIL: the --profile library gave {profiled_stdout!r} (exit {returncode}), "
              f"expected {stdout!r}:\n{report}")
        return 1
    for kernel in ("prefill_embedding", "decode_attention", "decode_logits"):
        if not re.search(rf"^{kernel}\n total time: .* runs: [1-9][0-9]* +time/run: ", report,
                         re.M):
            print(f"FAIL: the --profile library's report has no calls of {kernel}:\n{report}")
            return 1
    print("ok: --profile reports each kernel's calls and time per call")

    patched = os.path.join(work, "patched")
    shutil.rmtree(patched, ignore_errors=True)
    shutil.copytree(model, patched)
    old, new = b"-avx2", b"-fma4"
    patch(os.path.join(patched, "libaidreams260k.so"), old, new)
    patch(os.path.join(patched, "manifest.json"), old, new)
    result = aidreams.tfm_run(*run_args, model=patched)
    testlib.assert_clean_failure(result, mentions=("fma4", TARGETS[name].replace("-avx2", "-fma4")),
                                 what="tfm-run on a library claiming fma4")
    print(f"ok: refused: {result[2].strip().splitlines()[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
