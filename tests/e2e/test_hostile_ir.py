"""Hostile .mlir input: every class of attack on tfmc's IR input found by
hand. Each edit of aidreams260k's lowered module must be refused cleanly
(non-zero, no signal) with a bounded message naming the file, the field
and both values, before anything is written: no file appears outside the
output folder, and no library inside it.

usage: test_hostile_ir.py CASE   (environment as in the top-level CMakeLists.txt)
       test_hostile_ir.py --list
"""

import json
import os
import re
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import bench_compile_time  # noqa: E402  (the chained modules of the compile-time benchmark)
import testlib  # noqa: E402

MAX_MESSAGE_BYTES = 2000
TARGET = "avx2"


def case_dir():
    return os.path.join(testlib.work_dir("e2e-hostile-ir"), sys.argv[1])


def base_module():
    """aidreams260k lowered by tfmc, as text."""
    path = os.path.join(case_dir(), "base.mlir")
    os.makedirs(case_dir(), exist_ok=True)
    testlib.check_run([testlib.bin("tfmc"), testlib.source_path("configs/aidreams260k.json"),
                       "--target", TARGET, "--emit", "mlir", "-o", path])
    with open(path) as f:
        return f.read()


def edited(text, old, new, count=1):
    """`text` with `old` replaced by `new` (`count` times, at least; 0: every time)."""
    found = text.count(old)
    if found < max(count, 1):
        raise AssertionError(f"the base module has {found} of {old!r}, expected {count}")
    return text.replace(old, new) if count == 0 else text.replace(old, new, count)


def files_under(root):
    found = set()
    for folder, _, names in os.walk(root):
        found.update(os.path.join(folder, name) for name in names)
    return found


def tfmc_sandboxed(module_text, *args, tool="tfmc"):
    """Runs tfmc (or tfm-opt) on `module_text` in a fresh sandbox folder, as
    its working folder and home, with its output and kernel cache inside;
    asserts that it wrote nothing outside its output folder. Returns the
    run's (code, stdout, stderr) and the module's path."""
    root = os.path.join(case_dir(), "sandbox")
    shutil.rmtree(root, ignore_errors=True)
    for folder in ("home", "out", "kernels", "work/deeper"):
        os.makedirs(os.path.join(root, folder))
    path = os.path.join(root, "work", "deeper", "model.mlir")
    with open(path, "w") as f:
        f.write(module_text)
    before = files_under(root)
    out = os.path.join(root, "out")
    cmd = [testlib.bin(tool), path]
    if tool == "tfmc":
        cmd += ["-o", out, "--kernel-cache", os.path.join(root, "kernels")]
    env = dict(os.environ, HOME=os.path.join(root, "home"))
    env.pop("XDG_CACHE_HOME", None)
    env.pop("TFM_CACHE_DIR", None)
    result = testlib.run(cmd + list(args), timeout=300, cwd=os.path.join(root, "work"), env=env)
    written = files_under(root) - before
    allowed = (out + os.sep, os.path.join(root, "kernels") + os.sep)  # its kernel cache too
    outside = sorted(p for p in written if not p.startswith(allowed))
    if outside:
        raise AssertionError(f"{tool} wrote outside its output folder: {outside}")
    return result, path


def assert_refused(result, mentions, what):
    """A clean refusal, bounded and free of raw control bytes, that names
    every string in `mentions`, with no library written."""
    testlib.assert_clean_failure(result, mentions, what)
    stderr = result[2]
    if len(stderr.encode()) > MAX_MESSAGE_BYTES:
        raise AssertionError(f"{what}: a {len(stderr.encode())}-byte message:\n"
                             f"{stderr[:MAX_MESSAGE_BYTES]}...")
    raw = [c for c in stderr if ord(c) < 0x20 and c not in "\n\t"]
    if raw:
        raise AssertionError(f"{what}: the message carries raw control bytes {raw!r}")
    print(f"{what}: refused: {stderr.strip()}")


def refused(module_text, mentions, what, *args):
    result, path = tfmc_sandboxed(module_text, "--target", TARGET, *args)
    assert_refused(result, [path, *mentions], what)
    libraries = [p for p in files_under(os.path.join(case_dir(), "sandbox"))
                 if p.endswith(".so")]
    if libraries:
        raise AssertionError(f"{what}: a library was written: {libraries}")


# --- 1. names that reach C and paths ---------------------------------------

PLANTED = ('\\22;\\0a__attribute__((constructor)) static void planted(void) '
           '{ system(\\22touch PLANTED\\22); }\\0astatic const char *rest = \\22')


@testlib.case
def module_name_with_c_code():
    text = edited(base_module(), "module @aidreams260k", f'module @"m{PLANTED}"')
    refused(text, ["module name", "\\\"", "expected a C identifier"],
            "a module name holding a quote, newlines and C")


@testlib.case
def kernel_name_with_a_path():
    text = edited(base_module(), "@decode_logits", '@"../../../escaped"', count=0)
    refused(text, ["kernel name", '"../../../escaped"',
                   "expected prefill_, decode_, score_ or encode_"],
            "a kernel named ../../../escaped")


@testlib.case
def kernel_name_of_a_libc_function():
    text = edited(base_module(), "@decode_logits", "@memset", count=0)
    refused(text, ["kernel name", '"memset"'], "a kernel named memset")


@testlib.case
def empty_module_name():
    text = edited(base_module(), "module @aidreams260k", 'module @""')
    refused(text, ["module name", '""', "expected a C identifier"], "an empty module name")


@testlib.case
def entry_name_with_c_code():
    text = edited(base_module(), "func.func @prefill(", f'func.func @"p{PLANTED}"(')
    refused(text, ["entry function name", "expected a C identifier"],
            "an entry function named with C")


# --- 2. a module that disagrees with itself --------------------------------

def config_field(text, field, value):
    """`text` with tfm.config's `field` set to `value` (escaped JSON in MLIR)."""
    pattern = re.compile(r"\\22" + field + r"\\22:(\d+)")
    if not pattern.search(text):
        raise AssertionError(f"tfm.config has no {field}")
    return pattern.sub(lambda m: f"\\22{field}\\22:{value}", text, count=1)


@testlib.case
def context_past_the_cache_rows():
    text = edited(base_module(), "tfm.context_length = 128", "tfm.context_length = 256")
    text = config_field(text, "context_length", 256)
    refused(text, ["cache \"blk.0.key\": 128 rows", "tfm.context_length is 256"],
            "a context longer than the caches' rows")


@testlib.case
def cache_rows_below_the_context():
    text = edited(base_module(), "memref<128x64xf32", "memref<64x64xf32", count=0)
    text = edited(text, "strided<[1, 128]>", "strided<[1, 64]>", count=0)
    refused(text, ["64 rows", "tfm.context_length is 128"], "caches shorter than the context")


@testlib.case
def vocabulary_unlike_the_logits():
    text = edited(base_module(), "tfm.vocab_size = 512", "tfm.vocab_size = 1000")
    text = config_field(text, "vocab_size", 1000)
    refused(text, ["entry 'prefill'", "tensor<1x512xf32>", "tensor<1x1000xf32>",
                   "tfm.vocab_size 1000"], "a vocabulary wider than the logits kernels write")


@testlib.case
def entry_type_not_the_abi():
    # prefill's function (logits of the last row) made the score entry,
    # whose caller holds a row of logits per token, and the other way round.
    text = edited(base_module(), 'tfm.entry = "score"', 'tfm.entry = "swap"')
    text = edited(text, 'tfm.entry = "prefill"', 'tfm.entry = "score"')
    text = edited(text, 'tfm.entry = "swap"', 'tfm.entry = "prefill"')
    refused(text, ["entry 'score' (function \"prefill\")", "tensor<1x512xf32>",
                   "expected (tensor<?xi32>) -> tensor<?x512xf32>"],
            "prefill's and score's functions swapped")


@testlib.case
def prefill_chunk_2_62():
    text = edited(base_module(), "tfm.prefill_chunk = 128", "tfm.prefill_chunk = 4611686018427387904")
    refused(text, ["tfm.prefill_chunk: found 4611686018427387904", "tfm.context_length (128)"],
            "a prefill chunk of 2^62")


@testlib.case
def overlapping_caches_under_pass_pipeline():
    text = edited(base_module(), "@blk.0.value offset 32768", "@blk.0.value offset 64")
    refused(text, ['cache "blk.0.key" (bytes 0..32768) and cache "blk.0.value" (from byte 64) '
                   "overlap"], "overlapping caches, memory planning left out",
            "--pass-pipeline", "builtin.module(tfm-deduplicate-kernels)")


@testlib.case
def arena_offset_past_the_arena_under_pass_pipeline():
    text = base_module()
    match = re.search(r"arena_offsets = array<i64: (\d+)>", text)
    text = text[:match.start(1)] + str(1 << 40) + text[match.end(1):]
    refused(text, ["arena offset 1099511627776", "tfm.arena_bytes is"],
            "an arena offset past the arena, memory planning left out",
            "--pass-pipeline", "builtin.module(tfm-deduplicate-kernels)")


# --- 3. nesting past MLIR's stack --------------------------------------------

@testlib.case
def deep_nesting():
    for brackets, what in (("[", "attributes"), ("{", "regions"), ("tensor<", "types")):
        text = "module {\n  %x = \"t.op\"() {a = " + brackets * 100_000 + "\n"
        for tool in ("tfmc", "tfm-opt"):
            result, path = tfmc_sandboxed(text, tool=tool)
            assert_refused(result, [path, "brackets nested 65 deep, expected at most 64"],
                           f"{tool}: {len(text)} bytes of nested {what}")


# --- 4. compile time ---------------------------------------------------------

@testlib.case
def fusion_of_2000_ops():
    # Written as one region: refused at once (the guard below is no timing:
    # it only keeps a hang from stalling the suite).
    refused(bench_compile_time.module(2000, fused=True),
            ["kernel 'prefill_", "ops, more than the 64 a kernel may hold"],
            "2000 elementwise ops in one fusion")


@testlib.case
def chain_of_2000_ops():
    # Left to the fusion pass: the first 63 join the embedding's kernel, the
    # rest are one kernel (deduplicated), compiled once.
    result, _ = tfmc_sandboxed(bench_compile_time.module(2000, fused=False), "--target", TARGET)
    if result[0] != 0:
        raise AssertionError(f"a chain of 2000 ops failed:\n{result[2]}")
    manifest = os.path.join(case_dir(), "sandbox", "out", "manifest.json")
    with open(manifest) as f:
        kernels = [k["kernel"] for k in json.load(f)["kernels"]]
    if len(kernels) > 8:
        raise AssertionError(f"a chain of 2000 ops became {len(kernels)} kernels: {kernels}")


# --- 9. smaller ones -----------------------------------------------------------

@testlib.case
def target_host_in_the_module():
    text = edited(base_module(), re.search(r'tfm.target = "[^"]*"', base_module()).group(0),
                  'tfm.target = "host"')
    result, path = tfmc_sandboxed(text)  # no --target: the module's own
    assert_refused(result, [path, 'tfm.target: found "host"', "expected an explicit target"],
                   "tfm.target \"host\"")


@testlib.case
def target_string_of_25_kb():
    target = "x86-64-linux-" + "-".join(["sse41"] * 5000)
    text = edited(base_module(), re.search(r'tfm.target = "[^"]*"', base_module()).group(0),
                  f'tfm.target = "{target}{chr(27)}[31m"')
    result, path = tfmc_sandboxed(text)
    assert_refused(result, [path, "tfm.target", "bytes)"], "a 25 KB target string")


@testlib.case
def arm_target():
    result, path = tfmc_sandboxed(base_module(), "--target", "arm-64-linux-arm_dot_prod")
    assert_refused(result, ["arm-64-linux-arm_dot_prod", "its architecture is arm",
                            "this machine's is x86"], "an ARM target on x86")
    if "undefined reference" in result[2] or "ld:" in result[2]:
        raise AssertionError("the ARM target reached the linker")


if __name__ == "__main__":
    testlib.run_case(__doc__)
