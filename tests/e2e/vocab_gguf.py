"""A random-weight GGUF of a config that carries one of ../shared's
llama.cpp vocabularies (tfm-weights --vocab; the config's vocab_size
becomes the vocabulary's), and tfm-run on it through --model-dir, for the
e2e tests that run a model on text."""

import json
import os
import sys

import testlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "reference"))
import weight_files  # noqa: E402


def write(config_path, vocab, seed, work):
    """(the config as written, the GGUF's path) of `config_path` with the
    vocabulary GGUF `vocab` (a path under ../shared), under `work`."""
    vocab_path = testlib.shared_path(vocab)
    metadata, _ = weight_files.read_gguf(vocab_path)
    with open(config_path) as f:
        config = json.load(f)
    config["vocab_size"] = len(metadata["tokenizer.ggml.tokens"])
    name = os.path.splitext(os.path.basename(config_path))[0]
    sized = os.path.join(work, name + ".json")
    with open(sized, "w") as f:
        json.dump(config, f)
    gguf = os.path.join(work, name + ".gguf")
    testlib.check_run([testlib.bin("tfm-weights"), sized, "--format", "gguf", "--vocab",
                       vocab_path, "--seed", str(seed), "-o", gguf])
    return config, gguf


def tfm_run(gguf, work, *args):
    """(returncode, stdout, stderr) of tfm-run on the GGUF, compiled into a
    cache under `work`."""
    return testlib.run([testlib.bin("tfm-run"), "--model-dir", gguf, "--cache-dir",
                        os.path.join(work, "cache"), "--threads", "2", *args])
