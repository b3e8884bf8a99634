"""aidreams260k in every weight type, end to end: tfm-quantize writes each
type from the real llama2.c checkpoint; `tfm-run --model-dir` compiles
kernels that read that file's own tensor types in place and scores
tests/data/little-stories.txt; the q8_0 model's greedy output equals f32's.

aidreams260k's rows are 64 and 172 values long: no whole k-quant block, so
its k-quant files hold q8_0 (rows of 64) and f16 (rows of 172) where
llama.cpp's would fall back too. The perplexity bounds are loose on purpose
(quantization error on a 260K-parameter model is large and model specific);
the measured values are printed for the record.

usage: test_quantized_aidreams.py perplexity|greedy
"""

import json
import math
import os
import re
import sys

import aidreams
import testlib

TYPES = ["f32", "f16", "bf16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k", "q4_k_m", "q5_k_m"]
# Largest perplexity relative to f32's: 8-bit and 16-bit types barely
# change it; 4-bit and 5-bit ones may.
BOUNDS = {"f16": 1.01, "bf16": 1.03, "q8_0": 1.02}
LOW_BIT_BOUND = 1.1
GREEDY_TOKENS = 20


def work(name):
    return os.path.join(testlib.work_dir("e2e-quantized"), name)


def quantized(dtype):
    out = work(f"aidreams260k-{dtype}.gguf")
    testlib.check_run([testlib.bin("tfm-quantize"), aidreams.checkpoint(), out, "--type", dtype,
                       "--config", aidreams.config()])
    return out


def tfm_run(weights, *args):
    return testlib.check_run([testlib.bin("tfm-run"), "--model-dir", weights,
                              "--tokenizer", aidreams.tokenizer(),
                              "--cache-dir", work("cache"), "--threads", "1", *args])


def perplexity_of(weights):
    text = testlib.source_path("tests/data/little-stories.txt")
    out = tfm_run(weights, "--perplexity", text, "-c", str(aidreams.CONTEXT_LENGTH))
    found = re.search(r"Final estimate: PPL = ([0-9.]+)", out)
    if not found:
        raise AssertionError(f"no perplexity in tfm-run's output:\n{out}")
    return float(found.group(1))


@testlib.case
def perplexity():
    values = {dtype: perplexity_of(quantized(dtype)) for dtype in TYPES}
    base = values["f32"]
    failures = []
    print(f"{'type':<8} {'perplexity':>10} {'vs f32':>8}")
    for dtype, value in values.items():
        ratio = value / base
        print(f"{dtype:<8} {value:>10.4f} {ratio:>7.4f}x")
        bound = BOUNDS.get(dtype, LOW_BIT_BOUND)
        if dtype != "f32" and not (math.isfinite(value) and ratio <= bound):
            failures.append(f"{dtype}: perplexity {value:.4f} is {ratio:.4f}x f32's, "
                            f"expected at most {bound}x")
    if failures:
        raise AssertionError("\n".join(failures))


@testlib.case
def greedy():
    with open(testlib.shared_path("goldens/aidreams260k-greedy.jsonl")) as f:
        prompts = [json.loads(line)["prompt"] for line in f if line.strip()]
    files = {dtype: quantized(dtype) for dtype in ("f32", "q8_0")}
    for prompt in prompts:
        prompt_args = ["--from-bos"] if prompt == "" else ["-p", prompt]
        ids = {}
        for dtype, weights in files.items():
            out = tfm_run(weights, "--temp", "0", "--ids", "--ignore-eos",
                          "-n", str(GREEDY_TOKENS), *prompt_args)
            ids[dtype] = json.loads(out.rstrip("\n").rpartition("\n")[2])
        if ids["q8_0"] != ids["f32"]:
            raise AssertionError(f"prompt {prompt!r}: q8_0 gave {ids['q8_0']}, f32 {ids['f32']}")
        print(f"prompt {prompt!r}: q8_0 and f32 agree on {len(ids['f32'])} ids")


if __name__ == "__main__":
    testlib.run_case(__doc__)
