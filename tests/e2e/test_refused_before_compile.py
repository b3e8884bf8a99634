"""tfm-run --model-dir refuses what it cannot run before it starts a compile:
in under a second, naming what is unsupported, with no tfmc process started
(TFMC names a stand-in that leaves a mark when run). One case each:
  architecture    a GGUF whose general.architecture tfmc does not build
  pre_tokenizer   a GGUF whose tokenizer.ggml.pre tfm does not split words by
  no_tokenizer    a GGUF without a tokenizer: pass --tokenizer
  rope_scaling    a config.json whose rope_scaling kind is not compiled
  config_field    a config.json asking for a variant tfm does not compile (Qwen 2's
                  sliding window over its lower layers)

usage: test_refused_before_compile.py CASE   (environment as in the top-level CMakeLists.txt)
       test_refused_before_compile.py --list
"""

import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import aidreams  # noqa: E402
import testlib  # noqa: E402
from gguf_edit import GgufEdit  # noqa: E402

LIMIT_S = 1.0


def work(case):
    path = testlib.work_dir(f"e2e-refused-before-compile/{case}")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def small_gguf(scratch, edit):
    """A GPT-2-vocabulary GGUF of aidreams' shape, its metadata edited by `edit`."""
    with open(aidreams.config()) as f:
        config = json.load(f)
    config.update(name="small", vocab_size=50257)
    config_path = os.path.join(scratch, "small.json")
    with open(config_path, "w") as f:
        json.dump(config, f)
    written = os.path.join(scratch, "written.gguf")
    testlib.check_run([testlib.bin("tfm-weights"), config_path, "--format", "gguf", "--vocab",
                       testlib.shared_path("models/gguf-vocab/ggml-vocab-gpt-2.gguf"),
                       "-o", written])
    gguf = GgufEdit.read(written)
    edit(gguf.metadata)
    path = os.path.join(scratch, "model.gguf")
    gguf.write(path)
    return path


def hf_folder(scratch, changes):
    """A config.json of aidreams' shape with `changes`, and safetensors weights."""
    folder = os.path.join(scratch, "hf")
    testlib.check_run([testlib.bin("tfm-weights"), aidreams.config(), "--format", "safetensors",
                       "-o", folder])
    with open(aidreams.config()) as f:
        config = json.load(f)
    config.update(changes)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f)
    return folder


def assert_refused_before_compile(scratch, model, mentions, *args):
    marker = os.path.join(scratch, "tfmc-ran")
    stand_in = os.path.join(scratch, "tfmc")
    with open(stand_in, "w") as f:
        f.write(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    os.chmod(stand_in, 0o755)
    env = dict(os.environ, TFMC=stand_in, TFM_CACHE_DIR=os.path.join(scratch, "cache"))
    command = [testlib.bin("tfm-run"), "--model-dir", model, "-p", "Hello", "-n", "1", *args]
    start = time.monotonic()
    result = testlib.run(command, env=env)
    elapsed = time.monotonic() - start
    testlib.assert_clean_failure(result, mentions, "tfm-run --model-dir " + model)
    assert not os.path.exists(marker), "tfm-run started tfmc before refusing"
    assert elapsed < LIMIT_S, f"refused after {elapsed:.2f} s, expected under {LIMIT_S} s"
    print(f"ok: refused in {elapsed:.2f} s, no compile: {result[2].strip()}")


@testlib.case
def architecture():
    scratch = work("architecture")
    model = small_gguf(scratch, lambda m: m.update({
        "general.architecture": (GgufEdit.STRING, "deepseek2")}))
    assert_refused_before_compile(scratch, model, [
        "'general.architecture' is \"deepseek2\"", "expected one of \"llama\""])


@testlib.case
def pre_tokenizer():
    scratch = work("pre_tokenizer")
    model = small_gguf(scratch, lambda m: m.update({
        "tokenizer.ggml.pre": (GgufEdit.STRING, "deepseek-coder")}))
    assert_refused_before_compile(scratch, model, [
        "tokenizer.ggml.pre is \"deepseek-coder\"", "\"llama-bpe\""])


@testlib.case
def no_tokenizer():
    scratch = work("no_tokenizer")

    def drop_tokenizer(metadata):
        for key in [k for k in metadata if k.startswith("tokenizer.")]:
            del metadata[key]
    model = small_gguf(scratch, drop_tokenizer)
    assert_refused_before_compile(scratch, model, ["holds no tokenizer", "pass --tokenizer"])


@testlib.case
def rope_scaling():
    scratch = work("rope_scaling")
    folder = hf_folder(scratch, {"rope_scaling": {"rope_type": "yarn", "factor": 4.0}})
    assert_refused_before_compile(scratch, folder, ["'rope_scaling'", "\"llama3\""])


@testlib.case
def config_field():
    scratch = work("config_field")
    folder = hf_folder(scratch, {"model_type": "qwen2", "use_sliding_window": True})
    assert_refused_before_compile(scratch, folder, ["'use_sliding_window'", "found true"])


if __name__ == "__main__":
    testlib.run_case(__doc__)
