"""The aidreams260k model, compiled once, with its real checkpoint and
tokenizer from TFM_SHARED_DIR; shared by the e2e tests."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib  # noqa: E402

CONTEXT_LENGTH = 128  # max_position_embeddings in configs/aidreams260k.json


def config():
    return testlib.source_path("configs/aidreams260k.json")


def checkpoint():
    return testlib.shared_path("models/aidreams260k/model.bin")


def tokenizer():
    return testlib.shared_path("models/aidreams260k/tokenizer.bin")


# Set by a test's --model flag: a model folder to use instead of tfmc's.
model_override = None


def model_dir():
    """The model folder: model_override, or aidreams260k compiled by tfmc
    once under the work dir."""
    if model_override:
        return model_override
    out = os.path.join(testlib.work_dir("e2e"), "aidreams260k")
    return testlib.compile_model(config(), out)


def tfm_run(*args, model=None, weights=None, tok=None):
    """Runs tfm-run on the compiled model with the real checkpoint and
    tokenizer unless others are given; returns (returncode, stdout, stderr)."""
    cmd = [testlib.bin("tfm-run"),
           "--model", model or model_dir(),
           "--weights", weights or checkpoint(),
           "--tokenizer", tok or tokenizer(),
           "--threads", "1",
           *args]
    return testlib.run(cmd)
