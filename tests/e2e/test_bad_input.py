"""tfm-run refuses bad input with a clear message and a non-zero exit,
never a crash. One CTest test per case: test_bad_input.py CASE."""

import json
import os
import sys

import aidreams
import testlib


def scratch(name):
    return os.path.join(testlib.work_dir("e2e-bad-input"), name)


def random_checkpoint(config_path, name):
    """A llama2.c checkpoint of random weights from tfm-weights."""
    out = scratch(name)
    testlib.check_run([testlib.bin("tfm-weights"), config_path, "-o", out, "--seed", "3"])
    return out


def aidreams_config_with(file_stem, **changes):
    """configs/aidreams260k.json with some fields changed, written to scratch."""
    with open(aidreams.config()) as f:
        config = json.load(f)
    config.update(changes)
    path = scratch(file_stem + ".json")
    with open(path, "w") as f:
        json.dump(config, f)
    return path


@testlib.case
def truncated_checkpoint():
    whole = random_checkpoint(aidreams.config(), "aidreams-random.bin")
    # The random checkpoint of the right shape runs; cut, it must not.
    testlib.check_run([testlib.bin("tfm-run"), "--model", aidreams.model_dir(),
                       "--weights", whole, "--tokenizer", aidreams.tokenizer(),
                       "-p", "hello", "-n", "2", "--threads", "1"])
    cut = scratch("aidreams-truncated.bin")
    with open(whole, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2])
    result = aidreams.tfm_run("-p", "hello", "-n", "4", weights=cut)
    testlib.assert_clean_failure(result, [cut, "tensor", "truncated"], "truncated checkpoint")


@testlib.case
def other_shape_checkpoint():
    other = random_checkpoint(aidreams_config_with("wider", hidden_size=96, name="wider"),
                              "wider-random.bin")
    result = aidreams.tfm_run("-p", "hello", "-n", "4", weights=other)
    testlib.assert_clean_failure(
        result, [other, "header field dim is 96", "expects 64"], "checkpoint of another shape")


@testlib.case
def missing_checkpoint():
    missing = scratch("no-such-model.bin")
    result = aidreams.tfm_run("-p", "hello", "-n", "4", weights=missing)
    testlib.assert_clean_failure(result, [missing], "missing checkpoint")


@testlib.case
def missing_tokenizer():
    missing = scratch("no-such-tokenizer.bin")
    result = aidreams.tfm_run("-p", "hello", "-n", "4", tok=missing)
    testlib.assert_clean_failure(result, [missing], "missing tokenizer")


@testlib.case
def foreign_tokenizer():
    foreign = testlib.shared_path("models/llama2-tokenizer/tokenizer.bin")
    result = aidreams.tfm_run("-p", "hello", "-n", "4", tok=foreign)
    testlib.assert_clean_failure(result, [foreign, "foreign tokenizer", "32000", "512"],
                                 "foreign tokenizer")


@testlib.case
def empty_prompt():
    result = aidreams.tfm_run("-p", "", "-n", "4")
    testlib.assert_clean_failure(result, ["empty prompt", "--from-bos"], "empty prompt")


@testlib.case
def prompt_past_context():
    long_prompt = " ".join(["whispers of vectors"] * 60)
    result = aidreams.tfm_run("-p", long_prompt, "-n", "1")
    testlib.assert_clean_failure(result, ["prompt", "context of 128", "tfmc --context N"],
                                 "prompt past the context")


@testlib.case
def steps_past_context():
    result = aidreams.tfm_run("-p", "Echoes of", "-n", "200")
    testlib.assert_clean_failure(result, ["-n asks for 200", "the context is 128"],
                                 "-n past the context")


@testlib.case
def device_for_a_cpu_library():
    result = aidreams.tfm_run("-p", "hello", "-n", "4", "--device", "0")
    testlib.assert_clean_failure(result, ["a device was chosen (0)", "runs on the CPU"],
                                 "--device for a CPU library")
    result = aidreams.tfm_run("-p", "hello", "-n", "4", "--device", "-1")
    testlib.assert_clean_failure(result, ["--device is -1, expected 0 or more"],
                                 "a negative --device")


@testlib.case
def model_dir_without_library():
    empty = scratch("empty-model-dir")
    os.makedirs(empty, exist_ok=True)
    result = aidreams.tfm_run("-p", "hello", "-n", "4", model=empty)
    testlib.assert_clean_failure(result, [empty, "lib<name>.so"], "model folder without a library")


@testlib.case
def kquant_rows_not_whole_blocks():
    # aidreams260k's rows are 64 values: no whole q4_k block of 256.
    result = testlib.run([testlib.bin("tfmc"), aidreams.config(), "--dtype", "q4_k",
                          "-o", scratch("q4k-model")])
    testlib.assert_clean_failure(
        result, ["--dtype q4_k", "token_embd.weight", "rows of 64", "block of 256",
                 "--weights-like"], "k-quant compile of rows without whole blocks")


@testlib.case
def weights_of_another_type():
    # A library compiled to read q8_0 in place takes a q8_0 file, not an f16 one.
    config = testlib.source_path("tests/reference/configs/mha-hd128-untied-oddvocab.json")
    model = testlib.compile_model(config, scratch("q8_0-model"), ("--dtype", "q8_0"))
    f16 = scratch("f16-weights.gguf")
    testlib.check_run([testlib.bin("tfm-weights"), config, "--format", "gguf", "--dtype", "f16",
                       "-o", f16])
    result = testlib.run([testlib.bin("tfm-logits"), "--model", model, "--weights", f16,
                          "--tokens", "1,2", "--prefill", "2", "--out", scratch("l.npy")])
    testlib.assert_clean_failure(
        result, [f16, "token_embd.weight", "is f16", "compiled to read it as q8_0",
                 "--weights-like"], "weights of another type")


def model_option(parser):
    parser.add_argument("--model", help="a model folder to use instead of compiling "
                        "configs/aidreams260k.json with tfmc")


def use_model(args):
    aidreams.model_override = args.model


if __name__ == "__main__":
    testlib.run_case(__doc__, add_arguments=model_option, setup=use_model)
