"""Helpers shared by every scripted test (CTest runs them with TFM_TEST_ENV).

Environment (TFM_TEST_ENV in the top-level CMakeLists.txt):
  TFM_BIN_DIR     where the built tools are (tfmc, tfm-run, tfm-weights, tfm-logits)
  TFM_SOURCE_DIR  the repository root
  TFM_SHARED_DIR  real checkpoints, tokenizers and goldens (../shared)
  TFM_WORK_DIR    scratch space for compiled models and outputs
Exit code 77 means "skipped" to CTest (SKIP_RETURN_CODE 77).
"""

import argparse
import fcntl
import os
import re
import shlex
import shutil
import subprocess
import sys
import unittest

SKIP_EXIT_CODE = 77
DEFAULT_TIMEOUT_S = 600


def _env_dir(variable):
    value = os.environ.get(variable)
    if not value:
        raise RuntimeError(
            f"environment variable {variable} is not set; run this test through "
            "ctest, or set it as the top-level CMakeLists.txt's TFM_TEST_ENV does")
    return value


def source_path(relpath):
    """Path of a file in the repository."""
    return os.path.join(_env_dir("TFM_SOURCE_DIR"), relpath)


def _find_shared(relpath):
    """(path, None) for real data under TFM_SHARED_DIR, or (None, why it is missing)."""
    shared_dir = os.environ.get("TFM_SHARED_DIR", "")
    path = os.path.join(shared_dir, relpath)
    if shared_dir and os.path.exists(path):
        return path, None
    return None, f"{path} does not exist" if shared_dir else f"TFM_SHARED_DIR is not set (need {relpath})"


def shared_path(relpath):
    """Path of real data under TFM_SHARED_DIR. When it is missing the test
    cannot run: under CI that is a failure (exit 1), elsewhere a skip (exit 77)."""
    path, missing = _find_shared(relpath)
    if path:
        return path
    if os.environ.get("CI") == "true":
        print(f"FAIL: {missing}; CI needs the shared data", flush=True)
        sys.exit(1)
    print(f"SKIP: {missing} (set TFM_SHARED_DIR)", flush=True)
    sys.exit(SKIP_EXIT_CODE)


# The /proc/cpuinfo flags each of tfmc's --target names needs (the
# runtime refuses a library whose target this CPU lacks).
TARGET_CPU_FLAGS = {
    "x86-64": {"sse4_1"},
    "avx2": {"avx", "avx2", "f16c", "fma", "sse4_1"},
    "avx512": {"avx", "avx2", "f16c", "fma", "sse4_1", "avx512f", "avx512cd", "avx512vl",
               "avx512bw", "avx512dq"},
    # This CPU's features for the driver; the kernels on an OpenCL device
    # (require_opencl_platform).
    "opencl": set(),
}


def require_opencl_platform():
    """An OpenCL platform to run --target opencl libraries on (POCL on the
    CPU-only machines, which tools/install-deps.sh installs): its absence
    fails under CI (exit 1) and skips elsewhere (exit 77)."""
    import ctypes
    found = ctypes.c_uint32(0)
    try:
        loader = ctypes.CDLL("libOpenCL.so.1")
        status = loader.clGetPlatformIDs(0, None, ctypes.byref(found))
    except OSError:
        status = -1
    if status == 0 and found.value > 0:
        return
    missing = "no OpenCL platform (install pocl-opencl-icd: tools/install-deps.sh)"
    if os.environ.get("CI") == "true":
        print(f"FAIL: {missing}", flush=True)
        sys.exit(1)
    print(f"SKIP: {missing}", flush=True)
    sys.exit(SKIP_EXIT_CODE)


# What `ldd` may list for a program that runs where only glibc is: glibc's
# libraries and loader, and the C++ runtime's (GPU bundle, tfmc --emit exe).
GLIBC_AND_CXX_RUNTIME = {"linux-vdso.so.1", "libc.so.6", "libm.so.6", "libdl.so.2",
                         "libpthread.so.0", "librt.so.1", "libstdc++.so.6", "libgcc_s.so.1",
                         "/lib64/ld-linux-x86-64.so.2"}


def assert_needs_only_glibc(path):
    """`path` (a program or shared library) needs no shared library outside
    GLIBC_AND_CXX_RUNTIME, as `ldd` lists them."""
    listing = check_run(["ldd", path])
    needed = {line.split()[0] for line in listing.splitlines() if line.strip()}
    outside = needed - GLIBC_AND_CXX_RUNTIME
    if outside:
        raise AssertionError(f"{path} needs {sorted(outside)}:\n{listing}")
    return needed


def cpu_flags():
    """The feature flags /proc/cpuinfo lists for this CPU (empty if unreadable)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def skip_unless_cpu_runs(target):
    """Skips the test (exit 77), CI or not, when this CPU lacks a feature
    tfmc's --target `target` needs: the project's machines differ (an AVX2
    AMD EPYC, AVX-512 Intel Sapphire Rapids and AMD Zen 4), and a CPU
    feature is the machine's, not data a run could be given."""
    missing = TARGET_CPU_FLAGS[target] - cpu_flags()
    if missing:
        print(f"SKIP: this CPU lacks {', '.join(sorted(missing))}, needed by --target {target}",
              flush=True)
        sys.exit(SKIP_EXIT_CODE)


def shared_path_for_test(test, relpath):
    """shared_path for one unittest method: a missing file fails it under CI
    and skips it elsewhere, leaving the script's other tests to run."""
    path, missing = _find_shared(relpath)
    if path:
        return path
    if os.environ.get("CI") == "true":
        test.fail(f"{missing}; CI needs the shared data")
    test.skipTest(f"{missing} (set TFM_SHARED_DIR)")


def bin(name):
    """Path of a built tool; raises when it has not been built. A runtime-only
    build (the sanitizer one) takes the tools it lacks, tfmc, from the main
    build's TFM_TOOLS_BIN_DIR."""
    path = os.path.join(_env_dir("TFM_BIN_DIR"), name)
    fallback = os.environ.get("TFM_TOOLS_BIN_DIR")
    if not os.access(path, os.X_OK) and fallback:
        path = os.path.join(fallback, name)
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"{path}: tool '{name}' is not built (ninja {name})")
    return path


def work_dir(name):
    """A scratch folder TFM_WORK_DIR/name, created if needed. Kept between
    runs so that compiled models can be reused (see compile_model)."""
    path = os.path.join(_env_dir("TFM_WORK_DIR"), name)
    os.makedirs(path, exist_ok=True)
    return path


def discard(*paths):
    """Removes files or folders a test wrote and has done with: random
    weights are rewritten by every run, and a suite that keeps each copy
    fills a small disk (CI's has run out)."""
    for path in paths:
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.remove(path)


def run(cmd, timeout=DEFAULT_TIMEOUT_S, input=None, cwd=None, env=None):
    """Runs cmd (a list) and returns (returncode, stdout, stderr) as text.
    A negative return code means the process died of a signal."""
    cmd = [str(c) for c in cmd]
    try:
        done = subprocess.run(cmd, input=input, capture_output=True, text=True,
                              timeout=timeout, cwd=cwd, env=env)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"timed out after {timeout} s: {shlex.join(cmd)}") from e
    return done.returncode, done.stdout, done.stderr


def check_run(cmd, **kwargs):
    """Runs cmd and returns its stdout; raises with its stderr when it fails."""
    returncode, stdout, stderr = run(cmd, **kwargs)
    if returncode != 0:
        raise AssertionError(
            f"{shlex.join(str(c) for c in cmd)} exited with {describe_exit(returncode)}:\n{stderr}")
    return stdout


def instruction_counts(object_path, mnemonics):
    """{mnemonic: count} of the instructions in an object file (objdump -d)
    whose mnemonic matches the regular expression `mnemonics` in full."""
    listing = check_run(["objdump", "-d", "--no-show-raw-insn", object_path])
    counts = {}
    for insn in re.findall(r"^\s*[0-9a-f]+:\s+(" + mnemonics + r")\s", listing, re.M):
        counts[insn] = counts.get(insn, 0) + 1
    return counts


def describe_exit(returncode):
    if returncode < 0:
        return f"signal {-returncode}"
    return f"status {returncode}"


def assert_clean_failure(result, mentions=(), what="command"):
    """Asserts that a run() result is a refusal: a non-zero exit status that
    is not a crash (signal), with a message on stderr that contains every
    string in `mentions`."""
    returncode, _, stderr = result
    if returncode == 0:
        raise AssertionError(f"{what}: expected a non-zero exit, got success")
    if returncode < 0 or returncode >= 128:
        raise AssertionError(f"{what}: crashed ({describe_exit(returncode)}) instead of "
                             f"refusing cleanly; stderr:\n{stderr}")
    for text in mentions:
        if text not in stderr:
            raise AssertionError(f"{what}: stderr does not mention {text!r}:\n{stderr}")


def compile_model(config_path, out_dir, extra_args=()):
    """Runs `tfmc CONFIG -o OUT_DIR [extra_args]` unless OUT_DIR already holds
    the result of the same command that is newer than the config and tfmc.
    Raises with tfmc's stderr on failure; returns out_dir."""
    # CTest runs tests in parallel and several share one compiled model:
    # one compiles while the others wait on the lock, then reuse it.
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, ".tfmc-lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _compile_model_locked(config_path, out_dir, extra_args)


def _compile_model_locked(config_path, out_dir, extra_args):
    tfmc = bin("tfmc")
    cmd = [tfmc, str(config_path), "-o", str(out_dir), *map(str, extra_args)]
    manifest = os.path.join(out_dir, "manifest.json")
    stamp = os.path.join(out_dir, ".tfmc-command")
    command_text = shlex.join(cmd)
    if os.path.exists(manifest) and os.path.exists(stamp):
        with open(stamp) as f:
            same_command = f.read() == command_text
        manifest_time = os.path.getmtime(manifest)
        if (same_command and manifest_time > os.path.getmtime(config_path)
                and manifest_time > os.path.getmtime(tfmc)):
            return out_dir
    check_run(cmd)
    with open(stamp, "w") as f:
        f.write(command_text)
    return out_dir


# The cases of the running script by name, in the order they are defined
# (see case and run_case).
_CASES = {}


def case(target=None, *, name=None):
    """Decorator: registers a function, or a unittest.TestCase class, as one
    case of its script, named `name` or else after itself; run_case runs it,
    and CMake registers one test per case (tfm_e2e_cases in
    tests/e2e/CMakeLists.txt). The script keeps no other list of its cases.

        @testlib.case
        def truncated_checkpoint(): ...

        @testlib.case(name="hf")
        class HuggingFaceFolder(unittest.TestCase): ...
    """
    def register(target):
        key = name or target.__name__
        if key in _CASES:
            raise RuntimeError(f"two cases named {key!r}: {_CASES[key]!r} and {target!r}")
        _CASES[key] = target
        return target
    return register if target is None else register(target)


def run_case(doc, add_arguments=None, setup=None):
    """The main of a script with one CTest test per case (each registered with
    @case): `script.py CASE` runs the case named CASE, a function called with
    no argument or every test of a unittest.TestCase class; `script.py --list`
    prints the cases' names, one a line, for CMake to register each. A script
    with options of its own passes add_arguments(parser), which adds them, and
    setup(args), which takes the parsed arguments before the case runs."""
    if not _CASES:
        sys.exit(f"{sys.argv[0]}: no case registered; decorate each with @testlib.case")
    if sys.argv[1:] == ["--list"]:
        print("\n".join(_CASES))
        return
    parser = argparse.ArgumentParser(description=doc.splitlines()[0],
                                     epilog="--list alone prints the cases, one a line")
    parser.add_argument("case", choices=_CASES)
    if add_arguments:
        add_arguments(parser)
    args = parser.parse_args()
    if setup:
        setup(args)
    target = _CASES[args.case]
    if isinstance(target, type) and issubclass(target, unittest.TestCase):
        tests = unittest.defaultTestLoader.loadTestsFromTestCase(target)
        if not unittest.TextTestRunner(verbosity=2).run(tests).wasSuccessful():
            sys.exit(1)
    else:
        target()
    print(f"ok: {args.case}")
