"""Checks the encoder-decoder oracle (seq2seq_oracle.py) itself: both sinusoid
layouts at cells worked out by hand (and Marian's against a transcription of
_init_weight's numpy expression), the embedding scale, the tied head with
final_logits_bias, the decoder's causality and its dependence on the source,
both families' block stacks against torch.nn.Transformer (post-LN) given the
same weights, the manifest names, the refusals, and a safetensors file read
back with weight_files.py.

usage: test_seq2seq_oracle.py   (needs torch and numpy; no environment variables)
"""

import json
import math
import os
import struct
import sys
import tempfile
import unittest

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from family_oracle import sinusoid  # noqa: E402
from seq2seq_oracle import (OracleError, Seq2SeqOracle, handles,  # noqa: E402
                            hf_names_from_manifest, interleaved_positions, load_config,
                            marian_positions)
from weight_files import read_safetensors  # noqa: E402


def t(values):
    return torch.tensor(values, dtype=torch.float64)


def close(actual, expected, tol=1e-12):
    torch.testing.assert_close(actual, expected if torch.is_tensor(expected) else t(expected),
                               rtol=0, atol=tol)


SIN1, COS1 = 0.8414709848078965, 0.5403023058681398


class Positions(unittest.TestCase):
    """d = 8 has the frequencies 10000^(-2i/8) = 1, 0.1, 0.01, 0.001 exactly,
    so at position 10 the angles are 10, 1, 0.1, 0.01:
      sin: -0.5440211108893698, 0.8414709848078965, 0.09983341664682815,
           0.009999833334166664
      cos: -0.8390715290764524, 0.5403023058681398, 0.9950041652780258,
           0.9999500004166653"""

    SIN = [-0.5440211108893698, SIN1, 0.09983341664682815, 0.009999833334166664]
    COS = [-0.8390715290764524, COS1, 0.9950041652780258, 0.9999500004166653]

    def test_marian_sines_then_cosines(self):
        p = marian_positions(11, 8)
        self.assertEqual(tuple(p.shape), (11, 8))
        close(p[0], [0, 0, 0, 0, 1, 1, 1, 1])          # sin 0 = 0, cos 0 = 1
        close(p[10], self.SIN + self.COS)
        # single cells: column 1 is sin(10 * 0.1), column 5 its cosine, 6 cos(0.1)
        self.assertAlmostEqual(p[10, 1].item(), SIN1, places=15)
        self.assertAlmostEqual(p[10, 5].item(), COS1, places=15)
        self.assertAlmostEqual(p[10, 6].item(), 0.9950041652780258, places=15)

    def test_interleaved_2017(self):
        p = interleaved_positions(11, 8)
        close(p[0], [0, 1, 0, 1, 0, 1, 0, 1])
        close(p[10], [v for pair in zip(self.SIN, self.COS) for v in pair])
        self.assertAlmostEqual(p[10, 1].item(), -0.8390715290764524, places=15)  # cos(10)
        self.assertAlmostEqual(p[10, 2].item(), SIN1, places=15)                 # sin(1)
        self.assertAlmostEqual(p[10, 5].item(), 0.9950041652780258, places=15)   # cos(0.1)
        # the decoder-only 2017 family's table (family_oracle.sinusoid) is the same
        close(interleaved_positions(37, 12), sinusoid(37, 12), tol=0)

    def test_d4_and_position_50(self):
        # d = 4: frequencies 1 and 1/100; position 50: angles 50 and 0.5,
        # sin(0.5) = 0.479425538604203, cos(0.5) = 0.8775825618903728
        m, i = marian_positions(51, 4), interleaved_positions(51, 4)
        self.assertAlmostEqual(m[50, 1].item(), 0.479425538604203, places=15)
        self.assertAlmostEqual(m[50, 3].item(), 0.8775825618903728, places=15)
        self.assertAlmostEqual(i[50, 2].item(), 0.479425538604203, places=15)
        self.assertAlmostEqual(i[50, 3].item(), 0.8775825618903728, places=15)
        self.assertAlmostEqual(m[50, 0].item(), math.sin(50.0), places=15)
        self.assertAlmostEqual(m[50, 2].item(), math.cos(50.0), places=15)

    def test_odd_width(self):
        # d = 5: frequencies 1, 10000^-0.4 = 0.025118864315095794 and
        # 10000^-0.8 = 0.000630957344480193. Marian: 3 sines ("sentinel" 5 // 2 + 1)
        # then 2 cosines; interleaved: sin, cos, sin, cos, sin.
        s1, c1 = 0.025116222909773774, 0.9996845379152098   # of 0.0251188643...
        s2 = 0.0006309573026154199                          # sin of 0.000630957...
        close(marian_positions(2, 5)[1], [SIN1, s1, s2, COS1, c1], tol=1e-15)
        close(interleaved_positions(2, 5)[1], [SIN1, COS1, s1, c1, s2], tol=1e-15)

    def test_marian_as_init_weight_writes_it(self):
        # MarianSinusoidalPositionalEmbedding._init_weight's expression, as
        # published: position_enc[pos, j] = pos / 10000^(2 (j // 2) / dim); sin
        # of the even columns into [:sentinel], cos of the odd into [sentinel:],
        # stored as float32 (torch.FloatTensor).
        for n_pos, dim in ((40, 16), (9, 7), (3, 1), (1024, 512)):
            enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)]
                            for pos in range(n_pos)])
            out = np.empty((n_pos, dim), dtype=np.float32)
            sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
            out[:, :sentinel] = np.sin(enc[:, 0::2])
            out[:, sentinel:] = np.cos(enc[:, 1::2])
            ours = marian_positions(n_pos, dim)
            # within float32's rounding of values in [-1, 1]
            close(ours, torch.from_numpy(out.astype(np.float64)), tol=2 ** -25)


def marian_config(**fields):
    raw = {"model_type": "marian", "vocab_size": 50, "d_model": 16, "encoder_layers": 2,
           "decoder_layers": 3, "encoder_attention_heads": 4, "decoder_attention_heads": 4,
           "encoder_ffn_dim": 24, "decoder_ffn_dim": 24, "activation_function": "swish",
           "max_position_embeddings": 64, "scale_embedding": True, "pad_token_id": 49,
           "eos_token_id": 0, "decoder_start_token_id": 49, "normalize_before": False,
           "tie_word_embeddings": True, "share_encoder_decoder_embeddings": True}
    raw.update(fields)
    return raw


def transformer_config(**fields):
    raw = {"model_type": "transformer", "architecture": "encoder_decoder", "d_model": 16,
           "n_heads": 2, "n_layers": 2, "n_encoder_layers": 3, "d_ff": 40, "vocab_size": 60,
           "context_length": 32, "source_length": 24, "positions": "sinusoidal",
           "norm_position": "post", "activation": "relu", "embedding_scale": "sqrt_d_model",
           "norm_eps": 1e-5, "tie_word_embeddings": True, "bos_token_id": 1,
           "eos_token_id": 2, "decoder_start_token_id": 1}
    raw.update(fields)
    return raw


def sizes(raw):
    """(vocab, d_model, ffn, encoder layers, decoder layers) of either family."""
    if raw["model_type"] == "marian":
        return (raw["vocab_size"], raw["d_model"], raw["encoder_ffn_dim"],
                raw["encoder_layers"], raw["decoder_layers"])
    return (raw["vocab_size"], raw["d_model"], raw["d_ff"],
            raw.get("n_encoder_layers", raw["n_layers"]), raw["n_layers"])


def random_model(raw, seed, logits_bias=True):
    """MarianMTModel's tensors (names with "model.") for raw, random, seeded;
    final_logits_bias [1, vocab] for Marian when logits_bias."""
    g = torch.Generator().manual_seed(seed)

    def r(*shape, scale=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    vocab, d, ff, enc, dec = sizes(raw)
    w = {"model.shared.weight": r(vocab, d, scale=d ** -0.5)}
    for stack, layers in (("encoder", enc), ("decoder", dec)):
        for i in range(layers):
            p = f"model.{stack}.layers.{i}."
            subs = ["self_attn"] + (["encoder_attn"] if stack == "decoder" else [])
            for s in subs:
                for m in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    w[f"{p}{s}.{m}.weight"] = r(d, d, scale=d ** -0.5)
                    w[f"{p}{s}.{m}.bias"] = r(d, scale=0.1)
            w[p + "fc1.weight"], w[p + "fc1.bias"] = r(ff, d, scale=d ** -0.5), r(ff, scale=0.1)
            w[p + "fc2.weight"], w[p + "fc2.bias"] = r(d, ff, scale=ff ** -0.5), r(d, scale=0.1)
            for norm in [s + "_layer_norm" for s in subs] + ["final_layer_norm"]:
                w[f"{p}{norm}.weight"] = 1 + r(d, scale=0.1)
                w[f"{p}{norm}.bias"] = r(d, scale=0.1)
    if raw["model_type"] == "marian" and logits_bias:
        w["final_logits_bias"] = r(1, vocab)
    return w


class EmbeddingAndHead(unittest.TestCase):
    """No layers: encode is the embedding alone, the logits its head."""

    E4 = [[0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 0.0, 2.0]]

    def empty(self, raw, shared, **extra):
        return Seq2SeqOracle(raw, dict({"model.shared.weight": t(shared)}, **extra))

    def test_marian_scale_embedding(self):
        # d 4, scale_embedding: E * sqrt(4) = E * 2, plus [sin p, sin p/100,
        # cos p, cos p/100]: row 0 + [0, 0, 1, 1], row 1 + [0.8415, 0.0100,
        # 0.5403, 0.99995]
        raw = marian_config(vocab_size=3, d_model=4, encoder_layers=0, decoder_layers=0,
                            encoder_attention_heads=2, decoder_attention_heads=2)
        o = self.empty(raw, self.E4)
        close(o.encode([1, 1]), [[2.0, 4.0, 7.0, 9.0],
                                 [2.0 + SIN1, 4.009999833334167, 6.0 + COS1,
                                  8.999950000416665]])
        # scale_embedding false (MarianConfig's default): E * 1
        o = self.empty(dict(raw, scale_embedding=False), self.E4)
        close(o.encode([2]), [[0.5, -1.0, 1.0, 3.0]])
        o = self.empty({k: v for k, v in raw.items() if k != "scale_embedding"}, self.E4)
        close(o.encode([2]), [[0.5, -1.0, 1.0, 3.0]])

    def test_transformer_embedding_scale(self):
        # embedding_scale 3: E * 3, plus the interleaved [sin p, cos p,
        # sin p/100, cos p/100]; "sqrt_d_model": E * 2
        raw = transformer_config(vocab_size=3, d_model=4, n_layers=0, n_encoder_layers=0,
                                 embedding_scale=3)
        o = self.empty(raw, self.E4)
        close(o.encode([1, 1]), [[3.0, 7.0, 9.0, 13.0],
                                 [3.0 + SIN1, 6.0 + COS1, 9.009999833334167,
                                  12.999950000416665]])
        o = self.empty(dict(raw, embedding_scale="sqrt_d_model"), self.E4)
        close(o.decoder_hidden([0], [1])[0], [2.0, 5.0, 6.0, 9.0])
        o = self.empty({k: v for k, v in raw.items() if k != "embedding_scale"}, self.E4)
        close(o.encode([2]), [[0.5, 0.0, 0.0, 3.0]])

    def test_tied_head_with_final_logits_bias(self):
        # d 2, no scale: positions [sin p, cos p] (both layouts agree at d 2).
        # E = [[1, 0], [0, 1], [2, -1]], bias [0.5, -0.25, 1].
        # decoder [1, 2]: h0 = [0, 1] + [0, 1] = [0, 2] -> E h0 = [0, 2, -2]
        #   + bias = [0.5, 1.75, -1];
        # h1 = [2, -1] + [sin 1, cos 1] = [2.8414709848078967, -0.4596976941318602]
        #   -> E h1 = [2.8415, -0.4597, 2 * 2.8415 + 0.4597 = 6.1426]
        #   + bias = [3.3414709848078967, -0.7096976941318602, 7.142639663747653]
        raw = marian_config(vocab_size=3, d_model=2, encoder_layers=0, decoder_layers=0,
                            encoder_attention_heads=1, decoder_attention_heads=1,
                            scale_embedding=False)
        shared = [[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]]
        o = self.empty(raw, shared, final_logits_bias=t([[0.5, -0.25, 1.0]]))
        expected = [[0.5, 1.75, -1.0],
                    [3.3414709848078967, -0.7096976941318602, 7.142639663747653]]
        close(o.decoder_logits([0], [1, 2]), expected)
        # as a GGUF's 1-D output.bias: the same
        o = self.empty(raw, shared, final_logits_bias=t([0.5, -0.25, 1.0]))
        close(o.decoder_logits([0], [1, 2]), expected)
        # without one: zeros (transformers' fresh buffer)
        close(self.empty(raw, shared).decoder_logits([0], [1, 2]),
              [[0.0, 2.0, -2.0], [2.8414709848078967, -0.4596976941318602,
                                  6.142639663747653]])
        # untied: lm_head.weight, plus the bias
        untied = dict(raw, tie_word_embeddings=False)
        o = self.empty(untied, shared, final_logits_bias=t([[0.5, -0.25, 1.0]]),
                       **{"lm_head.weight": t([[1.0, 1.0], [0.0, 0.0], [0.0, -1.0]])})
        close(o.decoder_logits([0], [1]), [[2.5, -0.25, -1.0]])
        # the 2017 family: the same head, no bias
        o = self.empty(transformer_config(vocab_size=3, d_model=2, n_heads=1, n_layers=0,
                                          n_encoder_layers=0, embedding_scale=1), shared)
        close(o.decoder_logits([0], [1]), [[0.0, 2.0, -2.0]])


def to_nn_transformer(oracle):
    """torch.nn.Transformer (post-LN: norm_first false, dropout 0) holding the
    oracle's weights, without the final LayerNorms nn.Transformer puts after
    each stack (the 2017 paper and Marian have none). LayerNorm's eps is
    nn.LayerNorm's default 1e-5 for Marian (MarianEncoderLayer builds its
    norms with no eps), the config's norm_eps for the 2017 family."""
    acts = {"relu": "relu", "gelu": "gelu", "swish": nn.functional.silu,
            "silu": nn.functional.silu,
            "gelu_new": lambda x: nn.functional.gelu(x, approximate="tanh")}
    eps = 1e-5 if oracle.family == "marian" else oracle.raw.get("norm_eps", 1e-5)
    ref = nn.Transformer(d_model=oracle.d, nhead=oracle.heads,
                         num_encoder_layers=oracle.encoder_layers,
                         num_decoder_layers=oracle.decoder_layers, dim_feedforward=oracle.ffn,
                         dropout=0.0, activation=acts[oracle.act], layer_norm_eps=eps,
                         batch_first=False, norm_first=False).double().eval()
    ref.encoder.norm = None
    ref.decoder.norm = None
    w = oracle.get

    def attention(mha, p):
        mha.in_proj_weight.copy_(torch.cat([w(f"{p}.{m}_proj.weight") for m in "qkv"]))
        mha.in_proj_bias.copy_(torch.cat([w(f"{p}.{m}_proj.bias") for m in "qkv"]))
        mha.out_proj.weight.copy_(w(p + ".out_proj.weight"))
        mha.out_proj.bias.copy_(w(p + ".out_proj.bias"))

    def copy(module, name):
        module.weight.copy_(w(name + ".weight"))
        module.bias.copy_(w(name + ".bias"))

    with torch.no_grad():
        for i, layer in enumerate(ref.encoder.layers):
            p = f"encoder.layers.{i}."
            attention(layer.self_attn, p + "self_attn")
            copy(layer.norm1, p + "self_attn_layer_norm")
            copy(layer.linear1, p + "fc1")
            copy(layer.linear2, p + "fc2")
            copy(layer.norm2, p + "final_layer_norm")
        for i, layer in enumerate(ref.decoder.layers):
            p = f"decoder.layers.{i}."
            attention(layer.self_attn, p + "self_attn")
            copy(layer.norm1, p + "self_attn_layer_norm")
            attention(layer.multihead_attn, p + "encoder_attn")
            copy(layer.norm2, p + "encoder_attn_layer_norm")
            copy(layer.linear1, p + "fc1")
            copy(layer.linear2, p + "fc2")
            copy(layer.norm3, p + "final_layer_norm")
    return ref


class AgainstNnTransformer(unittest.TestCase):
    """The blocks, given the oracle's own embedded inputs: encoder output and
    decoder output before the head to 1e-10."""

    def check(self, raw, seed, source, decoder):
        oracle = Seq2SeqOracle(raw, random_model(raw, seed))
        ref = to_nn_transformer(oracle)
        src = oracle.embed(source).unsqueeze(1)     # [S, batch 1, d]
        tgt = oracle.embed(decoder).unsqueeze(1)
        T = len(decoder)
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)  # True: not attended
        with torch.no_grad():
            memory = ref.encoder(src)
            out = ref.decoder(tgt, memory, tgt_mask=causal)
        close(oracle.encode(source), memory[:, 0], tol=1e-10)
        hidden = oracle.decoder_hidden(source, decoder)
        close(hidden, out[:, 0], tol=1e-10)
        # and the whole of nn.Transformer's forward (with its norms removed)
        with torch.no_grad():
            whole = ref(src, tgt, tgt_mask=causal)
        close(hidden, whole[:, 0], tol=1e-10)
        self.assertGreater(hidden.abs().max().item(), 0.1)  # not a vacuous comparison

    def test_2017_relu(self):
        self.check(transformer_config(), 1, [3, 14, 15, 9, 2, 6, 5], [1, 7, 1, 8, 2])

    def test_2017_gelu_silu_and_eps(self):
        self.check(transformer_config(activation="gelu", norm_eps=1e-3), 2, [4, 5], [1, 9, 9])
        self.check(transformer_config(activation="silu", n_heads=4, embedding_scale=0.5), 3,
                   list(range(20)), [1] + list(range(30, 45)))

    def test_marian_swish_and_gelu_new(self):
        self.check(marian_config(), 4, [3, 14, 15, 9, 2, 6, 0], [49, 7, 1, 8])
        self.check(marian_config(activation_function="gelu_new", encoder_layers=1,
                                 decoder_layers=1, encoder_attention_heads=1,
                                 decoder_attention_heads=1), 5, [1, 2, 3], [49, 4])

    def test_the_final_norms_would_differ(self):
        # nn.Transformer's own final LayerNorms change the output: removing them
        # is what makes it the paper's (and Marian's) stack.
        raw = transformer_config()
        oracle = Seq2SeqOracle(raw, random_model(raw, 6))
        ref = to_nn_transformer(oracle)
        ref.decoder.norm = nn.LayerNorm(oracle.d).double()
        with torch.no_grad():
            nn.init.normal_(ref.decoder.norm.bias)
            out = ref(oracle.embed([1, 2]).unsqueeze(1), oracle.embed([1]).unsqueeze(1))
        self.assertGreater((out[:, 0] - oracle.decoder_hidden([1, 2], [1])).abs().max(), 1e-3)


class RandomModel(unittest.TestCase):
    def check_causal(self, raw, seed, start):
        oracle = Seq2SeqOracle(raw, random_model(raw, seed))
        source, decoder = [3, 14, 15, 9, 2, 6], [start, 7, 1, 8, 2]
        base = oracle.decoder_logits(source, decoder)
        self.assertEqual(tuple(base.shape), (5, raw["vocab_size"]))
        later = oracle.decoder_logits(source, decoder[:3] + [40, 41])
        close(later[:3], base[:3], tol=0)  # masked keys weigh exactly 0
        self.assertGreater((later[3:] - base[3:]).abs().amax(dim=1).min().item(), 1e-6)
        # a source token changes every decoder row, the first included
        other = oracle.decoder_logits([3, 14, 15, 9, 2, 7], decoder)
        self.assertGreater((other - base).abs().amax(dim=1).min().item(), 1e-6)
        # a prefix of the decoder ids gives the same rows (no look-ahead)
        close(oracle.decoder_logits(source, decoder[:2]), base[:2], tol=1e-12)
        # the encoder is bidirectional: the last source token moves row 0
        a, b = oracle.encode(source), oracle.encode(source[:-1] + [7])
        self.assertGreater((a[0] - b[0]).abs().max().item(), 1e-6)

    def test_marian_causal_decoder(self):
        self.check_causal(marian_config(), 11, 49)

    def test_2017_causal_decoder(self):
        self.check_causal(transformer_config(), 12, 1)

    def test_position_matters(self):
        # the same token at two places: different rows (positions were added)
        oracle = Seq2SeqOracle(marian_config(), random_model(marian_config(), 13))
        enc = oracle.embed([5, 5])
        close(enc[1] - enc[0], marian_positions(2, 16)[1] - marian_positions(2, 16)[0])

    def test_decoder_start_token(self):
        w = random_model(marian_config(), 14)
        raw = {k: v for k, v in marian_config().items() if k != "decoder_start_token_id"}
        self.assertEqual(Seq2SeqOracle(raw, w).decoder_start_token_id, 49)       # the pad
        self.assertEqual(Seq2SeqOracle(dict(raw, decoder_start_token_id=3), w)
                         .decoder_start_token_id, 3)
        w = random_model(transformer_config(), 15)
        self.assertEqual(Seq2SeqOracle(transformer_config(decoder_start_token_id=4), w)
                         .decoder_start_token_id, 4)
        raw = {k: v for k, v in transformer_config().items() if k != "decoder_start_token_id"}
        self.assertEqual(Seq2SeqOracle(raw, w).decoder_start_token_id, 1)         # bos


def manifest_model(raw, seed):
    """random_model's tensors under the manifest's names (what tfm-weights writes)."""
    inverse = {
        "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
        "self_attn.out_proj": "attn_o", "self_attn_layer_norm": "attn_norm", "fc1": "ffn_up",
        "fc2": "ffn_down", "final_layer_norm": "ffn_norm",
        "encoder_attn.q_proj": "cross_attn_q", "encoder_attn.k_proj": "cross_attn_k",
        "encoder_attn.v_proj": "cross_attn_v", "encoder_attn.out_proj": "cross_attn_o",
        "encoder_attn_layer_norm": "cross_attn_norm"}
    out = {}
    for name, value in random_model(raw, seed).items():
        if name == "model.shared.weight":
            out["token_embd.weight"] = value
        elif name == "final_logits_bias":
            out["output.bias"] = value.reshape(-1)
        else:
            _, stack, _, layer, rest = name.split(".", 4)
            module, part = rest.rsplit(".", 1)
            out[f"{stack[:3]}.blk.{layer}.{inverse[module]}.{part}"] = value
    return out


class Names(unittest.TestCase):
    def test_manifest_names(self):
        z = torch.zeros(3, dtype=torch.float64)
        names = ["token_embd.weight", "output.weight", "output.bias",
                 "enc.blk.0.attn_q.weight", "enc.blk.0.attn_o.bias", "enc.blk.1.attn_norm.weight",
                 "enc.blk.0.ffn_up.bias", "enc.blk.0.ffn_down.weight", "enc.blk.0.ffn_norm.bias",
                 "dec.blk.2.attn_k.weight", "dec.blk.0.cross_attn_v.bias",
                 "dec.blk.1.cross_attn_o.weight", "dec.blk.0.cross_attn_norm.weight"]
        got = hf_names_from_manifest({n: z for n in names}, marian_config())
        self.assertEqual(sorted(got), sorted([
            "model.shared.weight", "lm_head.weight", "final_logits_bias",
            "model.encoder.layers.0.self_attn.q_proj.weight",
            "model.encoder.layers.0.self_attn.out_proj.bias",
            "model.encoder.layers.1.self_attn_layer_norm.weight",
            "model.encoder.layers.0.fc1.bias", "model.encoder.layers.0.fc2.weight",
            "model.encoder.layers.0.final_layer_norm.bias",
            "model.decoder.layers.2.self_attn.k_proj.weight",
            "model.decoder.layers.0.encoder_attn.v_proj.bias",
            "model.decoder.layers.1.encoder_attn.out_proj.weight",
            "model.decoder.layers.0.encoder_attn_layer_norm.weight"]))
        self.assertEqual(tuple(got["final_logits_bias"].shape), (1, 3))
        for bad in ("blk.0.attn_q.weight", "enc.blk.0.cross_attn_q.weight",
                    "enc.blk.0.attn_output.weight", "dec.blk.x.attn_q.weight",
                    "enc.blk.0.attn_q.scale", "enc.output_norm.weight",
                    "model.shared.weight"):
            with self.assertRaisesRegex(OracleError, "no place"):
                hf_names_from_manifest({bad: z}, marian_config())
        # the 2017 family's head has no bias
        with self.assertRaisesRegex(OracleError, "output.bias"):
            hf_names_from_manifest({"output.bias": z}, transformer_config())

    def test_either_scheme_gives_the_same_model(self):
        for raw in (marian_config(), transformer_config()):
            hf, manifest = random_model(raw, 21), manifest_model(raw, 21)
            a = Seq2SeqOracle(raw, hf).decoder_logits([1, 2, 3], [raw["decoder_start_token_id"],
                                                                  5])
            b = Seq2SeqOracle(raw, manifest).decoder_logits([1, 2, 3],
                                                            [raw["decoder_start_token_id"], 5])
            close(a, b, tol=0)
            # MarianModel's names, without "model.", read the same
            bare = {k[len("model."):] if k.startswith("model.") else k: v for k, v in hf.items()}
            c = Seq2SeqOracle(raw, bare).decoder_logits([1, 2, 3],
                                                        [raw["decoder_start_token_id"], 5])
            close(a, c, tol=0)

    def test_aliases_and_stored_positions(self):
        raw = marian_config()
        w = random_model(raw, 22)
        base = Seq2SeqOracle(raw, w).decoder_logits([1, 2], [49, 3])
        shared = w["model.shared.weight"]
        alias = dict(w, **{"model.encoder.embed_tokens.weight": shared.clone(),
                           "model.decoder.embed_tokens.weight": shared.clone(),
                           "lm_head.weight": shared.clone()})
        del alias["model.shared.weight"]
        close(Seq2SeqOracle(raw, alias).decoder_logits([1, 2], [49, 3]), base, tol=0)
        with self.assertRaisesRegex(OracleError, "differs"):
            Seq2SeqOracle(raw, dict(w, **{"model.decoder.embed_tokens.weight": shared + 1}))
        with self.assertRaisesRegex(OracleError, "tie_word_embeddings"):
            Seq2SeqOracle(raw, dict(w, **{"lm_head.weight": shared * 2}))
        # a stored table, rounded to float16 (as a half-precision checkpoint
        # holds it), is checked and not read
        table = marian_positions(64, 16).half().double()
        stored = dict(w, **{"model.encoder.embed_positions.weight": table,
                            "model.decoder.embed_positions.weight": table})
        close(Seq2SeqOracle(raw, stored).decoder_logits([1, 2], [49, 3]), base, tol=0)
        # the other layout, or a table of another length, is refused
        wrong = dict(w, **{"model.decoder.embed_positions.weight": interleaved_positions(64, 16)})
        with self.assertRaisesRegex(OracleError, "not the marian sinusoid"):
            Seq2SeqOracle(raw, wrong)
        short = dict(w, **{"model.encoder.embed_positions.weight": marian_positions(32, 16)})
        with self.assertRaisesRegex(OracleError, "shape"):
            Seq2SeqOracle(raw, short)

    def test_missing_extra_and_shapes(self):
        raw = marian_config()
        w = random_model(raw, 23)
        missing = dict(w)
        del missing["model.decoder.layers.2.encoder_attn.v_proj.bias"]
        with self.assertRaisesRegex(OracleError, "missing"):
            Seq2SeqOracle(raw, missing)
        extra = dict(w, **{"model.encoder.layers.2.fc1.bias": torch.zeros(24)})
        with self.assertRaisesRegex(OracleError, "no place"):
            Seq2SeqOracle(raw, extra)
        extra = dict(w, **{"model.encoder.layernorm_embedding.weight": torch.zeros(16)})
        with self.assertRaisesRegex(OracleError, "no place"):
            Seq2SeqOracle(raw, extra)
        turned = dict(w, **{"model.encoder.layers.0.fc1.weight":
                            w["model.encoder.layers.0.fc1.weight"].T})
        with self.assertRaisesRegex(OracleError, "shape"):
            Seq2SeqOracle(raw, turned)
        with self.assertRaisesRegex(OracleError, "vocab_size"):
            Seq2SeqOracle(dict(raw, vocab_size=51), w)
        with self.assertRaisesRegex(OracleError, "final_logits_bias"):
            Seq2SeqOracle(raw, dict(w, final_logits_bias=torch.zeros(2, 25)))
        # the 2017 family has no logits bias to read
        raw = transformer_config()
        w = random_model(raw, 24)
        with self.assertRaisesRegex(OracleError, "no place"):
            Seq2SeqOracle(raw, dict(w, final_logits_bias=torch.zeros(1, 60)))
        with self.assertRaisesRegex(OracleError, "lm_head"):
            Seq2SeqOracle(dict(raw, tie_word_embeddings=False), w)

    def test_token_and_length_limits(self):
        raw = marian_config()
        o = Seq2SeqOracle(raw, random_model(raw, 25))
        with self.assertRaisesRegex(OracleError, "token ids"):
            o.encode([50])
        with self.assertRaisesRegex(OracleError, "max_position_embeddings"):
            o.decoder_logits([1], [49] * 65)
        self.assertEqual(tuple(o.decoder_logits([1] * 64, [49] * 64).shape), (64, 50))
        # the 2017 family has no table: past context_length is computed
        raw = transformer_config()
        o = Seq2SeqOracle(raw, random_model(raw, 26))
        self.assertEqual(tuple(o.decoder_logits([1] * 30, [1] * 40).shape), (40, 60))


class Refusals(unittest.TestCase):
    def refused(self, raw, pattern, seed_raw=None):
        with self.assertRaisesRegex(OracleError, pattern):
            Seq2SeqOracle(raw, random_model(seed_raw or raw, 31))

    def test_handles(self):
        self.assertTrue(handles({"model_type": "marian"}))
        self.assertTrue(handles({"model_type": "transformer", "architecture": "encoder_decoder"}))
        self.assertFalse(handles({"model_type": "transformer"}))   # the decoder-only family
        self.assertFalse(handles({"model_type": "t5"}))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "config.json")
            with open(path, "w") as f:
                json.dump(transformer_config(), f)
            self.assertEqual(load_config(path)["n_encoder_layers"], 3)
            with open(path, "w") as f:
                json.dump({"model_type": "transformer", "d_model": 4}, f)
            with self.assertRaisesRegex(OracleError, "encoder_decoder"):
                load_config(path)

    def test_marian(self):
        ok = marian_config()
        self.refused(marian_config(decoder_attention_heads=2), "decoder_attention_heads", ok)
        self.refused(marian_config(decoder_ffn_dim=32), "decoder_ffn_dim", ok)
        self.refused(marian_config(normalize_before=True), "normalize_before", ok)
        self.refused(marian_config(add_final_layer_norm=True), "add_final_layer_norm", ok)
        self.refused(marian_config(normalize_embedding=True), "normalize_embedding", ok)
        self.refused(marian_config(share_encoder_decoder_embeddings=False), "share", ok)
        self.refused(marian_config(decoder_vocab_size=51), "decoder_vocab_size", ok)
        self.refused(marian_config(activation_function="tanh"), "activation", ok)
        self.refused(marian_config(encoder_attention_heads=5, decoder_attention_heads=5),
                     "multiple", ok)
        raw = {k: v for k, v in ok.items() if k != "encoder_ffn_dim"}
        self.refused(raw, "encoder_ffn_dim", ok)
        # the legacy fields at the values transformers computes are accepted
        Seq2SeqOracle(marian_config(static_position_embeddings=True, add_bias_logits=False,
                                    normalize_embedding=False, decoder_vocab_size=None),
                      random_model(ok, 31))

    def test_transformer(self):
        ok = transformer_config()
        self.refused(transformer_config(norm_position="pre"), "norm_position", ok)
        raw = {k: v for k, v in ok.items() if k != "norm_position"}
        self.refused(raw, "norm_position", ok)                 # the family's default is pre
        self.refused(transformer_config(positions="learned"), "positions", ok)
        self.refused(transformer_config(norm="rms_norm"), "norm", ok)
        self.refused(transformer_config(n_kv_heads=1), "n_kv_heads", ok)
        self.refused(transformer_config(gated_ffn=True), "gated_ffn", ok)
        self.refused(transformer_config(embedding_scale="sqrt"), "embedding_scale", ok)
        self.refused(transformer_config(activation="tanh"), "activation", ok)
        self.refused(transformer_config(n_encoder_layers=2), "missing|no place", ok)


def write_safetensors(path, tensors):
    """A float32 safetensors file, laid out as the format's README says."""
    header, blobs, offset = {}, [], 0
    for name, value in tensors.items():
        data = value.detach().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(value.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


class SafetensorsFile(unittest.TestCase):
    def test_marian_checkpoint_read_back(self):
        # MarianMTModel's state dict as older save_pretrained wrote it:
        # embed_tokens twice beside shared, lm_head, final_logits_bias [1, vocab]
        # and both position tables (float32, as transformers builds them)
        raw = marian_config()
        w = {k: v.float().double() for k, v in random_model(raw, 41).items()}
        shared = w["model.shared.weight"]
        table = marian_positions(64, 16).float().double()
        full = dict(w, **{"model.encoder.embed_tokens.weight": shared,
                          "model.decoder.embed_tokens.weight": shared,
                          "lm_head.weight": shared,
                          "model.encoder.embed_positions.weight": table,
                          "model.decoder.embed_positions.weight": table})
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.safetensors")
            write_safetensors(path, full)
            read = read_safetensors(path)
        self.assertEqual(tuple(read["final_logits_bias"].shape), (1, 50))
        source, decoder = [5, 6, 7, 0], [49, 8, 9]
        close(Seq2SeqOracle(raw, read).decoder_logits(source, decoder),
              Seq2SeqOracle(raw, w).decoder_logits(source, decoder), tol=0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
