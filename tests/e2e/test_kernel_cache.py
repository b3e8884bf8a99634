"""tfmc's kernel cache: a kernel compiled once, for one target by one build of
tfmc, is reused by every later compile that has the same kernel.

One case per script argument:
  same_config    aidreams260k compiled twice into a fresh cache: the second
                 compile reuses every kernel and Halide's runtime, and its
                 library generates the same tokens as the first's.
  shared_kernels the same model with 2 layers instead of 4 reuses all its
                 kernels (layers share them), while a 2-head variant (other
                 attention shapes) compiles its attention kernels anew.
  unwritable     a cache folder that cannot be created (under a file) costs
                 nothing but time: tfmc compiles and the library runs.
"""

import json
import os
import re
import shutil
import sys

import aidreams
import testlib

REUSED = re.compile(r"^tfmc: (\S+)\.o reused from ", re.M)
COMPILED = re.compile(r"^tfmc: kernel (\S+) \(\w+\) in ", re.M)


def compile_into(config, out, cache):
    """tfmc -v CONFIG -o OUT --kernel-cache CACHE, always compiling; returns
    (kernels reused, kernels compiled)."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [testlib.bin("tfmc"), config, "-o", out, "-v", "--kernel-cache", cache]
    returncode, _, stderr = testlib.run(cmd)
    assert returncode == 0, f"{' '.join(cmd)} failed:\n{stderr}"
    return set(REUSED.findall(stderr)), set(COMPILED.findall(stderr))


def variant(work, name, **changes):
    with open(aidreams.config()) as f:
        config = json.load(f)
    config.update(changes, name=name)
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(config, f)
    return path


def generate(model):
    returncode, stdout, stderr = aidreams.tfm_run("-p", "Once upon a time", "-n", "24",
                                                  "--temp", "0", model=model)
    assert returncode == 0, f"tfm-run on {model} failed:\n{stderr}"
    return stdout


def fresh_work(case):
    """The case's own folder and an empty kernel cache in it (CTest runs the
    cases at once)."""
    work = testlib.work_dir("e2e-kernel-cache-" + case)
    cache = os.path.join(work, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    return work, cache


@testlib.case
def same_config():
    work, cache = fresh_work("same_config")
    reused, first = compile_into(aidreams.config(), os.path.join(work, "first"), cache)
    assert not reused, f"a fresh cache reused {sorted(reused)}"
    assert first, "tfmc -v reported no kernel compiled"
    reused, compiled = compile_into(aidreams.config(), os.path.join(work, "second"), cache)
    assert not compiled, f"the second compile compiled {sorted(compiled)} again"
    assert reused == first | {"halide_runtime"}, (
        f"reused {sorted(reused)}, expected every kernel and the runtime: {sorted(first)}")
    a, b = generate(os.path.join(work, "first")), generate(os.path.join(work, "second"))
    assert a == b, f"the library from cached kernels generates\n{b}\nnot\n{a}"
    print(f"ok: {len(first)} kernels and the runtime reused; same tokens")


@testlib.case
def shared_kernels():
    work, cache = fresh_work("shared_kernels")
    _, four = compile_into(aidreams.config(), os.path.join(work, "four"), cache)
    two_layers = variant(work, "aidreams_two_layers", num_hidden_layers=2)
    reused, compiled = compile_into(two_layers, os.path.join(work, "two-layers"), cache)
    assert not compiled and reused == four | {"halide_runtime"}, (
        f"2 layers: compiled {sorted(compiled)}, reused {sorted(reused)}")
    two_heads = variant(work, "aidreams_two_heads", num_attention_heads=2, num_key_value_heads=2)
    reused, compiled = compile_into(two_heads, os.path.join(work, "two-heads"), cache)
    attention = {k for k in four if k.endswith("attention")}
    assert attention and attention <= compiled, (
        f"2 heads: compiled {sorted(compiled)}, expected the attention kernels {sorted(attention)}")
    assert "halide_runtime" in reused, "2 heads: Halide's runtime was not reused"
    print(f"ok: 2 layers reused all {len(four)} kernels; 2 heads compiled {sorted(compiled)}")


@testlib.case
def unwritable():
    work, _ = fresh_work("unwritable")
    blocker = os.path.join(work, "a-file")
    with open(blocker, "w") as f:
        f.write("not a folder\n")
    out = os.path.join(work, "uncached")
    reused, compiled = compile_into(aidreams.config(), out, os.path.join(blocker, "cache"))
    assert compiled and not reused, f"compiled {sorted(compiled)}, reused {sorted(reused)}"
    assert generate(out), "no text"
    print("ok: an unwritable cache only costs the compile")


if __name__ == "__main__":
    testlib.run_case(__doc__)
