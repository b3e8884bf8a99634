"""tfm-weights --vocab: a random-weight GGUF that carries the tokenizer of one
of llama.cpp's vocabulary GGUFs (../shared/models/gguf-vocab), read back with
the reference's independent GGUF reader; refusal of a vocabulary larger than
the model's. Kept apart from test_tfm_weights.py because it needs the shared
data (skipped without it, failed under CI).

usage: test_tfm_weights_vocab.py   (environment as in the top-level CMakeLists.txt's TFM_TEST_ENV)
"""

import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTS = os.path.join(ROOT, "tests")
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(TESTS, "reference"))

import testlib  # noqa: E402
import weight_files  # noqa: E402
from test_tfm_weights import GPT2, SMALL, compiled, from_model  # noqa: E402

GPT2_VOCAB = testlib.shared_path("models/gguf-vocab/ggml-vocab-gpt-2.gguf")
LLAMA_VOCAB = testlib.shared_path("models/gguf-vocab/ggml-vocab-llama-spm.gguf")

# Tiny models whose embeddings have a row per token of the vocabularies:
# GPT-2's 50257 tokens padded to 50304 rows, Llama's 32000 exactly.
GPT2_PADDED = dict(GPT2, name="vocab_gpt2", n_layer=1, vocab_size=50304,
                   bos_token_id=50256, eos_token_id=50256)
LLAMA_32K = dict(SMALL, name="vocab_llama", num_hidden_layers=1, vocab_size=32000)


def tokenizer_metadata(metadata):
    return [(key, value) for key, value in metadata.items() if key.startswith("tokenizer.")]


class Vocabulary(unittest.TestCase):
    def test_gguf_carries_the_vocabulary_tokenizer(self):
        for name, config, vocab in [("vocab-gpt2", GPT2_PADDED, GPT2_VOCAB),
                                    ("vocab-llama", LLAMA_32K, LLAMA_VOCAB)]:
            with self.subTest(vocab=os.path.basename(vocab)):
                model, manifest = compiled(name, config)
                plain_metadata, plain = weight_files.read_gguf(
                    from_model(model, name + "-plain.gguf", "--format", "gguf"))
                metadata, tensors = weight_files.read_gguf(
                    from_model(model, name + ".gguf", "--format", "gguf", "--vocab", vocab))
                vocab_metadata, _ = weight_files.read_gguf(vocab)

                copied = dict(tokenizer_metadata(metadata))
                self.assertIn("tokenizer.ggml.tokens", copied)
                expected = dict(tokenizer_metadata(vocab_metadata))
                # Padded to the embedding's rows as llama.cpp's converters pad.
                vocab_size = config["vocab_size"]
                tokens = list(expected["tokenizer.ggml.tokens"])
                pads = range(len(tokens), vocab_size)
                expected["tokenizer.ggml.tokens"] = tokens + [f"[PAD{i}]" for i in pads]
                expected["tokenizer.ggml.token_type"] += [5] * len(pads)  # UNUSED
                if "tokenizer.ggml.scores" in expected:
                    expected["tokenizer.ggml.scores"] += [-1000.0] * len(pads)
                self.assertEqual(list(copied), list(expected))
                self.assertEqual(copied, expected)
                # The model's own description and tensors are as without a vocabulary.
                self.assertEqual({k: v for k, v in metadata.items() if k not in dict(copied)},
                                 plain_metadata)
                self.assertEqual(metadata["general.architecture"], manifest["config"]["family"])
                self.assertEqual(list(tensors), list(plain))
                for tensor, values in plain.items():
                    self.assertTrue(bool((tensors[tensor] == values).all()), tensor)

    def test_refuses_a_vocabulary_larger_than_the_model(self):
        model, _ = compiled("model-gpt2", GPT2)
        out = os.path.join(testlib.work_dir("tfm-weights"), "vocab-too-large.gguf")
        result = testlib.run([testlib.bin("tfm-weights"), "--model", model, "-o", out,
                              "--format", "gguf", "--vocab", GPT2_VOCAB])
        testlib.assert_clean_failure(
            result, [GPT2_VOCAB, "'tokenizer.ggml.tokens'", "50257 tokens",
                     f"vocab_size {GPT2['vocab_size']}", os.path.join(model, "manifest.json")],
            "tfm-weights")
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
