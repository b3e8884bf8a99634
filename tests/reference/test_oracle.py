"""Checks the reference oracle itself, so that the logits tests can trust it:
its parts against values worked out by hand, and its incremental decoding
against its full-sequence pass. test_oracle_goldens.py checks the whole model
against llama2.c on a real checkpoint.

usage: test_oracle.py   (environment as in the top-level CMakeLists.txt's TFM_TEST_ENV)
"""

import math
import os
import sys
import unittest

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import testlib  # noqa: E402
import gpt2_oracle  # noqa: E402
from llama_oracle import (LlamaConfig, LlamaOracle, OracleError, causal_attention,  # noqa: E402
                          load_config, read_llama2c, rms_norm, rope, rope_half,
                          swiglu)

CONFIG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs")


def t(values):
    return torch.tensor(values, dtype=torch.float64)


class HandCheckedParts(unittest.TestCase):
    def assertClose(self, actual, expected):
        torch.testing.assert_close(actual, t(expected), rtol=0, atol=1e-12)

    def test_rms_norm(self):
        # rms([3, 4]) = sqrt(12.5)
        r = math.sqrt(12.5)
        self.assertClose(rms_norm(t([3.0, 4.0]), t([1.0, 2.0]), 0.0), [3 / r, 2 * 4 / r])

    def test_rms_norm_epsilon(self):
        # x = [1, 1], eps 3: 1 / sqrt(1 + 3) = 0.5
        self.assertClose(rms_norm(t([1.0, 1.0]), t([1.0, 1.0]), 3.0), [0.5, 0.5])

    def test_rope_rotates_interleaved_pairs(self):
        # head_dim 4, theta 100: pair 0 turns by pos * 1, pair 1 by pos * 100^(-1/2) = pos * 0.1
        x = t([[[1.0, 0.0, 1.0, 0.0]]])
        out = rope(x, torch.tensor([2]), 100.0)
        self.assertClose(out, [[[math.cos(2), math.sin(2), math.cos(0.2), math.sin(0.2)]]])

    def test_rope_of_the_second_component(self):
        # (0, 1) turned by 1 radian is (-sin 1, cos 1)
        out = rope(t([[[0.0, 1.0]]]), torch.tensor([1]), 10000.0)
        self.assertClose(out, [[[-math.sin(1), math.cos(1)]]])

    def test_rope_at_position_zero_is_identity(self):
        x = t([[[0.3, -1.2, 2.5, 0.7]]])
        self.assertClose(rope(x, torch.tensor([0]), 10000.0), x.tolist())

    def test_rope_half_pairs_i_with_i_plus_half(self):
        # head_dim 4, theta 100: (x0, x2) turns by pos * 1, (x1, x3) by pos * 0.1
        out = rope_half(t([[[1.0, 0.0, 0.0, 1.0]]]), torch.tensor([2]), 100.0)
        self.assertClose(out, [[[math.cos(2), -math.sin(0.2), math.sin(2), math.cos(0.2)]]])

    def test_rope_half_on_permuted_rows_is_interleaved_rope(self):
        # Hugging Face's q/k row order: interleaved row 2i+j sits at row j*hd/2+i.
        x = torch.randn(3, 2, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
        positions = torch.tensor([0, 5, 9])
        hf_order = x.reshape(3, 2, 4, 2).transpose(2, 3).reshape(3, 2, 8)
        expected = rope(x, positions, 500.0).reshape(3, 2, 4, 2).transpose(2, 3).reshape(3, 2, 8)
        torch.testing.assert_close(rope_half(hf_order, positions, 500.0), expected,
                                   rtol=0, atol=1e-12)

    def test_layer_norm_uses_the_biased_variance(self):
        # [1, 3]: mean 2, variance 1 -> [-1, 1], then * [2, 3] + [0.5, 0]
        out = gpt2_oracle.layer_norm(t([1.0, 3.0]), t([2.0, 3.0]), t([0.5, 0.0]), 0.0)
        self.assertClose(out, [-1.5, 3.0])

    def test_gelu_forms(self):
        tanh_form = 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * 1.044715))
        erf_form = 0.5 * (1 + math.erf(1 / math.sqrt(2)))
        self.assertClose(gpt2_oracle.gelu(t([1.0]), "gelu_new"), [tanh_form])
        self.assertClose(gpt2_oracle.gelu(t([1.0]), "gelu"), [erf_form])

    def test_attention_scaling_and_softmax(self):
        # head_dim 2: scores q.k / sqrt(2) = 0 and ln 3, so weights 1/4 and 3/4
        q = t([[[math.sqrt(2), 0.0]]])
        k = t([[[0.0, 0.0]], [[math.log(3), 0.0]]])
        v = t([[[4.0, 0.0]], [[0.0, 4.0]]])
        self.assertClose(causal_attention(q, k, v, torch.tensor([1])), [[[1.0, 3.0]]])

    def test_attention_is_causal(self):
        # the query at position 0 sees only key 0, whatever key 1 holds
        q = t([[[1.0, 0.0]]])
        k = t([[[0.0, 0.0]], [[50.0, 0.0]]])
        v = t([[[7.0, 8.0]], [[-100.0, -100.0]]])
        self.assertClose(causal_attention(q, k, v, torch.tensor([0])), [[[7.0, 8.0]]])

    def test_grouped_query_heads_share_kv_heads(self):
        # 4 query heads, 2 kv heads: heads 0,1 read kv head 0; heads 2,3 read kv head 1.
        # Zero queries average the values uniformly over positions 0 and 1.
        q = torch.zeros(1, 4, 2, dtype=torch.float64)
        k = torch.zeros(2, 2, 2, dtype=torch.float64)
        v = t([[[1.0, 2.0], [10.0, 20.0]], [[3.0, 4.0], [30.0, 40.0]]])
        out = causal_attention(q, k, v, torch.tensor([1]))
        self.assertClose(out, [[[2.0, 3.0], [2.0, 3.0], [20.0, 30.0], [20.0, 30.0]]])

    def test_swiglu(self):
        # silu(2) * 3 * 0.5 with silu(2) = 2 / (1 + e^-2)
        out = swiglu(t([[1.0]]), t([[2.0]]), t([[0.5]]), t([[3.0]]))
        self.assertClose(out, [[2 / (1 + math.exp(-2)) * 3 * 0.5]])


class HandCheckedModel(unittest.TestCase):
    def test_residual_path_and_untied_head(self):
        # With zero output projections (wo, w2) the layers add nothing, so the
        # logits are wcls · RMSNorm(embedding[token]) * gain.
        c = LlamaConfig(dim=2, hidden_dim=1, n_layers=1, n_heads=1, n_kv_heads=1, vocab_size=3,
                        context_length=4, norm_eps=0.0, rope_theta=10000.0, tied_embeddings=False)
        w = {
            "token_embedding": t([[3.0, 4.0], [1.0, 0.0], [0.0, 1.0]]),
            "rms_att": t([[1.0, 1.0]]), "rms_ffn": t([[1.0, 1.0]]), "rms_final": t([1.0, 2.0]),
            "wq": t([[[1.0, 0.0], [0.0, 1.0]]]), "wk": t([[[1.0, 0.0], [0.0, 1.0]]]),
            "wv": t([[[1.0, 0.0], [0.0, 1.0]]]), "wo": torch.zeros(1, 2, 2, dtype=torch.float64),
            "w1": t([[[1.0, 1.0]]]), "w3": t([[[1.0, 1.0]]]),
            "w2": torch.zeros(1, 2, 1, dtype=torch.float64),
            "wcls": t([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
        }
        r = math.sqrt(12.5)
        normed = [3 / r, 2 * 4 / r]
        logits = LlamaOracle(c, w).logits([0])
        torch.testing.assert_close(logits, t([[normed[0], normed[1], normed[0] + normed[1]]]),
                                   rtol=0, atol=1e-12)


class RandomModel(unittest.TestCase):
    """A random-weight model written by tfm-weights (GQA, tied head)."""

    @classmethod
    def setUpClass(cls):
        config_path = os.path.join(CONFIG_DIR, "gqa-hd64-tied.json")
        weights = os.path.join(testlib.work_dir("oracle"), "gqa-hd64-tied.bin")
        testlib.check_run([testlib.bin("tfm-weights"), config_path, "-o", weights, "--seed", "11"])
        cls.config = load_config(config_path)
        cls.oracle = LlamaOracle(cls.config, read_llama2c(weights, cls.config))
        cls.tokens = torch.randint(0, cls.config.vocab_size, (40,),
                                   generator=torch.Generator().manual_seed(5)).tolist()
        cls.full = cls.oracle.logits(cls.tokens)

    def test_prefill_then_decode_equals_full_sequence(self):
        cache = self.oracle.new_cache()
        rows = [self.oracle.forward(self.tokens[:9], cache)]
        rows += [self.oracle.forward([tok], cache) for tok in self.tokens[9:]]
        torch.testing.assert_close(torch.cat(rows), self.full, rtol=1e-12, atol=1e-12)

    def test_chunked_prefill_equals_full_sequence(self):
        cache = self.oracle.new_cache()
        rows = [self.oracle.forward(self.tokens[i:i + 16], cache) for i in range(0, 40, 16)]
        torch.testing.assert_close(torch.cat(rows), self.full, rtol=1e-12, atol=1e-12)

    def test_logits_are_well_conditioned(self):
        # the weight scales of tfm-weights keep activations finite and varied
        self.assertTrue(torch.isfinite(self.full).all())
        self.assertGreater(self.full.std(dim=-1).min().item(), 1e-2)

    def test_a_past_token_changes_later_logits(self):
        changed = list(self.tokens)
        changed[3] = (changed[3] + 1) % self.config.vocab_size
        other = self.oracle.logits(changed)
        torch.testing.assert_close(other[:3], self.full[:3], rtol=0, atol=0)
        self.assertGreater((other[3:] - self.full[3:]).abs().max().item(), 1e-6)

    def test_refuses_a_checkpoint_of_another_config(self):
        weights = os.path.join(testlib.work_dir("oracle"), "gqa-hd64-tied.bin")
        other = load_config(os.path.join(CONFIG_DIR, "mha-hd128-untied-oddvocab.json"))
        with self.assertRaisesRegex(OracleError, "header field 'hidden_dim'"):
            read_llama2c(weights, other)


if __name__ == "__main__":
    unittest.main()
