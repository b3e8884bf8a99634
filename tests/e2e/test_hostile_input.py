"""Hostile input: every case found by attacking tfmc's and tfm-run's inputs
by hand. Each refusal is a clean exit (non-zero, no signal) with a message
that names the file and the field and stays short; the cases whose fix
changes behaviour (a literal '@' prompt, tokenizing without a model, the
tokenizer a GGUF embeds) must work. Plus determinism across seeds and thread
counts, and two runs on a cold model cache compiling once.

usage: test_hostile_input.py CASE   (environment as in the top-level CMakeLists.txt)
"""

import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np

import aidreams
import testlib

# A refusal quotes file bytes escaped and cut: no message needs more.
MAX_MESSAGE_BYTES = 2000
# Far deeper than any JSON parser's recursion can take on a thread stack.
HOSTILE_DEPTH = 100_000


def scratch(name):
    return os.path.join(testlib.work_dir("e2e-hostile-input"), name)


def write(name, data):
    path = scratch(name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path


def assert_refused(result, mentions, what, absent=()):
    """A clean refusal naming every string in `mentions`, in a bounded
    message free of raw control bytes."""
    testlib.assert_clean_failure(result, mentions, what)
    stderr = result[2]
    if len(stderr.encode()) > MAX_MESSAGE_BYTES:
        raise AssertionError(f"{what}: a {len(stderr.encode())}-byte message, expected at most "
                             f"{MAX_MESSAGE_BYTES}:\n{stderr[:MAX_MESSAGE_BYTES]}...")
    raw = [c for c in stderr if ord(c) < 0x20 and c not in "\n\t"]
    if raw:
        raise AssertionError(f"{what}: the message carries raw control bytes {raw!r}")
    for text in absent:
        if text in stderr:
            raise AssertionError(f"{what}: the message says {text!r}:\n{stderr}")


def deep_json(depth=HOSTILE_DEPTH):
    return '{"a": ' + "[" * depth + "]" * depth + "}"


def tfmc(*args):
    return testlib.run([testlib.bin("tfmc"), *args], timeout=120)


def tokenize(tokenizer, *args):
    return testlib.run([testlib.bin("tfm-run"), "--tokenize", "--tokenizer", tokenizer, *args])


# --- 1. nested JSON in every JSON input ------------------------------------

@testlib.case
def deep_json_config():
    path = write("deep/config.json", deep_json())
    assert_refused(tfmc(path, "-o", scratch("deep-out")), [path, "nested"], "deep config.json")


def safetensors_bytes(header_text, body=b""):
    header = header_text.encode()
    return struct.pack("<Q", len(header)) + header + body


@testlib.case
def deep_json_safetensors_header():
    path = write("deep/model.safetensors", safetensors_bytes(deep_json()))
    result = aidreams.tfm_run("-p", "hello", "-n", "2", weights=path)
    assert_refused(result, [path, "nested"], "deep safetensors header")


@testlib.case
def deep_json_index():
    path = write("deep-index/model.safetensors.index.json", deep_json())
    result = aidreams.tfm_run("-p", "hello", "-n", "2", weights=path)
    assert_refused(result, [path, "nested"], "deep safetensors index")


@testlib.case
def deep_json_tokenizer_json():
    path = write("deep-tokenizer/tokenizer.json", deep_json())
    assert_refused(tokenize(path, "-p", "hi"), [path, "nested"], "deep tokenizer.json")


@testlib.case
def deep_json_vocab_json():
    path = write("deep-vocab/vocab.json", deep_json())
    write("deep-vocab/merges.txt", "#version: 0.2\n")
    assert_refused(tokenize(path, "-p", "hi"), [path, "nested"], "deep vocab.json")


# --- 2. sizes the generated code cannot index ------------------------------

def llama_config(name, **changes):
    config = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
              "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 512,
              "max_position_embeddings": 64}
    config.update(changes)
    return write(f"sizes/{name}.json", json.dumps(config))


def refused_config(name, field, what, **changes):
    path = llama_config(name, **changes)
    assert_refused(tfmc(path, "-o", scratch(f"sizes/{name}-out")), [path, f"'{field}'"], what)


@testlib.case
def huge_vocab_times_dim():
    refused_config("vocab-times-dim", "vocab_size", "vocab_size x hidden_size past int32",
                   vocab_size=1 << 20, hidden_size=1 << 12, intermediate_size=64)


@testlib.case
def huge_layer_count():
    refused_config("layers", "num_hidden_layers", "2^31 layers", num_hidden_layers=1 << 31)


@testlib.case
def huge_context():
    refused_config("context", "max_position_embeddings", "a context of 2^31 positions",
                   max_position_embeddings=1 << 31)


@testlib.case
def huge_ffn():
    refused_config("ffn", "intermediate_size", "an FFN of 2^31", intermediate_size=1 << 31)


@testlib.case
def huge_dims_2_40():
    refused_config("dims-2-40", "vocab_size", "sizes near 2^40",
                   hidden_size=1 << 40, intermediate_size=1 << 40, vocab_size=1 << 40)


@testlib.case
def eos_list_past_vocab():
    refused_config("eos-list", "eos_token_id", "an eos list with an id past the vocabulary",
                   eos_token_id=[2, 100000])


# --- 3. file bytes in messages ----------------------------------------------

def gguf_string(text):
    data = text if isinstance(text, bytes) else text.encode()
    return struct.pack("<Q", len(data)) + data


def gguf_with_bad_key(key):
    """A GGUF whose one metadata key has the unknown value type 99."""
    return b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + gguf_string(key) + struct.pack("<I", 99)


@testlib.case
def gguf_escape_key_name():
    key = b"\x1b]0;owned\x07\x1b[31mred"
    path = write("escape.gguf", gguf_with_bad_key(key))
    result = aidreams.tfm_run("-p", "hello", "-n", "2", weights=path)
    assert_refused(result, [path, "\\x1b]0;owned"], "GGUF key with escape sequences")


@testlib.case
def gguf_huge_key_name():
    path = write("huge-key.gguf", gguf_with_bad_key(b"k" * (16 << 20)))
    result = aidreams.tfm_run("-p", "hello", "-n", "2", weights=path)
    assert_refused(result, [path, "bytes)"], "GGUF key of 16 MiB")


# --- 4. the llama2.c tokenizer on a long text -------------------------------

@testlib.case
def llama2c_tokenizer_1mb():
    # Quadratic merging took most of an hour on 1 MB; n log n takes seconds.
    # The timeout only guards against a hang; speed is tools/bench_tokenizers.py's.
    words = ("Once upon a time there was a little girl who liked to dance in the rain. "
             * 14000)[:1 << 20]
    text = write("one-megabyte.txt", words)
    stdout = testlib.check_run([testlib.bin("tfm-run"), "--tokenize", "--tokenizer",
                                aidreams.tokenizer(), "-f", text], timeout=300)
    ids = json.loads(stdout)
    if len(ids) < 100_000:
        raise AssertionError(f"1 MB of text gave only {len(ids)} tokens")


# --- 5. prompts are not response files --------------------------------------

@testlib.case
def response_file_prompt():
    notes = write("notes.txt", "x --weights=/nonexistent/other.bin")
    literal = write("literal-prompt.txt", "@" + notes)
    as_argument = json.loads(testlib.check_run(
        [testlib.bin("tfm-run"), "--tokenize", "--tokenizer", aidreams.tokenizer(),
         "-p", "@" + notes]))
    from_file = json.loads(testlib.check_run(
        [testlib.bin("tfm-run"), "--tokenize", "--tokenizer", aidreams.tokenizer(),
         "-f", literal]))
    if as_argument != from_file:
        raise AssertionError(f"-p @FILE was expanded: {as_argument} != {from_file}")
    # And generation with it runs on the weights given, not the file's.
    testlib.check_run([testlib.bin("tfm-run"), "--model", aidreams.model_dir(), "--weights",
                       aidreams.checkpoint(), "--tokenizer", aidreams.tokenizer(),
                       "-p", "@" + notes, "-n", "2", "--threads", "1"])


@testlib.case
def literal_at_prompt():
    stdout = testlib.check_run([testlib.bin("tfm-run"), "--model", aidreams.model_dir(),
                                "--weights", aidreams.checkpoint(), "--tokenizer",
                                aidreams.tokenizer(), "-p", "@user hello", "-n", "2",
                                "--threads", "1"])
    if not stdout.startswith("@user hello"):
        raise AssertionError(f"the prompt '@user hello' did not come back: {stdout!r}")


# --- 6. smaller ones ----------------------------------------------------------

LLAMA2C_HEADER_BYTES = 7 * 4


def random_checkpoint(name):
    out = scratch(name)
    testlib.check_run([testlib.bin("tfm-weights"), aidreams.config(), "-o", out, "--seed", "9"])
    return out


@testlib.case
def non_finite_weights():
    data = bytearray(open(random_checkpoint("nan-source.bin"), "rb").read())
    dim, _, _, _, _, vocab, _ = struct.unpack_from("<7i", data, 0)
    # The first weight after the token table: layer 0's attention norm.
    struct.pack_into("<f", data, LLAMA2C_HEADER_BYTES + vocab * dim * 4, float("nan"))
    path = write("nan.bin", bytes(data))
    result = aidreams.tfm_run("-p", "hello", "-n", "2", weights=path)
    assert_refused(result, [path, "blk.0.attn_norm.weight", "nan"], "a NaN weight")


@testlib.case
def logits_to_full_device():
    result = aidreams.tfm_run("-p", "hello", "--logits", "/dev/full")
    assert_refused(result, ["/dev/full", "write failed"], "--logits /dev/full",
                   absent=["LLVM ERROR"])


@testlib.case
def shard_path_escapes_folder():
    folder = scratch("escaping-index")
    os.makedirs(folder, exist_ok=True)
    index = {"metadata": {}, "weight_map": {"tok_embeddings.weight": "../outside.safetensors"}}
    path = write("escaping-index/model.safetensors.index.json", json.dumps(index))
    result = aidreams.tfm_run("-p", "hello", "-n", "2", weights=path)
    assert_refused(result, [path, "../outside.safetensors", "no '..'"],
                   "a shard outside the folder")


@testlib.case
def checkpoint_vocab_int_min():
    data = bytearray(open(random_checkpoint("int-min-source.bin"), "rb").read())
    struct.pack_into("<i", data, 5 * 4, -(1 << 31))  # vocab_size
    path = write("int-min.bin", bytes(data))
    result = aidreams.tfm_run("-p", "hello", "-n", "2", weights=path)
    assert_refused(result, [path, "vocab_size", "-2147483648"], "vocab_size -2^31",
                   absent=["bad magic"])


@testlib.case
def negative_top_k():
    result = aidreams.tfm_run("-p", "hello", "-n", "2", "--top-k", "-5")
    assert_refused(result, ["--top-k is -5,"], "--top-k -5", absent=["-5.0"])


# --- 7. usability -------------------------------------------------------------

@testlib.case
def tokenize_without_model():
    text = "Once upon a time, a girl named Lily"
    alone = json.loads(testlib.check_run(
        [testlib.bin("tfm-run"), "--tokenize", "--tokenizer", aidreams.tokenizer(), "-p", text]))
    with_model = json.loads(aidreams.tfm_run("--tokenize", "-p", text)[1])
    if alone != with_model or len(alone) < 5:
        raise AssertionError(f"tokenizing alone gave {alone}, with the model {with_model}")


TINY_GPT2 = {"model_type": "gpt2", "n_embd": 64, "n_layer": 1, "n_head": 2,
             "n_positions": 64, "vocab_size": 50257}


def tiny_gpt2_gguf(name):
    """A one-layer GPT-2 of random weights in one GGUF with llama.cpp's GPT-2
    vocabulary embedded."""
    config = write(f"{name}/config.json", json.dumps(dict(TINY_GPT2, name=name)))
    model = testlib.compile_model(config, scratch(f"{name}/model"))
    gguf = scratch(f"{name}/{name}.gguf")
    testlib.check_run([testlib.bin("tfm-weights"), "--model", model, "--format", "gguf",
                       "--vocab", testlib.shared_path("models/gguf-vocab/ggml-vocab-gpt-2.gguf"),
                       "-o", gguf, "--seed", "4"])
    return model, gguf


@testlib.case
def gguf_embedded_tokenizer():
    model, gguf = tiny_gpt2_gguf("embedded-tokenizer")
    stdout = testlib.check_run([testlib.bin("tfm-run"), "--model", model, "--weights", gguf,
                                "--tokenize", "-p", "Hello world"])
    if json.loads(stdout) != [15496, 995]:
        raise AssertionError(f"the GGUF's own GPT-2 tokenizer gave {stdout}")
    testlib.check_run([testlib.bin("tfm-run"), "--model", model, "--weights", gguf,
                       "-p", "Hello", "-n", "3", "--threads", "1"])


def generate(*args):
    return aidreams.tfm_run("-p", "Once upon a time", "-n", "40", "--ids", *args)


@testlib.case
def deterministic_seed_and_threads():
    runs = {}
    for name, args in {"seed 7": ["--temp", "0.8", "--seed", "7", "--threads", "1"],
                       "seed 7 again": ["--temp", "0.8", "--seed", "7", "--threads", "1"],
                       "seed 7, 2 threads": ["--temp", "0.8", "--seed", "7", "--threads", "2"],
                       "greedy": ["--temp", "0", "--threads", "1"],
                       "greedy, 2 threads": ["--temp", "0", "--threads", "2"]}.items():
        code, stdout, stderr = generate(*args)
        if code != 0:
            raise AssertionError(f"{name}: exit {code}:\n{stderr}")
        runs[name] = json.loads(stdout.strip().splitlines()[-1])
    for a, b in [("seed 7", "seed 7 again"), ("seed 7", "seed 7, 2 threads"),
                 ("greedy", "greedy, 2 threads")]:
        if runs[a] != runs[b]:
            raise AssertionError(f"{a} and {b} differ:\n{runs[a]}\n{runs[b]}")
    logits = {}
    for threads in ("1", "2"):
        out = scratch(f"logits-{threads}-threads.npy")
        testlib.check_run([testlib.bin("tfm-run"), "--model", aidreams.model_dir(), "--weights",
                           aidreams.checkpoint(), "--tokenizer", aidreams.tokenizer(),
                           "-p", "Once upon a time there was a cat", "--logits", out,
                           "--threads", threads])
        logits[threads] = np.load(out)
    error = float(np.max(np.abs(logits["1"] - logits["2"])) / np.max(np.abs(logits["1"])))
    if error > 1e-5:
        raise AssertionError(f"logits with 1 and 2 threads differ by {error:.2e} (relative)")
    print(f"logits across thread counts: max relative difference {error:.2e}")


@testlib.case
def concurrent_cold_cache():
    _, gguf = tiny_gpt2_gguf("cold-cache")
    cache = scratch("cold-cache/cache")
    shutil.rmtree(cache, ignore_errors=True)
    # tfmc behind a wrapper that logs each compile.
    log = scratch("cold-cache/compiles.log")
    if os.path.exists(log):
        os.remove(log)
    wrapper = write("cold-cache/tfmc", f"#!/bin/sh\necho compile >> {log}\n"
                                       f"exec {testlib.bin('tfmc')} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    env = dict(os.environ, TFMC=wrapper)
    cmd = [testlib.bin("tfm-run"), "--model-dir", gguf, "--cache-dir", cache,
           "-p", "Hello", "-n", "2", "--threads", "1"]
    runs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env) for _ in range(2)]
    for run in runs:
        stdout, stderr = run.communicate(timeout=600)
        if run.returncode != 0:
            raise AssertionError(f"a concurrent run exited {run.returncode}:\n{stderr}")
    with open(log) as f:
        compiles = f.read().count("compile")
    if compiles != 1:
        raise AssertionError(f"two cold-cache runs compiled {compiles} times, expected once")


if __name__ == "__main__":
    testlib.run_case(__doc__)
