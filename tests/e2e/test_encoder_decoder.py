"""tfm-run --source on a random-weight T5 in one GGUF (tfm-weights --vocab:
llama.cpp's SentencePiece vocabulary), one case each:
  logits    --source TEXT --logits: the source through the file's tokenizer,
            encoded once, then the decoder's start token and -p's words
            scored; every row within 1e-4 relative error of the float64
            oracle (t5_oracle.py) on the ids tfm-run gives
  generate  --source TEXT -n 6 at temperature 0: the greedy ids equal the
            oracle's argmax continuation from the start token
  refusals  refused by name: --source on a model without an encoder, a T5
            run without --source, a source longer than the compiled maximum,
            --embeddings on an encoder-decoder

usage: test_encoder_decoder.py logits|generate|refusals   (environment as in CMakeLists.txt)
       test_encoder_decoder.py --list
"""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "reference"))

import aidreams  # noqa: E402
import t5_oracle  # noqa: E402
import testlib  # noqa: E402
import vocab_gguf  # noqa: E402
import weight_files  # noqa: E402

TOLERANCE = 1e-4
SOURCE = "translate English to German: The lighthouse keeper wrote down the weather."
DECODER_TEXT = "Der Leuchtturm"


def work(name):
    return os.path.join(testlib.work_dir("e2e/encoder-decoder"), name)


def t5_gguf():
    """The t5-v11-gated-untied shape with the vocabulary's size, in a GGUF."""
    return vocab_gguf.write(
        testlib.source_path("tests/reference/configs/t5-v11-gated-untied.json"),
        "models/gguf-vocab/ggml-vocab-llama-spm.gguf", 7, work(""))


def tfm_run(gguf, *args):
    return vocab_gguf.tfm_run(gguf, work(""), *args)


def ids_of(gguf, *args):
    code, stdout, stderr = tfm_run(gguf, "--tokenize", *args)
    assert code == 0, stderr
    return json.loads(stdout)


def oracle_of(config, gguf):
    return t5_oracle.T5Oracle(config, t5_oracle.hf_names_from_gguf(weight_files.read_gguf(gguf)[1]))


@testlib.case
def logits():
    config, gguf = t5_gguf()
    source = ids_of(gguf, "--source", SOURCE)
    decoder = ids_of(gguf, "-p", DECODER_TEXT)
    assert decoder[0] == config["decoder_start_token_id"] and len(decoder) > 2, decoder
    out = work("logits.npy")
    code, _, stderr = tfm_run(gguf, "--source", SOURCE, "-p", DECODER_TEXT, "--logits", out)
    assert code == 0, stderr
    ours = np.load(out).astype(np.float64)
    ref = oracle_of(config, gguf).decoder_logits(source, decoder).numpy()
    assert ours.shape == ref.shape, (ours.shape, ref.shape)
    error = max(float(np.max(np.abs(o - r)) / np.max(np.abs(r))) for o, r in zip(ours, ref))
    print(f"{len(source)} source tokens, {len(decoder)} decoder tokens: max relative error "
          f"{error:.3e}")
    assert error <= TOLERANCE, error


@testlib.case
def generate():
    config, gguf = t5_gguf()
    source = ids_of(gguf, "--source", SOURCE)
    code, stdout, stderr = tfm_run(gguf, "--source", SOURCE, "-n", "6", "--temp", "0",
                                   "--ignore-eos", "--ids")
    assert code == 0, stderr
    ours = json.loads(stdout.strip().splitlines()[-1])
    oracle = oracle_of(config, gguf)
    expected = [oracle.decoder_start_token_id]
    while len(expected) < 7:
        expected.append(int(oracle.decoder_logits(source, expected)[-1].argmax()))
    print(f"greedy ids {ours}, oracle's {expected}")
    assert ours == expected, (ours, expected)


@testlib.case
def refusals():
    _, gguf = t5_gguf()
    testlib.assert_clean_failure(aidreams.tfm_run("--source", "hello", "-n", "2"),
                                 ["--source", "no encoder"], "--source on a decoder")
    testlib.assert_clean_failure(tfm_run(gguf, "-p", "hello", "-n", "2"),
                                 ["encoder-decoder", "--source"], "T5 without --source")
    long_source = " ".join(["weather"] * 400)
    testlib.assert_clean_failure(tfm_run(gguf, "--source", long_source, "-n", "2"),
                                 ["--source", "160", "longer"], "a source past the maximum")
    out = work("refused.npy")
    testlib.assert_clean_failure(tfm_run(gguf, "--source", SOURCE, "--embeddings", out),
                                 ["encoder-decoder", "--embeddings"], "--embeddings on T5")
    assert not os.path.exists(out), "a refused job wrote its output"


if __name__ == "__main__":
    testlib.run_case(__doc__)
