"""Hostile caches, outputs and files: the model and kernel caches, the files
the tools write, and the smaller defects found beside them (issue 45,
classes 5-9). A refusal is a clean exit (non-zero, no signal) with a
bounded message naming the file, the field and what was found; an input is
never changed, byte for byte.

Tiny Llama models (vocab 512, aidreams260k's tokenizer from
TFM_SHARED_DIR), compiled by tfmc, with random weights from tfm-weights.

usage: test_hostile_files.py CASE   (environment as in the top-level CMakeLists.txt)
       test_hostile_files.py --list
"""

import glob
import hashlib
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import gguf_edit  # noqa: E402
import testlib  # noqa: E402

import numpy as np  # noqa: E402

MAX_MESSAGE_BYTES = 2000
PROMPT = "Once upon a time, a girl named Lily found a box"
TINY = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 512,
        "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "bos_token_id": 1,
        "eos_token_id": 2}


def case_dir():
    path = os.path.join(testlib.work_dir("e2e-hostile-files"), sys.argv[1])
    os.makedirs(path, exist_ok=True)
    return path


def scratch(*parts):
    path = os.path.join(case_dir(), *parts)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def fresh(*parts):
    path = scratch(*parts)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def tokenizer():
    return testlib.shared_path("models/aidreams260k/tokenizer.bin")


def tiny_model(name, **changes):
    """(config path, model folder compiled by tfmc) of the tiny Llama with
    `changes` to its config."""
    config = scratch("models", name, "config.json")
    with open(config, "w") as f:
        json.dump(dict(TINY, name=name, **changes), f)
    return config, testlib.compile_model(config, scratch("models", name, "compiled"))


def tiny_gguf(path, name="tiny", seed=1, **changes):
    """Random weights of the tiny Llama (with `changes`) as one GGUF at `path`."""
    _, model = tiny_model(name, **changes)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    testlib.check_run([testlib.bin("tfm-weights"), "--model", model, "--format", "gguf",
                       "--seed", str(seed), "-o", path])
    return path


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def assert_refused(result, mentions, what):
    testlib.assert_clean_failure(result, mentions, what)
    stderr = result[2]
    if len(stderr.encode()) > MAX_MESSAGE_BYTES:
        raise AssertionError(f"{what}: a {len(stderr.encode())}-byte message:\n"
                             f"{stderr[:MAX_MESSAGE_BYTES]}...")
    if "LLVM ERROR" in stderr:
        raise AssertionError(f"{what}: LLVM aborted:\n{stderr}")
    print(f"{what}: refused: {stderr.strip()}")


def assert_unchanged(path, before, what):
    if digest(path) != before:
        raise AssertionError(f"{what}: {path} changed")


def run_model_dir(source, cache, *args, env=None):
    """tfm-run --model-dir `source` with its own cache folder."""
    return testlib.run([testlib.bin("tfm-run"), "--model-dir", source, "--cache-dir", cache,
                        "--tokenizer", tokenizer(), "--threads", "1", *args], env=env)


def cache_entries(cache):
    return [p for p in glob.glob(os.path.join(cache, "*-*")) if os.path.isdir(p)
            and ".tmp-" not in p]


def compiled_entry(name):
    """A model cache holding one compiled entry; (cache, entry, gguf)."""
    gguf = tiny_gguf(scratch("weights", "model.gguf"))
    cache = fresh("cache")
    os.rmdir(cache)  # tfm-run creates it
    testlib.check_run([testlib.bin("tfm-run"), "--model-dir", gguf, "--cache-dir", cache,
                       "--tokenizer", tokenizer(), "-p", "hi", "-n", "0", "--threads", "1"])
    entries = cache_entries(cache)
    if len(entries) != 1:
        raise AssertionError(f"{name}: expected one cache entry, found {entries}")
    return cache, entries[0], gguf


# --- 5. cache poisoning -------------------------------------------------------

@testlib.case
def same_named_ggufs_at_once():
    # Two different models, each in a file named model.gguf, compiled at once
    # into one cache: each run must give its own model's logits.
    models = {"a": dict(rope_theta=10000.0), "b": dict(rope_theta=500000.0)}
    ggufs = {k: tiny_gguf(scratch(k, "model.gguf"), name=f"rope-{k}", seed=i + 1, **changes)
             for i, (k, changes) in enumerate(models.items())}
    cache = fresh("cache")
    for round_ in range(2):  # a cold cache, then a warm one
        runs = {k: subprocess.Popen(
            [testlib.bin("tfm-run"), "--model-dir", ggufs[k], "--cache-dir", cache,
             "--tokenizer", tokenizer(), "-p", PROMPT, "--threads", "1",
             "--logits", scratch(k, f"model-dir-{round_}.npy")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in ggufs}
        for k, run in runs.items():
            _, stderr = run.communicate(timeout=600)
            if run.returncode != 0:
                raise AssertionError(f"model {k}, round {round_}: exit {run.returncode}:\n{stderr}")
    for k, changes in models.items():
        _, model = tiny_model(f"rope-{k}", **changes)
        reference = scratch(k, "reference.npy")
        testlib.check_run([testlib.bin("tfm-run"), "--model", model, "--weights", ggufs[k],
                           "--tokenizer", tokenizer(), "-p", PROMPT, "--threads", "1",
                           "--logits", reference])
        want = np.load(reference)
        for round_ in range(2):
            got = np.load(scratch(k, f"model-dir-{round_}.npy"))
            error = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
            if error > 1e-5:
                raise AssertionError(f"model {k} through the shared cache, round {round_}: "
                                     f"logits {error:.2e} (relative) from its own library's")
    a, b = (np.load(scratch(k, "model-dir-0.npy")) for k in ("a", "b"))
    if np.allclose(a, b):
        raise AssertionError("the two models gave the same logits: the test tells nothing")
    if len(cache_entries(cache)) != 2:
        raise AssertionError(f"expected two cache entries, found {cache_entries(cache)}")


# --- 6. a cache another user can write ---------------------------------------

def as_another_user(path):
    """Gives `path` to another user when this process may (root), else makes
    it writable by others: either way it is not this user's alone."""
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534, follow_symlinks=False)
        return "owned by uid 65534"
    os.chmod(path, os.stat(path).st_mode | stat.S_IWOTH)
    return "writable by its group or others"


@testlib.case
def planted_library():
    cache, entry, gguf = compiled_entry("planted library")
    library = glob.glob(os.path.join(entry, "lib*.so"))[0]
    found = as_another_user(library)
    assert_refused(run_model_dir(gguf, cache, "-p", "hi", "-n", "0"),
                   [library, "refusing the model cache entry's file", found],
                   "a cached library not this user's")


@testlib.case
def world_writable_cache_entry():
    cache, entry, gguf = compiled_entry("world-writable entry")
    os.chmod(entry, 0o777)
    assert_refused(run_model_dir(gguf, cache, "-p", "hi", "-n", "0"),
                   [entry, "mode 0777", "writable by its group or others"],
                   "a world-writable cache entry")


@testlib.case
def planted_kernel_object():
    config, _ = tiny_model("kernel-cache")
    kernels = fresh("kernels")
    os.rmdir(kernels)  # tfmc creates it
    out = scratch("out")
    testlib.check_run([testlib.bin("tfmc"), config, "-o", out, "--kernel-cache", kernels])
    if stat.S_IMODE(os.stat(kernels).st_mode) != 0o700:
        raise AssertionError(f"the kernel cache folder was created with mode "
                             f"{oct(stat.S_IMODE(os.stat(kernels).st_mode))}, expected 0700")
    planted = sorted(glob.glob(os.path.join(kernels, "*.o")))[0]
    found = as_another_user(planted)
    result = testlib.run([testlib.bin("tfmc"), config, "-o", out, "--kernel-cache", kernels])
    assert_refused(result, [planted, "refusing the cached kernel object", found],
                   "a cached kernel object not this user's")


@testlib.case
def cache_folders_are_private():
    cache, entry, _ = compiled_entry("private folders")
    for folder in (cache, entry, os.path.join(cache, "locks")):
        mode = stat.S_IMODE(os.stat(folder).st_mode)
        if mode & 0o077:
            raise AssertionError(f"{folder} has mode {oct(mode)}, expected 0700")


# --- 7. no tool destroys an input ---------------------------------------------

@testlib.case
def quantize_onto_its_input():
    gguf = tiny_gguf(scratch("in", "model.gguf"))
    link = scratch("in", "link.gguf")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(gguf, link)
    before = digest(gguf)
    for output in (gguf, link):
        result = testlib.run([testlib.bin("tfm-quantize"), gguf, output, "--type", "q8_0"])
        assert_refused(result, [output, "refusing to write the output over", "same file"],
                       f"tfm-quantize IN {os.path.basename(output)}")
        assert_unchanged(gguf, before, "tfm-quantize onto its input")


@testlib.case
def logits_onto_the_weights():
    gguf = tiny_gguf(scratch("in", "model.gguf"))
    _, model = tiny_model("tiny")
    before = digest(gguf)
    result = testlib.run([testlib.bin("tfm-run"), "--model", model, "--weights", gguf,
                          "--tokenizer", tokenizer(), "-p", PROMPT, "--logits", gguf])
    assert_refused(result, [gguf, "refusing to write the output over"],
                   "tfm-run --logits over its weights")
    assert_unchanged(gguf, before, "tfm-run --logits over its weights")


@testlib.case
def weights_onto_the_config():
    config, _ = tiny_model("tiny")
    before = digest(config)
    result = testlib.run([testlib.bin("tfm-weights"), config, "--format", "gguf", "-o", config])
    assert_refused(result, [config, "refusing to write the output over"],
                   "tfm-weights -o its config")
    assert_unchanged(config, before, "tfm-weights -o its config")


@testlib.case
def mlir_onto_itself():
    config, _ = tiny_model("tiny")
    mlir = scratch("model.mlir")
    testlib.check_run([testlib.bin("tfmc"), config, "--emit", "mlir", "-o", mlir])
    before = digest(mlir)
    result = testlib.run([testlib.bin("tfmc"), mlir, "--emit", "mlir", "-o", mlir])
    assert_refused(result, [mlir, "refusing to write the output over"], "tfmc --emit mlir onto its input")
    assert_unchanged(mlir, before, "tfmc --emit mlir onto its input")


@testlib.case
def killed_quantize_keeps_the_output():
    # A model large enough that converting it takes a while: killed as soon
    # as its output's temporary appears, the old output must stay whole.
    source = tiny_gguf(scratch("in", "wide.gguf"), name="wide", hidden_size=512,
                       intermediate_size=2048, num_hidden_layers=4, num_attention_heads=8)
    output = scratch("out", "wide-q8_0.gguf")
    with open(output, "wb") as f:
        f.write(b"the output of an earlier run")
    before = digest(output)
    for sig in (signal.SIGKILL, signal.SIGTERM):
        for leftover in glob.glob(output + ".tmp-*"):
            os.remove(leftover)
        run = subprocess.Popen([testlib.bin("tfm-quantize"), source, output, "--type", "q8_0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not glob.glob(output + ".tmp-*") and run.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError("tfm-quantize wrote no temporary in 60 s")
            time.sleep(0.001)
        if run.poll() is not None:
            raise AssertionError(f"tfm-quantize finished before it could be killed (exit "
                                 f"{run.returncode}): make the model larger")
        run.send_signal(sig)
        run.wait(timeout=60)
        assert_unchanged(output, before, f"tfm-quantize killed by {sig.name}")
        left = glob.glob(output + ".tmp-*")
        if sig == signal.SIGTERM and left:
            raise AssertionError(f"SIGTERM left the temporary {left}")
        print(f"{sig.name}: the output is whole; left beside it: {left}")


@testlib.case
def no_scratch_folder_left():
    gguf = tiny_gguf(scratch("in", "model.gguf"))
    tmp = fresh("tmp")
    env = dict(os.environ, TMPDIR=tmp)
    testlib.check_run([testlib.bin("tfm-quantize"), gguf, scratch("out", "q8.gguf"), "--type",
                       "q8_0"], env=env)
    # And a run that fails after reading its input.
    result = testlib.run([testlib.bin("tfm-quantize"), gguf, os.path.join(gguf, "q.gguf"),
                          "--type", "q8_0"], env=env)
    testlib.assert_clean_failure(result, ["q.gguf"], "an output inside a file")
    if os.listdir(tmp):
        raise AssertionError(f"tfm-quantize left {os.listdir(tmp)} in TMPDIR")


# --- 8. bounded reads ------------------------------------------------------------

def child_peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


@testlib.case
def sparse_manifest_in_the_cache():
    cache, entry, gguf = compiled_entry("sparse manifest")
    manifest = os.path.join(entry, "manifest.json")
    with open(manifest, "wb") as f:
        f.truncate(4 << 30)
    result = run_model_dir(gguf, cache, "-p", "hi", "-n", "0")
    assert_refused(result, [manifest, "4294967296 bytes, expected at most"],
                   "a 4 GiB sparse manifest")
    if child_peak_rss_mb() > 1024:
        raise AssertionError(f"reading it took {child_peak_rss_mb():.0f} MB")


@testlib.case
def fifo_manifest_in_the_cache():
    cache, entry, gguf = compiled_entry("fifo manifest")
    manifest = os.path.join(entry, "manifest.json")
    os.remove(manifest)
    os.mkfifo(manifest, 0o600)
    result = run_model_dir(gguf, cache, "-p", "hi", "-n", "0")  # testlib.run's timeout: a hang fails
    assert_refused(result, [manifest, "not a regular file"], "a FIFO as the manifest")


@testlib.case
def fifo_tuning_file():
    gguf = tiny_gguf(scratch("weights", "model.gguf"))
    cache = fresh("cache")
    os.mkfifo(os.path.join(cache, "tuning.json"), 0o600)
    env = dict(os.environ, TFM_CACHE_DIR=cache)
    result = testlib.run([testlib.bin("tfm-run"), "--model-dir", gguf, "--tokenizer", tokenizer(),
                          "-p", "hi", "-n", "0"], env=env)
    assert_refused(result, [os.path.join(cache, "tuning.json"), "not a regular file"],
                   "a FIFO as the tuning file")


# --- 9. smaller ones ---------------------------------------------------------------

@testlib.case
def quantize_non_finite():
    for value, what in ((float("nan"), "nan"), (3.4e38, "3.4e+38")):
        source = tiny_gguf(scratch("in", "model.gguf"))
        gguf = gguf_edit.GgufEdit.read(source)
        first = gguf.tensors[0]
        if first["type"] != 0:  # f32
            raise AssertionError(f"expected an f32 first tensor, found type {first['type']}")
        data = bytearray(gguf.data)
        data[first["offset"] + 4 * 7:first["offset"] + 4 * 8] = np.float32(value).tobytes()
        gguf.data = bytes(data)
        edited = scratch("in", "edited.gguf")
        gguf.write(edited)
        output = scratch("out", "q8_0.gguf")
        if os.path.exists(output):
            os.remove(output)
        result = testlib.run([testlib.bin("tfm-quantize"), edited, output, "--type", "q8_0"])
        assert_refused(result, [edited, f"tensor '{first['name']}'", f"element 7 is {what}"],
                       f"quantizing {what}")
        if os.path.exists(output):
            raise AssertionError(f"quantizing {what}: an output was written")


@testlib.case
def gguf_overlapping_tensors():
    source = tiny_gguf(scratch("in", "model.gguf"))
    gguf = gguf_edit.GgufEdit.read(source)
    gguf.tensors[2]["offset"] = gguf.tensors[1]["offset"]
    edited = scratch("in", "overlapping.gguf")
    gguf.write(edited)
    _, model = tiny_model("tiny")
    result = testlib.run([testlib.bin("tfm-run"), "--model", model, "--weights", edited,
                          "--tokenizer", tokenizer(), "-p", "hi", "-n", "0"])
    assert_refused(result, [edited, gguf.tensors[1]["name"], gguf.tensors[2]["name"], "overlap"],
                   "a GGUF whose tensors share bytes")


@testlib.case
def gguf_rope_dimension_count():
    source = tiny_gguf(scratch("in", "model.gguf"))
    gguf = gguf_edit.GgufEdit.read(source)
    gguf.metadata["llama.rope.dimension_count"] = (gguf_edit.GgufEdit.U32, 8)  # of 16
    edited = scratch("partial", "model.gguf")
    gguf.write(edited)
    cache = fresh("cache")
    testlib.check_run([testlib.bin("tfm-run"), "--model-dir", edited, "--cache-dir", cache,
                       "--tokenizer", tokenizer(), "-p", "hi", "-n", "0", "--threads", "1"])
    with open(os.path.join(cache_entries(cache)[0], "manifest.json")) as f:
        rotary = json.load(f)["config"]["rotary_dim"]
    if rotary != 8:
        raise AssertionError(f"llama.rope.dimension_count 8 compiled with rotary_dim {rotary}")


@testlib.case
def gguf_metadata_error_names_the_key():
    source = tiny_gguf(scratch("in", "model.gguf"))
    gguf = gguf_edit.GgufEdit.read(source)
    gguf.metadata["llama.context_length"] = (gguf_edit.GgufEdit.U32, 0)
    edited = scratch("bad", "model.gguf")
    gguf.write(edited)
    result = run_model_dir(edited, fresh("cache"), "-p", "hi", "-n", "0")
    assert_refused(result, [edited, "metadata 'llama.context_length'", "found 0"],
                   "a GGUF with a context of 0")
    for hidden in ("max_position_embeddings", ".config.json"):
        if hidden in result[2]:
            raise AssertionError(f"the message says {hidden!r}:\n{result[2]}")


@testlib.case
def steps_int64_max():
    _, model = tiny_model("tiny")
    gguf = tiny_gguf(scratch("in", "model.gguf"))
    result = testlib.run([testlib.bin("tfm-run"), "--model", model, "--weights", gguf,
                          "--tokenizer", tokenizer(), "-p", "hi", "-n", "9223372036854775807"])
    assert_refused(result, ["-n asks for 9223372036854775807", "the context is 64"],
                   "-n 2^63-1")


@testlib.case
def perplexity_chunk_of_two():
    _, model = tiny_model("tiny")
    gguf = tiny_gguf(scratch("in", "model.gguf"))
    text = scratch("text.txt")
    with open(text, "w") as f:
        f.write(PROMPT * 20)
    result = testlib.run([testlib.bin("tfm-run"), "--model", model, "--weights", gguf,
                          "--tokenizer", tokenizer(), "--perplexity", text, "-c", "2"])
    assert_refused(result, ["context size (-c) 2 scores no token", "at least 3"],
                   "--perplexity -c 2")
    if "nan" in result[1]:
        raise AssertionError(f"printed nan:\n{result[1]}")


@testlib.case
def cache_entry_without_manifest():
    cache, entry, gguf = compiled_entry("entry without manifest")
    os.remove(os.path.join(entry, "manifest.json"))
    os.makedirs(entry + ".tmp-999999999")  # a compile that died
    testlib.check_run([testlib.bin("tfm-run"), "--model-dir", gguf, "--cache-dir", cache,
                       "--tokenizer", tokenizer(), "-p", "hi", "-n", "0", "--threads", "1"])
    if not os.path.exists(os.path.join(entry, "manifest.json")):
        raise AssertionError("the interrupted entry was not compiled again")
    if os.path.exists(entry + ".tmp-999999999"):
        raise AssertionError("the dead compile's folder was left")


@testlib.case
def full_standard_output():
    _, model = tiny_model("tiny")
    gguf = tiny_gguf(scratch("in", "model.gguf"))
    config, _ = tiny_model("tiny")
    for what, cmd in (
            ("tfm-run", [testlib.bin("tfm-run"), "--model", model, "--weights", gguf,
                         "--tokenizer", tokenizer(), "-p", "hi", "-n", "4"]),
            ("tfmc --emit mlir", [testlib.bin("tfmc"), config, "--emit", "mlir"])):
        with open("/dev/full", "w") as full:
            run = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
        assert_refused((run.returncode, "", run.stderr),
                       ["cannot write standard output", "No space left on device"],
                       f"{what} > /dev/full")


@testlib.case
def tokenizer_beside_a_folder():
    # A Hugging Face folder with no tokenizer of its own, and --tokenizer.
    _, model = tiny_model("tiny")
    folder = fresh("hf")
    testlib.check_run([testlib.bin("tfm-weights"), "--model", model, "--format", "safetensors",
                       "-o", folder])
    shutil.copy(scratch("models", "tiny", "config.json"), os.path.join(folder, "config.json"))
    testlib.check_run([testlib.bin("tfm-run"), "--model-dir", folder, "--cache-dir",
                       fresh("cache"), "--tokenizer", tokenizer(), "-p", "hi", "-n", "0",
                       "--threads", "1"])


if __name__ == "__main__":
    testlib.run_case(__doc__)
