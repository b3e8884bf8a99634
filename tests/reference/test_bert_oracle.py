"""Checks the BERT-family oracle (bert_oracle.py) itself: its parts and a
one-layer model against values worked out by hand, RoBERTa's position
offset, pooling, the bidirectional attention, a random model against
PyTorch's own post-LN encoder layer, and llama.cpp's GGUF names, on a file
written by the peers' make_random_gguf.py when that script and llama.cpp's
gguf-py are at hand (skipped otherwise).

usage: test_bert_oracle.py   (needs torch; no environment variables)
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

from bert_oracle import (FAMILIES, BertOracle, OracleError, activation,  # noqa: E402
                         config_from_gguf, handles, hf_names_from_gguf, l2_normalize,
                         pool, position_ids)
from weight_files import read_gguf  # noqa: E402


def t(values):
    return torch.tensor(values, dtype=torch.float64)


def close(test, actual, expected, tol=1e-12):
    torch.testing.assert_close(actual, expected if torch.is_tensor(expected) else t(expected),
                               rtol=0, atol=tol)


def bert_config(**fields):
    raw = {"model_type": "bert", "hidden_size": 2, "num_hidden_layers": 1,
           "num_attention_heads": 1, "intermediate_size": 1, "max_position_embeddings": 3,
           "type_vocab_size": 2, "vocab_size": 3, "layer_norm_eps": 0.5, "hidden_act": "gelu",
           "position_embedding_type": "absolute"}
    raw.update(fields)
    return raw


# The hand-checked model: hidden 2, one head, intermediate 1, LayerNorm eps
# 0.5 with unit gains and zero shifts. Every vector it makes is [x, -x] plus
# a constant, which LayerNorm takes off, so each row is followed as the one
# scalar x: LayerNorm([x, -x]) = [x, -x] / sqrt(x^2 + eps).
HAND_EPS = 0.5


def hand_weights():
    one, zero2 = t([1.0, 1.0]), t([0.0, 0.0])
    identity = t([[1.0, 0.0], [0.0, 1.0]])
    p = "encoder.layer.0."
    return {
        "embeddings.word_embeddings.weight": t([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]]),
        "embeddings.position_embeddings.weight": t([[0.0, 0.0], [0.5, -0.5], [0.0, 0.0]]),
        # type 1 would swamp everything: only type 0 may be added
        "embeddings.token_type_embeddings.weight": t([[0.5, 0.0], [100.0, -100.0]]),
        "embeddings.LayerNorm.weight": one, "embeddings.LayerNorm.bias": zero2,
        p + "attention.self.query.weight": identity, p + "attention.self.query.bias": zero2,
        p + "attention.self.key.weight": identity, p + "attention.self.key.bias": zero2,
        p + "attention.self.value.weight": identity, p + "attention.self.value.bias": zero2,
        p + "attention.output.dense.weight": identity,
        p + "attention.output.dense.bias": t([0.2, -0.2]),
        p + "attention.output.LayerNorm.weight": one, p + "attention.output.LayerNorm.bias": zero2,
        p + "intermediate.dense.weight": t([[1.0, -1.0]]), p + "intermediate.dense.bias": t([0.5]),
        p + "output.dense.weight": t([[0.5], [-0.5]]), p + "output.dense.bias": t([0.1, -0.1]),
        p + "output.LayerNorm.weight": one, p + "output.LayerNorm.bias": zero2,
    }


def hand_rows(deltas, causal=False):
    """The hand model's output rows for embeddings e_i = [u_i, w_i] (word +
    position + type 0), given as delta_i = (u_i - w_i) / 2."""
    def ln(x):
        return x / math.sqrt(x * x + HAND_EPS)
    a = [ln(d) for d in deltas]
    rows = []
    for i, ai in enumerate(a):
        # q.k / sqrt(head_dim 2) = 2 a_i a_j / sqrt(2)
        keys = a[:i + 1] if causal else a
        weights = [math.exp(math.sqrt(2) * ai * aj) for aj in keys]
        o = sum(w * aj for w, aj in zip(weights, keys)) / sum(weights)
        b = ln(ai + o + 0.2)                        # + attention.output.dense bias
        u = 2 * b + 0.5                             # intermediate: [1, -1] . [b, -b] + 0.5
        g = 0.5 * u * (1 + math.erf(u / math.sqrt(2)))
        f = ln(b + 0.5 * g + 0.1)                   # output.dense: 0.5 g + 0.1
        rows.append([f, -f])
    return t(rows)


class HandCheckedModel(unittest.TestCase):
    def test_one_layer_by_hand(self):
        # token 0 at position 0: [1, 0] + [0, 0] + [0.5, 0] = [1.5, 0], delta 0.75
        # token 1 at position 1: [0, 2] + [0.5, -0.5] + [0.5, 0] = [1, 1.5], delta -0.25
        out = BertOracle(bert_config(), hand_weights()).hidden([0, 1])
        close(self, out, hand_rows([0.75, -0.25]))

    def test_attention_is_bidirectional(self):
        # Token 0's row depends on token 1: with token 2 ([3, 0] + [0.5, -0.5]
        # + [0.5, 0] = [4, -0.5], delta 2.25) in its place, row 0 changes, and
        # a causal model's row 0 (token 0 attending to itself only) is neither.
        oracle = BertOracle(bert_config(), hand_weights())
        first, second = oracle.hidden([0, 1]), oracle.hidden([0, 2])
        close(self, second, hand_rows([0.75, 2.25]))
        self.assertGreater((first[0] - second[0]).abs().max().item(), 1e-3)
        causal = hand_rows([0.75, -0.25], causal=True)
        self.assertGreater((first[0] - causal[0]).abs().max().item(), 1e-3)

    def test_checkpoint_prefixes_and_tf_layer_norm_names(self):
        expected = hand_rows([0.75, -0.25])
        for prefix in ("bert.", "roberta."):
            w = {prefix + k: v for k, v in hand_weights().items()}
            close(self, BertOracle(bert_config(), w).hidden([0, 1]), expected)
        w = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias",
                                                                      "LayerNorm.beta"): v
             for k, v in hand_weights().items()}
        close(self, BertOracle(bert_config(), w).hidden([0, 1]), expected)

    def test_two_heads_split_the_columns(self):
        # hidden 2, two heads of one column: head 0 sees column 0, head 1
        # column 1, each scaled by 1/sqrt(1). h = [[1, 0], [0, 1]] with
        # identity q, k, v: head 0's query 0 scores keys [1, 0] (weights
        # e/(e+1), 1/(e+1) on values 1, 0), its query 1 scores [0, 0] (0.5);
        # head 1 the mirror image.
        w = hand_weights()
        w["encoder.layer.0.attention.output.dense.bias"] = t([0.0, 0.0])
        oracle = BertOracle(bert_config(num_attention_heads=2), w)
        e = math.e / (math.e + 1)
        close(self, oracle.attention(t([[1.0, 0.0], [0.0, 1.0]]), "encoder.layer.0."),
              [[e, 0.5], [0.5, e]])

    def test_embedding_layer_norm(self):
        # no layers: LayerNorm(word[2] + position[0] + type[0]) =
        # LayerNorm([0, 0, 4, 0] + [0, 0, 0, 3] + [0, 0, 0, 1]) = LayerNorm([0, 0, 4, 4]):
        # mean 2, variance 4, eps 5: [-2, -2, 2, 2] / 3, then * [1, 2, 3, 4] + [0, 0, 0, 1]
        w = {"embeddings.word_embeddings.weight": t([[9.0] * 4, [9.0] * 4, [0.0, 0.0, 4.0, 0.0]]),
             "embeddings.position_embeddings.weight": t([[0.0, 0.0, 0.0, 3.0], [7.0] * 4]),
             "embeddings.token_type_embeddings.weight": t([[0.0, 0.0, 0.0, 1.0]]),
             "embeddings.LayerNorm.weight": t([1.0, 2.0, 3.0, 4.0]),
             "embeddings.LayerNorm.bias": t([0.0, 0.0, 0.0, 1.0])}
        raw = bert_config(hidden_size=4, num_hidden_layers=0, layer_norm_eps=5.0)
        close(self, BertOracle(raw, w).hidden([2]), [[-2 / 3, -4 / 3, 2.0, 11 / 3]])


class Positions(unittest.TestCase):
    """Position row r = 4 * one-hot(r mod 4), no layers, eps 0: LayerNorm of
    4 e_j is sqrt(3) at column j and -1/sqrt(3) elsewhere (mean 1, variance 3),
    so each output row shows which position row it used."""

    def rows_used(self, model_type, tokens, **fields):
        positions = torch.zeros(8, 4, dtype=torch.float64)
        for r in range(8):
            positions[r, r % 4] = 4.0
        w = {"embeddings.word_embeddings.weight": torch.zeros(8, 4, dtype=torch.float64),
             "embeddings.position_embeddings.weight": positions,
             "embeddings.token_type_embeddings.weight": torch.zeros(1, 4, dtype=torch.float64),
             "embeddings.LayerNorm.weight": t([1.0] * 4),
             "embeddings.LayerNorm.bias": t([0.0] * 4)}
        raw = bert_config(model_type=model_type, hidden_size=4, num_hidden_layers=0,
                          layer_norm_eps=0.0, max_position_embeddings=8, **fields)
        out = BertOracle(raw, w).hidden(tokens)
        s = math.sqrt(3)
        for row in out:  # each row is one position row's LayerNorm
            close(self, torch.sort(row).values, [-1 / s, -1 / s, -1 / s, s])
        return out.argmax(dim=1).tolist()

    def test_bert_counts_from_zero(self):
        self.assertEqual(self.rows_used("bert", [5, 6, 7]), [0, 1, 2])

    def test_roberta_family_counts_from_pad_plus_one(self):
        # pad_token_id absent: RobertaConfig's 1, so rows 2, 3, 4 (column 4 mod 4 = 0)
        for family in ("roberta", "camembert", "xlm-roberta"):
            self.assertEqual(self.rows_used(family, [5, 6, 7]), [2, 3, 0], family)
        self.assertEqual(self.rows_used("roberta", [5, 6, 7], pad_token_id=1), [2, 3, 0])
        self.assertEqual(self.rows_used("xlm-roberta", [5, 6, 7], pad_token_id=0), [1, 2, 3])

    def test_roberta_pad_tokens_keep_the_pad_position(self):
        # create_position_ids_from_input_ids: cumsum(token != 1) * (token != 1) + 1
        raw = {"model_type": "roberta", "pad_token_id": 1}
        self.assertEqual(position_ids(raw, [5, 1, 6, 7]).tolist(), [2, 1, 3, 4])
        self.assertEqual(position_ids({"model_type": "bert"}, [5, 1, 6]).tolist(), [0, 1, 2])

    def test_refuses_positions_past_the_table(self):
        with self.assertRaisesRegex(OracleError, "past the 8 rows"):
            self.rows_used("roberta", [5] * 7)  # positions 2..8


class Parts(unittest.TestCase):
    def test_exact_and_tanh_gelu(self):
        erf_form = 0.5 * (1 + math.erf(1 / math.sqrt(2)))                       # 0.841345
        tanh_form = 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * (1 + 0.044715)))  # 0.841192
        close(self, activation("gelu", t([1.0])), [erf_form])
        for name in ("gelu_new", "gelu_pytorch_tanh"):
            close(self, activation(name, t([1.0])), [tanh_form])
        self.assertGreater(erf_form - tanh_form, 1e-4)
        close(self, activation("relu", t([-1.0, 2.0])), [0.0, 2.0])
        with self.assertRaisesRegex(OracleError, "hidden_act 'tanh'"):
            activation("tanh", t([1.0]))

    def test_pooling(self):
        h = t([[3.0, 4.0], [1.0, 0.0], [0.0, -2.0]])
        close(self, pool(h, "none", False), h)
        close(self, pool(h, "mean", False), [4 / 3, 2 / 3])
        close(self, pool(h, "cls", False), [3.0, 4.0])
        close(self, pool(h, "last", False), [0.0, -2.0])
        close(self, pool(h, "cls", True), [0.6, 0.8])
        close(self, pool(h, "last", True), [0.0, -1.0])
        close(self, pool(h, "mean", True), [2 / math.sqrt(5), 1 / math.sqrt(5)])
        close(self, pool(h, "none", True), [[0.6, 0.8], [1.0, 0.0], [0.0, -1.0]])
        with self.assertRaisesRegex(OracleError, "pooling 'rank'"):
            pool(h, "rank", False)

    def test_zero_vector_stays_zero(self):
        close(self, l2_normalize(t([[0.0, 0.0], [0.0, 5.0]])), [[0.0, 0.0], [0.0, 1.0]])

    def test_handles(self):
        for family in FAMILIES:
            self.assertTrue(handles({"model_type": family}))
        for other in ("gpt2", "distilbert", "t5", None):
            self.assertFalse(handles({"model_type": other}))

    def test_refusals(self):
        w = hand_weights()
        for fields, message in (({"position_embedding_type": "relative_key"}, "relative_key"),
                                ({"is_decoder": True}, "is_decoder"),
                                ({"model_type": "distilbert"}, "distilbert"),
                                ({"hidden_act": "tanh"}, "hidden_act")):
            with self.assertRaisesRegex(OracleError, message):
                BertOracle(bert_config(**fields), w)
        del w["encoder.layer.0.output.dense.bias"]
        with self.assertRaisesRegex(OracleError, "encoder.layer.0.output.dense.bias' missing"):
            BertOracle(bert_config(), w).hidden([0, 1])


def random_model(raw, seed):
    g = torch.Generator().manual_seed(seed)
    d, f = raw["hidden_size"], raw["intermediate_size"]

    def r(*shape, scale=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    w = {"embeddings.word_embeddings.weight": r(raw["vocab_size"], d),
         "embeddings.position_embeddings.weight": r(raw["max_position_embeddings"], d),
         "embeddings.token_type_embeddings.weight": r(raw["type_vocab_size"], d),
         "embeddings.LayerNorm.weight": 1 + r(d, scale=0.1),
         "embeddings.LayerNorm.bias": r(d, scale=0.1)}
    for i in range(raw["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for name, rows, cols in (("attention.self.query", d, d), ("attention.self.key", d, d),
                                 ("attention.self.value", d, d),
                                 ("attention.output.dense", d, d),
                                 ("intermediate.dense", f, d), ("output.dense", d, f)):
            w[p + name + ".weight"] = r(rows, cols, scale=cols ** -0.5)
            w[p + name + ".bias"] = r(rows, scale=0.1)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + name + ".weight"] = 1 + r(d, scale=0.1)
            w[p + name + ".bias"] = r(d, scale=0.1)
    return w


RANDOM = {"model_type": "bert", "hidden_size": 16, "num_hidden_layers": 2,
          "num_attention_heads": 4, "intermediate_size": 24, "max_position_embeddings": 12,
          "type_vocab_size": 2, "vocab_size": 30, "layer_norm_eps": 1e-5, "hidden_act": "gelu"}


class RandomModel(unittest.TestCase):
    def test_layers_match_torch_post_ln_encoder_layer(self):
        # torch.nn.TransformerEncoderLayer with norm_first=False is BERT's
        # layer written by others: in_proj = [query; key; value], out_proj
        # the attention's dense, linear1/linear2 the FFN, norm1/norm2.
        oracle = BertOracle(RANDOM, random_model(RANDOM, 7))
        tokens = [3, 17, 0, 29, 8, 8, 12]
        expected = oracle.embeddings(torch.tensor(tokens))
        w = oracle.t
        for i in range(RANDOM["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            layer = torch.nn.TransformerEncoderLayer(
                16, 4, dim_feedforward=24, dropout=0.0, activation="gelu", layer_norm_eps=1e-5,
                batch_first=True, norm_first=False).double().eval()
            with torch.no_grad():
                names = ("query", "key", "value")
                layer.self_attn.in_proj_weight.copy_(
                    torch.cat([w[f"{p}attention.self.{n}.weight"] for n in names]))
                layer.self_attn.in_proj_bias.copy_(
                    torch.cat([w[f"{p}attention.self.{n}.bias"] for n in names]))
                for module, name in ((layer.self_attn.out_proj, "attention.output.dense"),
                                     (layer.linear1, "intermediate.dense"),
                                     (layer.linear2, "output.dense"),
                                     (layer.norm1, "attention.output.LayerNorm"),
                                     (layer.norm2, "output.LayerNorm")):
                    module.weight.copy_(w[p + name + ".weight"])
                    module.bias.copy_(w[p + name + ".bias"])
                expected = layer(expected[None])[0]
        close(self, oracle.hidden(tokens), expected, tol=1e-10)

    def test_a_later_token_changes_the_first_row(self):
        oracle = BertOracle(RANDOM, random_model(RANDOM, 3))
        a = oracle.hidden([1, 2, 3, 4])
        b = oracle.hidden([1, 2, 3, 5])
        self.assertGreater((a[0] - b[0]).abs().max().item(), 1e-4)

    def test_gguf_names_round_trip(self):
        # llama.cpp's names for LLM_ARCH_BERT (src/llama-arch.cpp), with
        # gguf-py's tensor_mapping.py pairing them to BertModel's
        raw = dict(RANDOM, num_hidden_layers=1)
        w = random_model(raw, 5)
        p = "encoder.layer.0."
        gguf_names = {
            "token_embd.weight": "embeddings.word_embeddings.weight",
            "token_types.weight": "embeddings.token_type_embeddings.weight",
            "position_embd.weight": "embeddings.position_embeddings.weight",
            "token_embd_norm.weight": "embeddings.LayerNorm.weight",
            "token_embd_norm.bias": "embeddings.LayerNorm.bias",
        }
        for gguf, hf in (("attn_q", "attention.self.query"), ("attn_k", "attention.self.key"),
                         ("attn_v", "attention.self.value"),
                         ("attn_output", "attention.output.dense"),
                         ("attn_output_norm", "attention.output.LayerNorm"),
                         ("ffn_up", "intermediate.dense"), ("ffn_down", "output.dense"),
                         ("layer_output_norm", "output.LayerNorm")):
            for part in ("weight", "bias"):
                gguf_names[f"blk.0.{gguf}.{part}"] = f"{p}{hf}.{part}"
        self.assertEqual(sorted(gguf_names.values()), sorted(w))
        renamed = hf_names_from_gguf({g: w[h] for g, h in gguf_names.items()})
        self.assertEqual(sorted(renamed), sorted(w))
        for name in w:
            self.assertIs(renamed[name], w[name])
        # the optional fused attn_qkv: rows [q; k; v]
        fused = {g: w[h] for g, h in gguf_names.items() if ".attn_q." not in g
                 and ".attn_k." not in g and ".attn_v." not in g}
        for part in ("weight", "bias"):
            fused[f"blk.0.attn_qkv.{part}"] = torch.cat(
                [w[f"{p}attention.self.{n}.{part}"] for n in ("query", "key", "value")])
        renamed = hf_names_from_gguf(fused)
        self.assertEqual(sorted(renamed), sorted(w))
        for name in w:
            close(self, renamed[name], w[name], tol=0)
        with self.assertRaisesRegex(OracleError, "cls.output.weight"):
            hf_names_from_gguf({"token_embd.weight": w["embeddings.word_embeddings.weight"],
                                "cls.output.weight": torch.zeros(1, 16)})

    def test_config_from_gguf_metadata(self):
        metadata = {"general.architecture": "bert", "bert.context_length": 512,
                    "bert.embedding_length": 128, "bert.block_count": 2,
                    "bert.feed_forward_length": 512, "bert.attention.head_count": 4,
                    "bert.attention.layer_norm_epsilon": 1e-12, "bert.attention.causal": False,
                    "bert.pooling_type": 1, "tokenizer.ggml.token_type_count": 2,
                    "tokenizer.ggml.padding_token_id": 0}
        tensors = {"token_embd.weight": torch.zeros(30522, 128),
                   "token_types.weight": torch.zeros(2, 128)}
        self.assertEqual(config_from_gguf(metadata, tensors), {
            "model_type": "bert", "hidden_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 512, "max_position_embeddings": 512,
            "layer_norm_eps": 1e-12, "vocab_size": 30522, "type_vocab_size": 2,
            "hidden_act": "gelu", "position_embedding_type": "absolute", "pad_token_id": 0,
            "pooling_type": "mean"})
        with self.assertRaisesRegex(OracleError, "causal"):
            config_from_gguf(dict(metadata, **{"bert.attention.causal": True}), tensors)
        with self.assertRaisesRegex(OracleError, "'gpt2'"):
            config_from_gguf(dict(metadata, **{"general.architecture": "gpt2"}), tensors)


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
    """bert-small as the peers' script writes it, with llama.cpp's own names and keys."""

    @classmethod
    def setUpClass(cls):
        script, peers, missing = _peer_paths()
        if missing:
            raise unittest.SkipTest(missing)
        cls.tmp = tempfile.TemporaryDirectory()
        path = os.path.join(cls.tmp.name, "bert-small.gguf")
        subprocess.run([sys.executable, script, "bert-small", "f32", path], check=True,
                       capture_output=True, env=dict(os.environ, PEERS=peers), timeout=600)
        cls.metadata, cls.gguf = read_gguf(path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_tensor_maps_and_the_oracle_runs(self):
        raw = config_from_gguf(self.metadata, self.gguf)
        self.assertEqual((raw["hidden_size"], raw["num_hidden_layers"],
                          raw["num_attention_heads"], raw["intermediate_size"],
                          raw["vocab_size"], raw["pooling_type"]),
                         (128, 2, 4, 512, 30522, "mean"))
        weights = hf_names_from_gguf(self.gguf)
        self.assertEqual(len(weights), len(self.gguf))
        oracle = BertOracle(raw, weights)
        tokens = [101, 7592, 2088, 2003, 1037, 3231, 102]
        h = oracle.hidden(tokens)
        self.assertEqual(tuple(h.shape), (7, 128))
        self.assertTrue(torch.isfinite(h).all())
        # every row is the last LayerNorm's: (h - bias) / weight has mean 0, variance 1
        p = "encoder.layer.1.output.LayerNorm."
        z = (h - weights[p + "bias"]) / weights[p + "weight"]
        close(self, z.mean(dim=1), torch.zeros(7, dtype=torch.float64), tol=1e-9)
        close(self, z.var(dim=1, unbiased=False), torch.ones(7, dtype=torch.float64), tol=1e-9)
        changed = oracle.hidden(tokens[:-2] + [2000, 102])
        self.assertGreater((changed[0] - h[0]).abs().max().item(), 1e-4)
        mean = oracle.embedding(tokens, raw["pooling_type"], normalize=True)
        close(self, mean.norm(), torch.tensor(1.0, dtype=torch.float64))


if __name__ == "__main__":
    unittest.main(verbosity=2)
