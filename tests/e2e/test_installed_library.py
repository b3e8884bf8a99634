"""The runtime as a library, used from an install (issue 48): `cmake
--install` into a prefix of the test's own, then

  example_pkg_config   examples/generate.c built with `pkg-config --cflags
                       --libs tfm` generates from aidreams260k (a folder
                       tfmc wrote, with its real checkpoint), a GGUF and a
                       Hugging Face folder (both compiled on first use by
                       the installed tfmc); its greedy ids equal tfm-run's
  example_cmake        the same program built by CMake's find_package(tfm)
  python_module        the installed Python module: greedy ids equal
                       tfm-run's, logits equal tfm-run --logits', and a
                       bad model is a TfmError naming the file
  installed_exe        the installed tfmc's --emit exe links the runtime
                       archives installed beside it, not the build's, and
                       the program generates as tfm-run does
  exports              `nm -D libtfm.so` lists tfm_* only, and ldd only
                       glibc and the C++ runtime
  version              tfm_version() and every tool's --version say
                       "tfmc VERSION (COMMIT)", the commit built

One case per script argument."""

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

import aidreams
import testlib

PROMPT = "Once upon a time"
TOKENS = 24


def work(case):
    path = testlib.work_dir(f"e2e-installed-library/{case}")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def build_dir():
    return os.path.dirname(testlib.bin("tfmc"))[:-len("/bin")]


def install(scratch):
    prefix = os.path.join(scratch, "prefix")
    testlib.check_run(["cmake", "--install", build_dir(), "--prefix", prefix])
    return prefix


def sources(scratch):
    """(what the model is, the path loaded, weights, tokenizer): aidreams260k
    three ways. The GGUF holds its real checkpoint (tfm-quantize, no
    tokenizer: llama2.c's is given); the Hugging Face folder random weights
    under aidreams260k's config.json."""
    gguf = os.path.join(scratch, "aidreams260k.gguf")
    testlib.check_run([testlib.bin("tfm-quantize"), aidreams.checkpoint(), gguf, "--type", "f32",
                       "--config", aidreams.config()])
    folder = os.path.join(scratch, "aidreams260k-hf")
    testlib.check_run([testlib.bin("tfm-weights"), aidreams.config(), "--format", "safetensors",
                       "--seed", "7", "-o", folder])
    shutil.copy(aidreams.config(), os.path.join(folder, "config.json"))
    return [("a folder tfmc wrote", aidreams.model_dir(), aidreams.checkpoint(),
             aidreams.tokenizer()),
            ("a GGUF", gguf, "", aidreams.tokenizer()),
            ("a Hugging Face folder", folder, "", aidreams.tokenizer())]


def environment(scratch):
    """A cache of the test's own, so that the installed tfmc compiles."""
    return dict(os.environ, TFM_CACHE_DIR=os.path.join(scratch, "cache"))


def tfm_run_ids(path, weights, tokenizer, env):
    cmd = [testlib.bin("tfm-run"), "-m", path, "--tokenizer", tokenizer, "-p", PROMPT, "-n",
           str(TOKENS), "--temp", "0", "--ids", "-t", "1"]
    if weights:
        cmd += ["--weights", weights]
    out = testlib.check_run(cmd, env=env)
    return json.loads(out.rstrip("\n").rpartition("\n")[2])


def check_example(program, scratch, models):
    env = environment(scratch)
    for what, path, weights, tokenizer in models:
        code, out, err = testlib.run([program, path, PROMPT, str(TOKENS), weights, tokenizer],
                                     env=env)
        assert code == 0, f"generate on {what}: exit {testlib.describe_exit(code)}: {err}"
        ids = [int(i) for i in err.strip().splitlines()[-1].split()]
        expected = tfm_run_ids(path, weights, tokenizer, env)
        assert ids == expected, f"{what}: generate.c's ids {ids}, tfm-run's {expected}"
        assert out.startswith(PROMPT) and len(out) > len(PROMPT) + 1, f"{what}: text {out!r}"
        print(f"ok: {what}: {len(ids)} ids as tfm-run's; {out.strip()[:60]!r}")


@testlib.case
def example_pkg_config():
    scratch = work("pkg-config")
    prefix = install(scratch)
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    flags = testlib.check_run(["pkg-config", "--cflags", "--libs", "tfm"], env=env).split()
    libdir = testlib.check_run(["pkg-config", "--variable=libdir", "tfm"], env=env).strip()
    assert os.path.realpath(libdir) == os.path.realpath(os.path.join(prefix, "lib")), libdir
    program = os.path.join(scratch, "generate")
    testlib.check_run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror",
                       testlib.source_path("examples/generate.c"), *flags,
                       f"-Wl,-rpath,{libdir}", "-o", program])
    check_example(program, scratch, sources(scratch))


@testlib.case
def example_cmake():
    scratch = work("cmake")
    prefix = install(scratch)
    build = os.path.join(scratch, "build")
    testlib.check_run(["cmake", "-S", testlib.source_path("examples"), "-B", build, "-G", "Ninja",
                       f"-DCMAKE_PREFIX_PATH={prefix}"])
    testlib.check_run(["cmake", "--build", build])
    models = [m for m in sources(scratch) if m[0] == "a folder tfmc wrote"]
    check_example(os.path.join(build, "generate"), scratch, models)


PYTHON_CHECK = """
import json, sys
import numpy as np
import tfm
path, weights, tokenizer, prompt, tokens, logits_out = sys.argv[1:]
model = tfm.Model(path, weights=weights or None, tokenizer=tokenizer, threads=1)
text, ids = model.generate(prompt, max_tokens=int(tokens), temperature=0)
np.save(logits_out, model.logits(model.tokenize(prompt)))
assert model.detokenize(model.tokenize(prompt)) == prompt
try:
    tfm.Model(path + ".missing")
    raise SystemExit("a missing model loaded")
except tfm.TfmError as e:
    assert path + ".missing" in str(e), str(e)
print(json.dumps({"ids": ids, "text": text, "version": tfm.version()}))
"""


@testlib.case
def python_module():
    scratch = work("python")
    prefix = install(scratch)
    modules = os.path.join(prefix, "lib", "python3", "dist-packages")
    env = dict(environment(scratch), PYTHONPATH=modules)
    env.pop("TFM_LIBRARY", None)
    for what, path, weights, tokenizer in sources(scratch)[:2]:
        ours = os.path.join(scratch, "python-logits.npy")
        out = testlib.check_run([sys.executable, "-c", PYTHON_CHECK, path, weights, tokenizer,
                                 PROMPT, str(TOKENS), ours], env=env)
        result = json.loads(out.strip().splitlines()[-1])
        expected = tfm_run_ids(path, weights, tokenizer, env)
        assert result["ids"] == expected, f"{what}: Python's ids {result['ids']}, tfm-run's {expected}"
        theirs = os.path.join(scratch, "tfm-run-logits.npy")
        cmd = [testlib.bin("tfm-run"), "-m", path, "--tokenizer", tokenizer, "-p", PROMPT,
               "--logits", theirs, "-t", "1"] + (["--weights", weights] if weights else [])
        testlib.check_run(cmd, env=env)
        a, b = np.load(ours), np.load(theirs)
        assert a.shape == b.shape and np.array_equal(a, b), \
            f"{what}: logits differ by up to {np.max(np.abs(a - b)) if a.shape == b.shape else a.shape}"
        print(f"ok: {what}: Python's {len(expected)} ids and {a.shape} logits equal tfm-run's")


@testlib.case
def installed_exe():
    scratch = work("exe")
    prefix = install(scratch)
    out = os.path.join(scratch, "aidreams260k")
    code, _, err = testlib.run([os.path.join(prefix, "bin", "tfmc"), aidreams.config(), "--emit",
                                "exe", "-v", "-o", out], env=environment(scratch))
    assert code == 0, f"installed tfmc --emit exe: exit {testlib.describe_exit(code)}: {err}"
    archives = os.path.join(prefix, "lib", "tfm")
    for archive in ("libtfm_exe_main.a", "libtfm_runtime.a", "libTfmCommon.a"):
        assert os.path.join(archives, archive) in err, f"not linked from {archives}: {archive}"
    program = os.path.join(out, "aidreams260k")
    testlib.assert_needs_only_glibc(program)
    cmd = ["--weights", aidreams.checkpoint(), "--tokenizer", aidreams.tokenizer(), "-p", PROMPT,
           "-n", str(TOKENS), "--temp", "0", "--ids", "-t", "1"]
    ids = json.loads(testlib.check_run([program, *cmd]).rstrip("\n").rpartition("\n")[2])
    expected = tfm_run_ids(aidreams.model_dir(), aidreams.checkpoint(), aidreams.tokenizer(),
                           environment(scratch))
    assert ids == expected, f"the installed tfmc's program: {ids}, tfm-run: {expected}"
    print(f"ok: the installed tfmc links {archives}'s archives; the program's {len(ids)} ids "
          f"are tfm-run's")


@testlib.case
def exports():
    library = os.path.join(build_dir(), "lib", "libtfm.so")
    symbols = testlib.check_run(["nm", "-D", "--defined-only", library]).split("\n")
    names = [line.split()[-1] for line in symbols if line.strip()]
    others = [n for n in names if not n.startswith("tfm_")]
    assert names and not others, f"libtfm.so exports more than tfm_*: {others[:20]}"
    header = open(testlib.source_path("runtime/include/tfm.h")).read()
    declared = set(re.findall(r"\b(tfm_\w+)\(", header))
    assert declared == set(names), \
        f"declared, not exported: {declared - set(names)}; exported, not declared: {set(names) - declared}"
    testlib.assert_needs_only_glibc(library)
    print(f"ok: libtfm.so exports the {len(names)} functions of tfm.h and nothing else")


@testlib.case
def version():
    expected_version = re.search(r"project\(tfmc VERSION (\S+)",
                                 open(testlib.source_path("CMakeLists.txt")).read()).group(1)
    commit = subprocess.run(["git", "-C", testlib.source_path("."), "rev-parse", "--short=12",
                             "HEAD"], capture_output=True, text=True)
    pattern = re.compile(r"^tfmc " + re.escape(expected_version) + r" \(([0-9a-f]{12}(-dirty)?|unknown)\)$")
    for tool in ("tfmc", "tfm-run", "tfm-bench", "tfm-weights", "tfm-quantize"):
        out = testlib.check_run([testlib.bin(tool), "--version"]).strip()
        found = pattern.match(out)
        assert found, f"{tool} --version: {out!r}, expected 'tfmc {expected_version} (commit)'"
        if commit.returncode == 0:
            assert found.group(1).startswith(commit.stdout.strip()), \
                f"{tool} --version names {found.group(1)}, the checkout is {commit.stdout.strip()}"
    print(f"ok: every tool's --version is {out!r}")


if __name__ == "__main__":
    testlib.run_case(__doc__)
