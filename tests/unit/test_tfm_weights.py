"""tfm-weights: the llama2.c layout, determinism, value ranges, refusals.

usage: test_tfm_weights.py   (environment as in tests/CMakeLists.txt's TFM_TEST_ENV)
"""

import json
import math
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import testlib  # noqa: E402

SMALL = {
    "model_type": "llama", "name": "weights_test",
    "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 37,
    "max_position_embeddings": 16, "rope_theta": 10000.0, "tie_word_embeddings": False,
}


def write_config(name, **changes):
    config = dict(SMALL, **changes)
    path = os.path.join(testlib.work_dir("tfm-weights"), name + ".json")
    with open(path, "w") as f:
        json.dump(config, f)
    return path, config


def generate(config_path, out_name, seed=0):
    out = os.path.join(testlib.work_dir("tfm-weights"), out_name)
    result = testlib.run([testlib.bin("tfm-weights"), config_path, "-o", out, "--seed", str(seed)])
    return out, result


def split_llama2c(path, c):
    """The file cut into its tensors, following the llama2.c layout."""
    d, L, hidden, vocab = c["hidden_size"], c["num_hidden_layers"], c["intermediate_size"], c["vocab_size"]
    hd = d // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    ctx = c["max_position_embeddings"]
    shapes = [("token_embedding", (vocab, d)), ("rms_att", (L, d)), ("wq", (L, q, d)),
              ("wk", (L, kv, d)), ("wv", (L, kv, d)), ("wo", (L, d, q)), ("rms_ffn", (L, d)),
              ("w1", (L, hidden, d)), ("w2", (L, d, hidden)), ("w3", (L, hidden, d)),
              ("rms_final", (d,)), ("freq_cis_real", (ctx, hd // 2)), ("freq_cis_imag", (ctx, hd // 2))]
    if not c["tie_word_embeddings"]:
        shapes.append(("wcls", (vocab, d)))
    header = np.fromfile(path, dtype="<i4", count=7)
    data = np.fromfile(path, dtype="<f4", offset=28)
    tensors, offset = {}, 0
    for name, shape in shapes:
        count = math.prod(shape)
        tensors[name] = data[offset:offset + count].reshape(shape)
        offset += count
    return header, tensors, offset == data.size


class Layout(unittest.TestCase):
    def test_untied_header_tensors_and_size(self):
        config_path, c = write_config("untied")
        path, result = generate(config_path, "untied.bin", seed=3)
        self.assertEqual(result[0], 0, result[2])
        header, tensors, exact = split_llama2c(path, c)
        self.assertEqual(header.tolist(), [64, 96, 2, 4, 2, -37, 16])
        self.assertTrue(exact, "file size does not match the llama2.c layout of the config")

        # embeddings about N(0, 1); projections within 1/sqrt(fan_in); norm gains near 1
        emb = tensors["token_embedding"]
        self.assertLess(abs(emb.mean()), 0.1)
        self.assertAlmostEqual(float(emb.std()), 1.0, delta=0.1)
        for name, fan_in in [("wq", 64), ("wk", 64), ("wv", 64), ("wo", 64), ("w1", 64),
                             ("w2", 96), ("w3", 64), ("wcls", 64)]:
            bound = 1 / math.sqrt(fan_in)
            self.assertLessEqual(np.abs(tensors[name]).max(), bound * (1 + 1e-6), name)
            self.assertGreater(np.abs(tensors[name]).max(), bound * 0.9, name)
        for name in ["rms_att", "rms_ffn", "rms_final"]:
            self.assertTrue(((tensors[name] >= 0.9) & (tensors[name] <= 1.1)).all(), name)
        # layers and tensors draw different values
        self.assertFalse(np.array_equal(tensors["wq"][0], tensors["wq"][1]))
        self.assertFalse(np.array_equal(tensors["w1"], tensors["w3"]))

        # RoPE tables: cos and sin of pos * theta^(-2i/head_dim), head_dim 16
        pos = np.arange(16)[:, None]
        freqs = 10000.0 ** (-np.arange(0, 16, 2) / 16)
        np.testing.assert_allclose(tensors["freq_cis_real"], np.cos(pos * freqs), atol=1e-6)
        np.testing.assert_allclose(tensors["freq_cis_imag"], np.sin(pos * freqs), atol=1e-6)

    def test_tied_head_has_positive_vocab_and_no_wcls(self):
        config_path, c = write_config("tied", tie_word_embeddings=True)
        path, result = generate(config_path, "tied.bin")
        self.assertEqual(result[0], 0, result[2])
        header, _, exact = split_llama2c(path, c)
        self.assertEqual(header[5], 37)
        self.assertTrue(exact)

    def test_quiet_when_stderr_is_not_a_terminal(self):
        config_path, _ = write_config("quiet")
        _, (returncode, stdout, stderr) = generate(config_path, "quiet.bin")
        self.assertEqual(returncode, 0, stderr)
        self.assertEqual(stdout + stderr, "")


class Determinism(unittest.TestCase):
    def read(self, path):
        with open(path, "rb") as f:
            return f.read()

    def test_same_seed_same_bytes_other_seed_other_values(self):
        config_path, _ = write_config("seeded")
        a, ra = generate(config_path, "seed7a.bin", seed=7)
        b, rb = generate(config_path, "seed7b.bin", seed=7)
        c, rc = generate(config_path, "seed8.bin", seed=8)
        self.assertEqual((ra[0], rb[0], rc[0]), (0, 0, 0))
        self.assertEqual(self.read(a), self.read(b))
        self.assertNotEqual(self.read(a)[28:], self.read(c)[28:])

    def test_a_tensor_does_not_depend_on_the_others(self):
        # One more layer appends to each group but leaves the shared tensors as they were.
        one_path, one = write_config("one-layer", num_hidden_layers=1)
        two_path, two = write_config("two-layers", num_hidden_layers=2)
        a, _ = generate(one_path, "one-layer.bin", seed=5)
        b, _ = generate(two_path, "two-layers.bin", seed=5)
        _, ta, _ = split_llama2c(a, one)
        _, tb, _ = split_llama2c(b, two)
        np.testing.assert_array_equal(ta["token_embedding"], tb["token_embedding"])
        np.testing.assert_array_equal(ta["wq"][0], tb["wq"][0])
        np.testing.assert_array_equal(ta["wcls"], tb["wcls"])


class Refusals(unittest.TestCase):
    def test_head_dim_other_than_dim_over_heads(self):
        config_path, _ = write_config("head-dim", head_dim=32)
        out, result = generate(config_path, "head-dim.bin")
        testlib.assert_clean_failure(result, [config_path, "'head_dim'", "llama2c"], "tfm-weights")
        self.assertFalse(os.path.exists(out))

    def test_invalid_config_names_file_and_field(self):
        config_path, _ = write_config("bad-kv", num_key_value_heads=3)
        _, result = generate(config_path, "bad-kv.bin")
        testlib.assert_clean_failure(result, [config_path, "'num_key_value_heads'"], "tfm-weights")

    def test_missing_config(self):
        missing = os.path.join(testlib.work_dir("tfm-weights"), "no-such-config.json")
        _, result = generate(missing, "none.bin")
        testlib.assert_clean_failure(result, [missing], "tfm-weights")

    def test_unwritable_output(self):
        config_path, _ = write_config("unwritable")
        out = os.path.join(testlib.work_dir("tfm-weights"), "no-such-dir", "w.bin")
        result = testlib.run([testlib.bin("tfm-weights"), config_path, "-o", out])
        testlib.assert_clean_failure(result, [out], "tfm-weights")

    def test_unknown_format(self):
        config_path, _ = write_config("format")
        out = os.path.join(testlib.work_dir("tfm-weights"), "format.bin")
        result = testlib.run([testlib.bin("tfm-weights"), config_path, "-o", out, "--format", "gguf"])
        testlib.assert_clean_failure(result, ["gguf"], "tfm-weights")


if __name__ == "__main__":
    unittest.main()
