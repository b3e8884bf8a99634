"""tfm-run --embeddings on a random-weight BERT in one GGUF (tfm-weights
--vocab: llama.cpp's bge vocabulary), one case each:
  pooled    every --pooling, with and without --normalize, from text through
            the file's WordPiece tokenizer: each within 1e-4 relative error
            of the float64 oracle (bert_oracle.py) on the ids tfm-run gives
  library   the same file through libtfm.so's Python binding
            (Model.hidden_states, tfm_seq_encode): every token's hidden
            state within 1e-4 of the oracle's
  refusals  what an encoder or a decoder cannot do, refused by name: a decoder
            asked for --embeddings, an encoder asked to generate or score, an
            unknown --pooling, --pooling without --embeddings, and a text
            longer than the compiled context

usage: test_embeddings.py pooled|library|refusals   (environment as in CMakeLists.txt)
       test_embeddings.py --list
"""

import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "reference"))

import aidreams  # noqa: E402
import bert_oracle  # noqa: E402
import testlib  # noqa: E402
import vocab_gguf  # noqa: E402
import weight_files  # noqa: E402

TOLERANCE = 1e-4
TEXT = "The lighthouse keeper wrote down the weather every morning at six."


def work(name):
    return os.path.join(testlib.work_dir("e2e/embeddings"), name)


def bert_gguf():
    """A BERT of the bert-h4x32 shape, with the bge vocabulary's size."""
    return vocab_gguf.write(testlib.source_path("tests/reference/configs/bert-h4x32.json"),
                            "models/gguf-vocab/ggml-vocab-bert-bge.gguf", 5, work(""))


def tfm_run(gguf, *args):
    return vocab_gguf.tfm_run(gguf, work(""), *args)


@testlib.case
def pooled():
    config, gguf = bert_gguf()
    code, stdout, stderr = tfm_run(gguf, "--tokenize", "-p", TEXT)
    assert code == 0, stderr
    ids = json.loads(stdout)
    assert len(ids) > 3, ids
    oracle = bert_oracle.BertOracle(
        config, bert_oracle.hf_names_from_gguf(weight_files.read_gguf(gguf)[1]))
    for pooling in bert_oracle.POOLING_MODES:
        for normalize in (False, True):
            out = work(f"{pooling}{'-normalized' if normalize else ''}.npy")
            code, _, stderr = tfm_run(gguf, "--embeddings", out, "--pooling", pooling, "-p", TEXT,
                                      *(["--normalize"] if normalize else []))
            assert code == 0, stderr
            ours = np.load(out).astype(np.float64)
            ref = oracle.embedding(ids, pooling, normalize).numpy().reshape(-1, ours.shape[-1])
            assert ours.shape == ref.shape, (pooling, ours.shape, ref.shape)
            error = max(float(np.max(np.abs(o - r)) / np.max(np.abs(r)))
                        for o, r in zip(ours, ref))
            print(f"{pooling}{' normalized' if normalize else ''}: {ours.shape}, "
                  f"max relative error {error:.3e}")
            assert error <= TOLERANCE, (pooling, normalize, error)


# Run in a child process: the binding loads libtfm.so when imported, and
# names it through TFM_LIBRARY, set there.
LIBRARY_PROBE = """
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import tfm
model = tfm.Model(sys.argv[2], cache_dir=sys.argv[3], threads=2)
assert model.is_encoder and model.hidden_size == 128, (model.is_encoder, model.hidden_size)
ids = model.tokenize(sys.argv[4])
np.save(sys.argv[5], model.hidden_states(ids))
print(ids)
"""


@testlib.case
def library():
    config, gguf = bert_gguf()
    out = work("library.npy")
    env = dict(os.environ, TFM_LIBRARY=os.path.join(os.path.dirname(testlib.bin("tfm-run")),
                                                    "..", "lib", "libtfm.so.1"),
               TFMC=testlib.bin("tfmc"))
    done = subprocess.run([sys.executable, "-c", LIBRARY_PROBE, testlib.source_path("python"),
                           gguf, work("library-cache"), TEXT, out],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    ids = json.loads(done.stdout.strip().splitlines()[-1])
    oracle = bert_oracle.BertOracle(
        config, bert_oracle.hf_names_from_gguf(weight_files.read_gguf(gguf)[1]))
    ours, ref = np.load(out).astype(np.float64), oracle.hidden(ids).numpy()
    assert ours.shape == ref.shape, (ours.shape, ref.shape)
    error = max(float(np.max(np.abs(o - r)) / np.max(np.abs(r))) for o, r in zip(ours, ref))
    print(f"hidden states of {len(ids)} tokens through libtfm: max relative error {error:.3e}")
    assert error <= TOLERANCE, error


@testlib.case
def refusals():
    _, gguf = bert_gguf()
    out = work("refused.npy")
    decoder = aidreams.tfm_run("--embeddings", out, "-p", "hello")
    testlib.assert_clean_failure(decoder, ["--embeddings", "decoder", "encoder"],
                                 "--embeddings on a decoder")
    for job, mentions in ((["-p", TEXT, "-n", "4"], ["encoder", "generated text"]),
                          (["--logits", out, "-p", TEXT], ["encoder", "--logits"])):
        testlib.assert_clean_failure(tfm_run(gguf, *job), mentions, "a decoder's job")
    testlib.assert_clean_failure(tfm_run(gguf, "--embeddings", out, "--pooling", "max", "-p", TEXT),
                                 ["--pooling", "max", "mean"], "an unknown pooling")
    testlib.assert_clean_failure(tfm_run(gguf, "--pooling", "mean", "-p", TEXT),
                                 ["--pooling", "--embeddings"], "--pooling alone")
    long_text = " ".join(["weather"] * 200)
    testlib.assert_clean_failure(tfm_run(gguf, "--embeddings", out, "-p", long_text),
                                 ["context", "96"], "a text past the context")
    assert not os.path.exists(out), "a refused job wrote its output"


if __name__ == "__main__":
    testlib.run_case(__doc__)
