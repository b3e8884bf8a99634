"""Checks the T5 oracle (t5_oracle.py) itself: relative-position buckets,
T5LayerNorm, the feed-forwards and the tied head's rescale against values
worked out by hand, a one-block encoder-decoder against a scalar
re-computation, the decoder's causality, the names and refusals, and
llama.cpp's GGUF names on files written by the peers' make_random_gguf.py
when that script and llama.cpp's gguf-py are at hand (skipped otherwise).

usage: test_t5_oracle.py   (needs torch; no environment variables)
  PEERS (default $TMPDIR/peers or /tmp/peers): where llama.cpp/gguf-py is,
  TFM_SHARED_DIR (default ../shared beside the repository): peers/make_random_gguf.py.
"""

import math
import os
import subprocess
import sys
import tempfile
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from t5_oracle import (OracleError, T5Oracle, config_from_gguf,  # noqa: E402
                       dense_act_dense, dense_gated_act_dense, feed_forward_proj, handles,
                       hf_names_from_gguf, position_bias, relative_position_bucket,
                       t5_layer_norm)
from weight_files import read_gguf  # noqa: E402


def t(values):
    return torch.tensor(values, dtype=torch.float64)


def close(test, actual, expected, tol=1e-12):
    torch.testing.assert_close(actual, expected if torch.is_tensor(expected) else t(expected),
                               rtol=0, atol=tol)


POSITIONS = [-200, -128, -20, -9, -8, -1, 0, 1, 7, 8, 20, 127, 128, 500]


class Buckets(unittest.TestCase):
    """num_buckets 32, max_distance 128, from the formula of T5's paper and
    modeling_t5.py: of the n buckets for one direction, distances below n/2
    are exact, a larger distance d takes n/2 + floor(ln(d / (n/2)) /
    ln(128 / (n/2)) * n/2), at most n - 1."""

    def buckets(self, bidirectional):
        return relative_position_bucket(torch.tensor(POSITIONS), bidirectional, 32, 128).tolist()

    def test_bidirectional(self):
        # n = 16 per direction (keys after the query add 16), exact below 8:
        #   -20: 8 + floor(ln(20/8) / ln(16) * 8) = 8 + floor(0.9163 / 2.7726 * 8)
        #        = 8 + floor(2.644) = 10
        #   -9:  8 + floor(ln(1.125) / ln(16) * 8) = 8 + floor(0.340) = 8
        #   -128: 8 + floor(ln(16) / ln(16) * 8) = 16, capped at 15; so is -200
        #   127: 16 + 8 + floor(ln(15.875) / ln(16) * 8) = 16 + 8 + floor(7.977) = 31
        #   20: 16 + 10 = 26;  8: 16 + 8 = 24;  7: 16 + 7 = 23;  1: 17
        self.assertEqual(self.buckets(True),
                         [15, 15, 10, 8, 8, 1, 0, 17, 23, 24, 26, 31, 31, 31])

    def test_causal(self):
        # n = 32, exact below 16, keys after the query (positive) all bucket 0:
        #   -20: 16 + floor(ln(20/16) / ln(128/16) * 16) = 16 + floor(0.2231 / 2.0794 * 16)
        #        = 16 + floor(1.717) = 17
        #   -128: 16 + floor(ln(8) / ln(8) * 16) = 32, capped at 31; so is -200
        #   -9, -8, -1, 0: themselves
        self.assertEqual(self.buckets(False),
                         [31, 31, 17, 9, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0])

    def test_more_boundaries(self):
        # bidirectional: 32 -> 8 + ln(4) / ln(16) * 8 = 8 + 4 exactly (float32
        # rounds it to 4, as transformers does) = 12; 16 -> 8 + 2 = 10 (keys
        # after: 26); 64 -> 8 + 6 = 14. causal: -32 -> 16 + ln(2) / ln(8) * 16
        # = 16 + floor(5.33) = 21; -64 -> 16 + floor(10.67) = 26.
        got = relative_position_bucket(torch.tensor([-32, -16, 16, -64]), True, 32, 128)
        self.assertEqual(got.tolist(), [12, 10, 26, 14])
        got = relative_position_bucket(torch.tensor([-32, -64, -127]), False, 32, 128)
        self.assertEqual(got.tolist(), [21, 26, 31])

    def test_max_distance_and_bucket_count(self):
        # max_distance 64, bidirectional 32: -32 -> 8 + floor(ln(4) / ln(8) * 8)
        # = 8 + floor(5.33) = 13; -64 -> 8 + 8 = 16, capped at 15.
        got = relative_position_bucket(torch.tensor([-32, -64]), True, 32, 64)
        self.assertEqual(got.tolist(), [13, 15])
        # 8 buckets, bidirectional: 4 a side, exact below 2; -3 -> 2 + floor(ln(1.5)
        # / ln(64) * 2) = 2 + floor(0.195) = 2; -16 -> 2 + floor(ln(8) / ln(64) * 2) = 3.
        got = relative_position_bucket(torch.tensor([-1, -3, -16, 1, 3, 16]), True, 8, 128)
        self.assertEqual(got.tolist(), [1, 2, 3, 5, 6, 7])

    def test_position_bias_orientation(self):
        # bias[h, i, j] = table[bucket(j - i), h], j the key: the table's
        # entry 10 * bucket + head shows which bucket each cell used.
        table = t([[10.0 * b + h for h in range(2)] for b in range(32)])
        enc = position_bias(table, 3, 3, bidirectional=True)
        self.assertEqual(tuple(enc.shape), (2, 3, 3))
        close(self, enc[0], [[0, 170, 180], [10, 0, 170], [20, 10, 0]])
        close(self, enc[1], enc[0] + 1)
        dec = position_bias(table, 3, 3, bidirectional=False)
        close(self, dec[0], [[0, 0, 0], [10, 0, 0], [20, 10, 0]])


class Parts(unittest.TestCase):
    def test_layer_norm_scales_only(self):
        # [1, 2, 2, 4]: mean square (1 + 4 + 4 + 16) / 4 = 6.25, root 2.5 (eps 0):
        # [0.4, 0.8, 0.8, 1.6] * [1, 0.5, 2, -1]
        close(self, t5_layer_norm(t([1.0, 2.0, 2.0, 4.0]), t([1.0, 0.5, 2.0, -1.0]), 0.0),
              [0.4, 0.4, 1.6, -1.6])
        # eps inside the root: [3, 4] has mean square 12.5, + 3.5 = 16, root 4
        close(self, t5_layer_norm(t([3.0, 4.0]), t([1.0, 1.0]), 3.5), [0.75, 1.0])
        # no mean taken off: a constant vector is not sent to 0 (LayerNorm's would be)
        close(self, t5_layer_norm(t([5.0, 5.0]), t([1.0, 1.0]), 0.0), [1.0, 1.0])

    def test_plain_and_gated_feed_forward(self):
        x = t([1.0, -2.0])
        wi = t([[1.0, 1.0], [2.0, 0.5]])   # wi x = [-1, 1]
        wo = t([[1.0, 2.0], [3.0, 4.0]])
        # relu: [0, 1] -> wo: [2, 4]
        close(self, dense_act_dense(x, wi, wo, "relu"), [2.0, 4.0])
        # gated gelu_new: gelu_new(-1) = -0.158808009, gelu_new(1) = 0.841191991;
        # wi_1 x = [0.5, 2]; product [-0.079404005, 1.682383981];
        # wo: [-0.0794 + 2 * 1.6824, 3 * -0.0794 + 4 * 1.6824]
        wi_1 = t([[0.5, 0.0], [0.0, -1.0]])
        close(self, dense_gated_act_dense(x, wi, wi_1, wo, "gelu_new"),
              [3.2853639577372453, 6.491323910778629])
        # the erf GELU differs (gelu(1) = 0.841344746): gated-gelu must not use it
        erf = dense_gated_act_dense(x, wi, wi_1, wo, "gelu")
        self.assertGreater((erf - t([3.2853639577372453, 6.491323910778629])).abs().max(), 1e-4)

    def test_feed_forward_proj_as_t5config_parses_it(self):
        self.assertEqual(feed_forward_proj({}), ("relu", False))
        self.assertEqual(feed_forward_proj({"feed_forward_proj": "gated-gelu"}),
                         ("gelu_new", True))
        self.assertEqual(feed_forward_proj({"feed_forward_proj": "gelu"}), ("gelu", False))
        self.assertEqual(feed_forward_proj({"feed_forward_proj": "gated-silu"}), ("silu", True))
        for bad in ("relu-gated", "gated-gelu-new"):
            with self.assertRaises(OracleError):
                feed_forward_proj({"feed_forward_proj": bad})

    def test_handles(self):
        self.assertTrue(handles({"model_type": "t5"}))
        self.assertFalse(handles({"model_type": "bert"}))


def t5_config(**fields):
    raw = {"model_type": "t5", "d_model": 1, "d_kv": 4, "d_ff": 1, "num_layers": 1,
           "num_decoder_layers": 1, "num_heads": 1, "relative_attention_num_buckets": 4,
           "relative_attention_max_distance": 128, "layer_norm_epsilon": 1.0,
           "feed_forward_proj": "relu", "tie_word_embeddings": False, "vocab_size": 3}
    raw.update(fields)
    return raw


ENC_TABLE = [0.0, 0.5, 9.0, -0.7]    # bucket 2 is never used by the encoder here
DEC_TABLE = [0.3, -0.4, 0.8, 50.0]   # nor bucket 3 by the decoder
EMBED = [2.0, -1.0, 0.5]
HEAD = [1.0, -2.0, 0.25]


def hand_weights():
    """d_model 1, one head of d_kv 4: q and k map x to [x, x, x, x] (q.k =
    4 x y, unscaled), v to [x, 0, 0, 0] and o takes column 0 back."""
    ones, first, back = t([[1.0]] * 4), t([[1.0], [0.0], [0.0], [0.0]]), t([[1.0, 0.0, 0.0, 0.0]])
    w = {"shared.weight": t([[e] for e in EMBED]), "lm_head.weight": t([[h] for h in HEAD]),
         "encoder.final_layer_norm.weight": t([1.5]),
         "decoder.final_layer_norm.weight": t([2.0])}
    for stack, table, attns in (("encoder", ENC_TABLE, ["0.SelfAttention"]),
                                ("decoder", DEC_TABLE, ["0.SelfAttention", "1.EncDecAttention"])):
        p = f"{stack}.block.0.layer."
        w[p + "0.SelfAttention.relative_attention_bias.weight"] = t([[b] for b in table])
        for a in attns:
            w.update({f"{p}{a}.q.weight": ones, f"{p}{a}.k.weight": ones,
                      f"{p}{a}.v.weight": first, f"{p}{a}.o.weight": back})
        ffn = len(attns)
        for j in range(ffn + 1):
            w[f"{p}{j}.layer_norm.weight"] = t([1.0])
        w[f"{p}{ffn}.DenseReluDense.wi.weight"] = t([[1.0]])
        w[f"{p}{ffn}.DenseReluDense.wo.weight"] = t([[0.5]])
    return w


def hand_model(source, decoder):
    """The hand model in scalars: norm(x) = w x / sqrt(x^2 + 1) (eps 1).
    Buckets for 4 buckets, max distance 128 and distances under 16:
    bidirectional: key before the query 1, same 0, after 3 (2 + 1);
    causal: 0 itself, 1 one back, 2 two to fifteen back."""
    def norm(x, w=1.0):
        return w * x / math.sqrt(x * x + 1.0)

    def attend(q, keys, biases):
        s = [4.0 * q * k + b for k, b in zip(keys, biases)]
        e = [math.exp(v - max(s)) for v in s]
        return sum(w * k for w, k in zip(e, keys)) / sum(e)

    def ffn(h):
        return h + 0.5 * max(norm(h), 0.0)

    h = [EMBED[i] for i in source]
    n = [norm(x) for x in h]
    enc_bucket = lambda d: 0 if d == 0 else (1 if d < 0 else 3)  # noqa: E731
    h = [x + attend(n[i], n, [ENC_TABLE[enc_bucket(j - i)] for j in range(len(n))])
         for i, x in enumerate(h)]
    enc = [norm(ffn(x), 1.5) for x in h]

    g = [EMBED[i] for i in decoder]
    n = [norm(x) for x in g]
    dec_bucket = lambda d: min(-d, 2)  # noqa: E731
    g = [x + attend(n[i], n[:i + 1], [DEC_TABLE[dec_bucket(j - i)] for j in range(i + 1)])
         for i, x in enumerate(g)]
    g = [x + attend(norm(x), enc, [0.0] * len(enc)) for x in g]
    z = [norm(ffn(x), 2.0) for x in g]
    return t([[e] for e in enc]), t([[v * w for w in HEAD] for v in z])


class HandCheckedModel(unittest.TestCase):
    def test_encoder_and_decoder_by_hand(self):
        source, decoder = [0, 1, 2], [0, 2, 1, 1]
        oracle = T5Oracle(t5_config(), hand_weights())
        enc, logits = hand_model(source, decoder)
        close(self, oracle.encode(source), enc)
        close(self, oracle.decoder_logits(source, decoder), logits)
        # a first value by hand: source token 0 (x = 2, norm 2/sqrt(5) = 0.894427)
        # attends to itself (4 * 0.8 + bias 0 = 3.2), token 1 (norm -1/sqrt(2),
        # after: 4 * 0.894427 * -0.707107 - 0.7 = -3.229822) and token 2 (norm
        # 0.5/sqrt(1.25) = 0.447214, after: 1.6 - 0.7 = 0.9); softmax weights
        # 0.907547, 0.001464, 0.090990: a = 0.851391; h = 2.851391; ffn: + 0.5 *
        # 0.943650 = 3.323217; enc = 1.5 * 3.323217 / sqrt(3.323217^2 + 1) = 1.436378
        self.assertAlmostEqual(oracle.encode(source)[0, 0].item(), 1.436378, places=6)

    def test_scores_are_not_scaled(self):
        # scaled by 1/sqrt(d_kv) = 1/2, the scores would differ: so would the output
        w = hand_weights()
        for stack in ("encoder", "decoder"):
            w[f"{stack}.block.0.layer.0.SelfAttention.q.weight"] = t([[0.5]] * 4)
        w["decoder.block.0.layer.1.EncDecAttention.q.weight"] = t([[0.5]] * 4)
        halved = T5Oracle(t5_config(), w).encode([0, 1, 2])
        self.assertGreater((halved - hand_model([0, 1, 2], [0])[0]).abs().max().item(), 1e-3)

    def test_tied_head_rescale(self):
        # no blocks: logits = final_layer_norm(shared[id]) * d_model^-0.5 @ shared^T.
        # d_model 4, eps 0, norm weight 1. Token 0 = [1, 1, 1, 1] (root mean
        # square 1) -> y = [1, 1, 1, 1]; dot products with the rows [1, 1, 1, 1],
        # [2, 0, 0, 0], [0, 0, 0, 3]: 4, 2, 3; times 4^-0.5 = 0.5: 2, 1, 1.5.
        # Token 1 = [2, 0, 0, 0] (root mean square 1) -> y = [2, 0, 0, 0]: 2, 4, 0
        # -> 1, 2, 0. Untied with lm_head = shared: no rescale.
        shared = t([[1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 3.0]])
        w = {"shared.weight": shared, "encoder.final_layer_norm.weight": t([1.0] * 4),
             "decoder.final_layer_norm.weight": t([1.0] * 4)}
        raw = t5_config(d_model=4, num_layers=0, num_decoder_layers=0, layer_norm_epsilon=0.0,
                        tie_word_embeddings=True)
        tied = [[2.0, 1.0, 1.5], [1.0, 2.0, 0.0]]
        close(self, T5Oracle(raw, w).decoder_logits([0], [0, 1]), tied)
        raw["tie_word_embeddings"] = False
        untied = T5Oracle(raw, dict(w, **{"lm_head.weight": shared}))
        close(self, untied.decoder_logits([0], [0, 1]), [[4.0, 2.0, 3.0], [2.0, 4.0, 0.0]])
        # tie_word_embeddings defaults to true, as in T5Config
        del raw["tie_word_embeddings"]
        close(self, T5Oracle(raw, w).decoder_logits([0], [0, 1]), tied)


def random_model(raw, seed):
    """T5ForConditionalGeneration's tensors for raw, random, seeded."""
    g = torch.Generator().manual_seed(seed)

    def r(*shape, scale=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    d, inner, ff = raw["d_model"], raw["num_heads"] * raw["d_kv"], raw["d_ff"]
    gated = raw["feed_forward_proj"].startswith("gated-")
    w = {"shared.weight": r(raw["vocab_size"], d)}
    if not raw.get("tie_word_embeddings", True):
        w["lm_head.weight"] = r(raw["vocab_size"], d, scale=d ** -0.5)
    for stack, layers in (("encoder", raw["num_layers"]), ("decoder", raw["num_decoder_layers"])):
        attns = ["0.SelfAttention"] + (["1.EncDecAttention"] if stack == "decoder" else [])
        for i in range(layers):
            p = f"{stack}.block.{i}.layer."
            for a in attns:
                w[f"{p}{a}.q.weight"] = r(inner, d, scale=(d * raw["d_kv"]) ** -0.5)
                for m in "kv":
                    w[f"{p}{a}.{m}.weight"] = r(inner, d, scale=d ** -0.5)
                w[f"{p}{a}.o.weight"] = r(d, inner, scale=inner ** -0.5)
            for j in range(len(attns) + 1):
                w[f"{p}{j}.layer_norm.weight"] = 1 + r(d, scale=0.1)
            f = f"{p}{len(attns)}.DenseReluDense."
            for name in (["wi_0", "wi_1"] if gated else ["wi"]):
                w[f + name + ".weight"] = r(ff, d, scale=d ** -0.5)
            w[f + "wo.weight"] = r(d, ff, scale=ff ** -0.5)
        w[f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"] = r(
            raw["relative_attention_num_buckets"], raw["num_heads"])
        w[f"{stack}.final_layer_norm.weight"] = 1 + r(d, scale=0.1)
    return w


SMALL = {"model_type": "t5", "d_model": 16, "d_kv": 6, "d_ff": 24, "num_layers": 2,
         "num_decoder_layers": 3, "num_heads": 3, "relative_attention_num_buckets": 8,
         "relative_attention_max_distance": 20, "layer_norm_epsilon": 1e-6,
         "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False, "vocab_size": 50,
         "decoder_start_token_id": 0}


class RandomModel(unittest.TestCase):
    def test_decoder_is_causal_and_reads_the_source(self):
        oracle = T5Oracle(SMALL, random_model(SMALL, 1))
        source, decoder = [3, 14, 15, 9, 2, 6], [0, 7, 1, 8, 2]
        base = oracle.decoder_logits(source, decoder)
        self.assertEqual(tuple(base.shape), (5, 50))
        later = oracle.decoder_logits(source, decoder[:3] + [40, 41])
        close(self, later[:3], base[:3], tol=0)  # masked keys weigh exactly 0
        self.assertGreater((later[3:] - base[3:]).abs().min().item(), 0)
        # a source token changes every decoder row, the first included
        other = oracle.decoder_logits([3, 14, 15, 9, 2, 7], decoder)
        self.assertGreater((other - base).abs().amax(dim=1).min().item(), 1e-3)
        # and a prefix of the decoder ids gives the same rows (no look-ahead)
        close(self, oracle.decoder_logits(source, decoder[:2]), base[:2], tol=1e-12)

    def test_encoder_is_bidirectional(self):
        oracle = T5Oracle(SMALL, random_model(SMALL, 2))
        a, b = oracle.encode([5, 6, 7]), oracle.encode([5, 6, 8])
        self.assertGreater((a[0] - b[0]).abs().max().item(), 1e-3)
        # every row is the final norm's: x * rsqrt(mean(x^2) + eps) * w has
        # mean((out / w)^2) = mean(x^2) / (mean(x^2) + eps), i.e. just under 1
        w = oracle.get("encoder.final_layer_norm.weight")
        ms = (a / w).pow(2).mean(dim=1)
        close(self, ms, torch.ones(3, dtype=torch.float64), tol=1e-5)

    def test_embedding_aliases_and_refusals(self):
        w = random_model(SMALL, 3)
        base = T5Oracle(SMALL, w).decoder_logits([1, 2], [0, 3])
        # encoder./decoder.embed_tokens are the shared tensor: either may stand in
        alias = {("encoder.embed_tokens.weight" if k == "shared.weight" else k): v
                 for k, v in w.items()}
        alias["decoder.embed_tokens.weight"] = w["shared.weight"].clone()
        close(self, T5Oracle(SMALL, alias).decoder_logits([1, 2], [0, 3]), base, tol=0)
        with self.assertRaisesRegex(OracleError, "differs"):
            T5Oracle(SMALL, dict(w, **{"decoder.embed_tokens.weight": w["shared.weight"] + 1}))
        # transformers ignores a cross-attention position bias: so does the oracle
        extra = "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"
        ignored = T5Oracle(SMALL, dict(w, **{extra: torch.ones(8, 3, dtype=torch.float64)}))
        close(self, ignored.decoder_logits([1, 2], [0, 3]), base, tol=0)
        # a later block's own table: transformers would not read it, llama.cpp would
        own = "encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight"
        with self.assertRaisesRegex(OracleError, "no place"):
            T5Oracle(SMALL, dict(w, **{own: torch.ones(8, 3, dtype=torch.float64)}))
        missing = dict(w)
        del missing["decoder.block.2.layer.2.DenseReluDense.wi_1.weight"]
        with self.assertRaisesRegex(OracleError, "missing"):
            T5Oracle(SMALL, missing)
        tied = dict(SMALL, tie_word_embeddings=True)
        with self.assertRaisesRegex(OracleError, "lm_head"):
            T5Oracle(tied, w)  # a tied model whose lm_head is not the embedding
        with self.assertRaisesRegex(OracleError, "vocab_size"):
            T5Oracle(dict(SMALL, vocab_size=51), w)
        with self.assertRaisesRegex(OracleError, "token ids"):
            T5Oracle(SMALL, w).encode([50])

    def test_decoder_start_token_defaults_to_pad(self):
        w = random_model(SMALL, 4)
        raw = {k: v for k, v in SMALL.items() if k != "decoder_start_token_id"}
        self.assertEqual(T5Oracle(raw, w).decoder_start_token_id, 0)
        self.assertEqual(T5Oracle(dict(raw, pad_token_id=5), w).decoder_start_token_id, 5)


class GgufNames(unittest.TestCase):
    def test_names(self):
        z = torch.zeros(1, dtype=torch.float64)
        names = ["token_embd.weight", "output.weight", "enc.output_norm.weight",
                 "dec.output_norm.weight", "enc.blk.0.attn_rel_b.weight",
                 "enc.blk.0.ffn_up.weight", "dec.blk.1.ffn_gate.weight",
                 "dec.blk.1.ffn_up.weight", "dec.blk.1.ffn_down.weight",
                 "dec.blk.1.cross_attn_o.weight", "dec.blk.0.cross_attn_norm.weight",
                 "dec.blk.0.cross_attn_rel_b.weight", "dec.blk.0.ffn_norm.weight"]
        got = hf_names_from_gguf({n: z for n in names})
        self.assertEqual(sorted(got), sorted([
            "shared.weight", "lm_head.weight", "encoder.final_layer_norm.weight",
            "decoder.final_layer_norm.weight",
            "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
            "encoder.block.0.layer.1.DenseReluDense.wi.weight",     # no gate: wi
            "decoder.block.1.layer.2.DenseReluDense.wi_0.weight",
            "decoder.block.1.layer.2.DenseReluDense.wi_1.weight",   # beside a gate: wi_1
            "decoder.block.1.layer.2.DenseReluDense.wo.weight",
            "decoder.block.1.layer.1.EncDecAttention.o.weight",
            "decoder.block.0.layer.1.layer_norm.weight",
            "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",
            "decoder.block.0.layer.2.layer_norm.weight"]))
        for bad in ("blk.0.attn_q.weight", "enc.blk.0.attn_qkv.weight", "enc.blk.0.attn_q.bias",
                    "enc.blk.x.attn_q.weight", "enc.blk.0.cross_attn_q.weight"):
            with self.assertRaisesRegex(OracleError, "no T5 name"):
                hf_names_from_gguf({bad: z})

    def test_config_keys(self):
        metadata = {"general.architecture": "t5", "t5.embedding_length": 64,
                    "t5.block_count": 3, "t5.feed_forward_length": 96,
                    "t5.attention.head_count": 2, "t5.attention.relative_buckets_count": 16,
                    "t5.attention.layer_norm_rms_epsilon": 1e-6}
        z = torch.zeros(10, 64)
        raw = config_from_gguf(metadata, {"token_embd.weight": z})
        self.assertEqual((raw["d_kv"], raw["num_decoder_layers"], raw["feed_forward_proj"],
                          raw["tie_word_embeddings"], raw["vocab_size"],
                          raw["relative_attention_max_distance"]),
                         (32, 3, "relu", True, 10, 128))
        raw = config_from_gguf(dict(metadata, **{"t5.decoder_block_count": 1}),
                               {"token_embd.weight": z, "output.weight": z,
                                "enc.blk.0.ffn_gate.weight": z, "enc.blk.0.ffn_up.weight": z})
        self.assertEqual((raw["num_decoder_layers"], raw["feed_forward_proj"],
                          raw["tie_word_embeddings"]), (1, "gated-gelu", False))
        with self.assertRaisesRegex(OracleError, "some blocks"):
            config_from_gguf(metadata, {"enc.blk.0.ffn_gate.weight": z,
                                        "enc.blk.0.ffn_up.weight": z,
                                        "enc.blk.1.ffn_up.weight": z})
        with self.assertRaisesRegex(OracleError, "'t5'"):
            config_from_gguf(dict(metadata, **{"general.architecture": "bert"}))


def _peer_paths():
    """make_random_gguf.py and the PEERS folder holding llama.cpp's gguf-py, or a reason."""
    shared = os.environ.get("TFM_SHARED_DIR") or os.path.join(os.path.dirname(
        os.path.dirname(os.path.dirname(HERE))), "shared")
    script = os.path.join(shared, "peers", "make_random_gguf.py")
    peers = os.environ.get("PEERS", os.path.join(os.environ.get("TMPDIR", "/tmp"), "peers"))
    if not os.path.exists(script):
        return None, None, f"{script} does not exist"
    if not os.path.isdir(os.path.join(peers, "llama.cpp", "gguf-py", "gguf")):
        return None, None, f"no llama.cpp/gguf-py under {peers} (set PEERS)"
    return script, peers, None


class PeerGguf(unittest.TestCase):
    """t5-small-v10 and -v11 as the peers' script writes them, with llama.cpp's
    own names and keys."""

    @classmethod
    def setUpClass(cls):
        script, peers, missing = _peer_paths()
        if missing:
            raise unittest.SkipTest(missing)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.files = {}
        for preset in ("t5-small-v10", "t5-small-v11"):
            path = os.path.join(cls.tmp.name, preset + ".gguf")
            subprocess.run([sys.executable, script, preset, "f32", path], check=True,
                           capture_output=True, env=dict(os.environ, PEERS=peers), timeout=600)
            cls.files[preset] = read_gguf(path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, preset, expected):
        metadata, gguf = self.files[preset]
        raw = config_from_gguf(metadata, gguf)
        fields = ("d_model", "d_kv", "d_ff", "num_layers", "num_decoder_layers", "num_heads",
                  "relative_attention_num_buckets", "feed_forward_proj", "tie_word_embeddings",
                  "vocab_size", "decoder_start_token_id")
        self.assertEqual({f: raw[f] for f in fields}, dict(zip(fields, expected)))
        weights = hf_names_from_gguf(gguf)
        self.assertEqual(len(weights), len(gguf))
        # attn_rel_b reads as transformers' nn.Embedding weight [num_buckets, heads]
        table = weights["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]
        self.assertEqual(tuple(table.shape), (32, raw["num_heads"]))
        oracle = T5Oracle(raw, weights)  # refuses a missing or left-over tensor
        source, decoder = [37, 5, 1000, 42, 2], [0, 17, 3, 250]
        enc = oracle.encode(source)
        self.assertEqual(tuple(enc.shape), (5, 128))
        logits = oracle.decoder_logits(source, decoder)
        self.assertEqual(tuple(logits.shape), (4, 32000))
        self.assertTrue(torch.isfinite(logits).all())
        changed = oracle.decoder_logits(source, decoder[:2] + [9, 9])
        close(self, changed[:2], logits[:2], tol=0)
        moved = oracle.decoder_logits([37, 5, 1001, 42, 2], decoder)
        self.assertGreater((moved[0] - logits[0]).abs().max().item(), 1e-6)

    def test_v10_relu_tied(self):
        self.check("t5-small-v10", (128, 32, 512, 2, 2, 4, 32, "relu", True, 32000, 0))

    def test_v11_gated_untied(self):
        self.check("t5-small-v11", (128, 16, 256, 3, 2, 6, 32, "gated-gelu", False, 32000, 0))


if __name__ == "__main__":
    unittest.main(verbosity=2)
