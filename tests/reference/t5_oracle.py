"""Float64 forward pass of T5 encoder-decoder models (T5 v1.0 and v1.1 /
Flan-T5), in PyTorch: the encoder's last hidden state and the decoder's
logits of one source and one decoder sequence.

Written from Hugging Face transformers' modeling_t5.py (T5LayerNorm,
T5DenseActDense, T5DenseGatedActDense, T5Attention._relative_position_bucket
and compute_bias, T5Stack, T5ForConditionalGeneration) and
configuration_t5.py (feed_forward_proj's parsing), with activations.py's
ACT2FN, not from tfmc's code. What it computes, attention masks all ones:
  norm(x) = weight * x / sqrt(mean(x^2) + eps)   (T5LayerNorm: no mean taken
            off, no bias; eps layer_norm_epsilon)
  attention(x, kv) = o(softmax(q(x) k(kv)^T + bias) v(kv))   per head of d_kv
            columns (inner dim num_heads * d_kv, not always d_model); no
            1/sqrt(d_kv) scale anywhere (T5 folds it into q's initialisation)
  ffn(x) = wo(act(wi(x)))                      (feed_forward_proj "ACT")
         = wo(act(wi_0(x)) * wi_1(x))          ("gated-ACT"; "gated-gelu" is
                                                gelu_new, the tanh GELU)
  encoder: h = shared[source]
      per block:  h += attention(norm(h), norm(h)) with bias B_enc
                  h += ffn(norm(h))
      encode = final_layer_norm(h)                              [S, d_model]
  decoder: g = shared[decoder ids]   (the first the decoder start token)
      per block:  g += attention(norm(g), norm(g)) with bias B_dec + causal mask
                  g += attention(norm(g), encode)   with no bias (cross-attention)
                  g += ffn(norm(g))
      y = final_layer_norm(g)
      logits = (y * d_model^-0.5) @ shared^T    tie_word_embeddings (default true)
             = y @ lm_head^T                    untied: no rescale
  B[head, i, j] = relative_attention_bias[bucket(j - i), head] from the table
      of block 0 of each stack (nn.Embedding [num_buckets, num_heads]), shared
      by all its blocks; bucket: _relative_position_bucket, bidirectional in
      the encoder (half the buckets for keys after the query), causal in the
      decoder (keys after the query all in bucket 0, then masked).
Every stack has its own table; block N > 0 has none (a file that gives one
is refused, since llama.cpp would use it and transformers would not). The
decoder's cross-attention never has a position bias: transformers ignores a
checkpoint's decoder.block.0.layer.1.EncDecAttention.relative_attention_bias
(_keys_to_ignore_on_load_unexpected), and so does this oracle. Dropout is
off (inference). transformers computes T5LayerNorm's variance and the
softmax in float32 even for a float64 model; here everything is float64.

Weights are read under T5ForConditionalGeneration's names: shared.weight
(encoder.embed_tokens.weight and decoder.embed_tokens.weight are the same
tensor and may stand in for it), encoder.block.N.layer.0.SelfAttention.q/k/v/o,
.layer.0.layer_norm, .layer.1.DenseReluDense.wi (or wi_0, wi_1), .wo,
.layer.1.layer_norm, encoder.final_layer_norm; the decoder's blocks have
layer.1 = EncDecAttention and layer.2 = DenseReluDense; lm_head.weight when
untied. A GGUF's llama.cpp names (arch "t5": src/llama-arch.cpp LLM_ARCH_T5,
gguf-py's tensor_mapping.py, convert_hf_to_gguf.py T5Model) are renamed back
by hf_names_from_gguf; the converter writes every tensor as transformers
holds it (attn_rel_b is [num_buckets, num_heads] there too), so nothing is
transposed. config_from_gguf builds the T5Config from the t5.* keys.
llama.cpp computes differently from transformers in ways this oracle does
not follow: it does not rescale a tied head by d_model^-0.5, its relative
max distance is fixed at 128, its gated feed-forward is always GELU and its
plain one always ReLU (whatever feed_forward_proj was), and a block's own
attn_rel_b, if a file has one, replaces block 0's.
"""

import math

import torch

from gpt2_oracle import gelu
import oracle_parts
from oracle_parts import NamedTensors, OracleError


FAMILIES = ("t5",)


def handles(raw):
    return raw.get("model_type") in FAMILIES


def load_config(path):
    return oracle_parts.load_config(path, handles, f"one of {FAMILIES}")


def feed_forward_proj(raw):
    """(dense_act_fn, is_gated_act) as T5Config parses feed_forward_proj
    ("relu" unless given): "ACT" or "gated-ACT"; "gated-gelu" means gelu_new,
    the tanh GELU (configuration_t5.py: "for backwards compatibility"), while a
    plain "gelu" stays the erf GELU."""
    proj = raw.get("feed_forward_proj", "relu")
    parts = proj.split("-")
    if (len(parts) > 1 and parts[0] != "gated") or len(parts) > 2:
        raise OracleError(f"feed_forward_proj {proj!r}: expected 'ACT' or 'gated-ACT'")
    act = "gelu_new" if proj == "gated-gelu" else parts[-1]
    return act, parts[0] == "gated"


def activation(name, x):
    """ACT2FN[name] of activations.py, for the names T5 configs use."""
    if name == "relu":
        return torch.relu(x)
    if name == "gelu":
        return gelu(x, "gelu")
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return gelu(x, "gelu_new")  # gelu_fast: the same, sqrt(2/pi) to 10 digits
    if name in ("silu", "swish"):
        return x * torch.sigmoid(x)
    if name == "quick_gelu":
        return x * torch.sigmoid(1.702 * x)
    raise OracleError(f"activation {name!r} not modelled here")


def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32,
                             max_distance=128):
    """T5Attention._relative_position_bucket, step for step: relative_position
    (a long tensor, key position - query position) to buckets in
    [0, num_buckets). Bidirectional: half the buckets for keys after the
    query (offset num_buckets / 2), |distance| in the rest. Causal: keys
    after the query all take bucket 0. Of the n buckets left, the first
    n / 2 hold distances 0 .. n/2 - 1 exactly; larger distances d take
    n/2 + floor(log(d / (n/2)) / log(max_distance / (n/2)) * n/2), capped at
    n - 1. The logarithm is taken in float32, as transformers does
    (relative_position.float()), so that boundaries round as there."""
    relative_position = torch.as_tensor(relative_position, dtype=torch.long)
    relative_buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    # Distance 0 takes log(0) = -inf, cast to some long: is_small discards
    # it, as in transformers.
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
    return relative_buckets + torch.where(is_small, relative_position, relative_position_if_large)


def position_bias(table, query_length, key_length, bidirectional, max_distance=128):
    """T5Attention.compute_bias without a cache: [heads, query_length,
    key_length] from the nn.Embedding weight `table` [num_buckets, heads],
    relative position = key position - query position."""
    context = torch.arange(query_length, dtype=torch.long)[:, None]
    memory = torch.arange(key_length, dtype=torch.long)[None, :]
    buckets = relative_position_bucket(memory - context, bidirectional, table.shape[0],
                                       max_distance)
    return table[buckets].permute(2, 0, 1)


def t5_layer_norm(x, weight, eps):
    """T5LayerNorm: weight * x / sqrt(mean(x^2) + eps) over the last
    dimension; no mean subtracted, no bias."""
    return weight * (x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps))


def dense_act_dense(x, wi, wo, act):
    """T5DenseActDense: wo(act(wi(x))), Linear weights [out, in], no biases."""
    return activation(act, x @ wi.T) @ wo.T


def dense_gated_act_dense(x, wi_0, wi_1, wo, act):
    """T5DenseGatedActDense: wo(act(wi_0(x)) * wi_1(x))."""
    return (activation(act, x @ wi_0.T) * (x @ wi_1.T)) @ wo.T


# llama.cpp's GGUF names (LLM_ARCH_T5) -> T5ForConditionalGeneration's. The
# feed-forward's ffn_up is wi in a plain block and wi_1 beside an ffn_gate
# (wi_0): the converter maps both wi and wi_1 to ffn_up.
_GGUF_TOP = {
    "token_embd": "shared",
    "output": "lm_head",
    "enc.output_norm": "encoder.final_layer_norm",
    "dec.output_norm": "decoder.final_layer_norm",
}
_GGUF_ENC = {
    "attn_norm": "layer.0.layer_norm",
    "attn_q": "layer.0.SelfAttention.q",
    "attn_k": "layer.0.SelfAttention.k",
    "attn_v": "layer.0.SelfAttention.v",
    "attn_o": "layer.0.SelfAttention.o",
    "attn_rel_b": "layer.0.SelfAttention.relative_attention_bias",
    "ffn_norm": "layer.1.layer_norm",
    "ffn_gate": "layer.1.DenseReluDense.wi_0",
    "ffn_down": "layer.1.DenseReluDense.wo",
}
_GGUF_DEC = {
    "attn_norm": "layer.0.layer_norm",
    "attn_q": "layer.0.SelfAttention.q",
    "attn_k": "layer.0.SelfAttention.k",
    "attn_v": "layer.0.SelfAttention.v",
    "attn_o": "layer.0.SelfAttention.o",
    "attn_rel_b": "layer.0.SelfAttention.relative_attention_bias",
    "cross_attn_norm": "layer.1.layer_norm",
    "cross_attn_q": "layer.1.EncDecAttention.q",
    "cross_attn_k": "layer.1.EncDecAttention.k",
    "cross_attn_v": "layer.1.EncDecAttention.v",
    "cross_attn_o": "layer.1.EncDecAttention.o",
    "cross_attn_rel_b": "layer.1.EncDecAttention.relative_attention_bias",
    "ffn_norm": "layer.2.layer_norm",
    "ffn_gate": "layer.2.DenseReluDense.wi_0",
    "ffn_down": "layer.2.DenseReluDense.wo",
}


def hf_names_from_gguf(tensors):
    """A t5 GGUF's tensors under T5ForConditionalGeneration's names. The
    shapes stay as read (the converter stores transformers' own layouts).
    Every tensor must map: any other name is refused rather than silently
    left out of the comparison."""
    out, unknown = {}, []
    gated = {name.rsplit(".", 2)[0] for name in tensors if name.endswith(".ffn_gate.weight")}
    for name, value in tensors.items():
        stem, _, part = name.rpartition(".")
        if part != "weight":
            unknown.append(name)
        elif stem in _GGUF_TOP:
            out[f"{_GGUF_TOP[stem]}.weight"] = value
        elif stem.count(".") == 3 and stem.split(".")[:2] in (["enc", "blk"], ["dec", "blk"]):
            side, _, block, role = stem.split(".")
            table = _GGUF_ENC if side == "enc" else _GGUF_DEC
            stack = "encoder" if side == "enc" else "decoder"
            ffn = "layer.1" if side == "enc" else "layer.2"
            if not block.isdigit():
                unknown.append(name)
            elif role in table:
                out[f"{stack}.block.{block}.{table[role]}.weight"] = value
            elif role == "ffn_up":
                wi = "wi_1" if f"{side}.blk.{block}" in gated else "wi"
                out[f"{stack}.block.{block}.{ffn}.DenseReluDense.{wi}.weight"] = value
            else:
                unknown.append(name)
        else:
            unknown.append(name)
    if unknown:
        raise OracleError(f"GGUF tensors with no T5 name: {sorted(unknown)}")
    return out


def config_from_gguf(metadata, tensors=None, tie_word_embeddings=None):
    """The T5Config a t5 GGUF's t5.* keys describe, as a config.json dict.
    vocab_size comes from token_embd's rows when `tensors` is given (else the
    tokenizer's list). The file does not say which activation or whether the
    head was tied: llama.cpp runs GELU (tanh form) where a block has
    ffn_gate and ReLU where it has not, so "gated-gelu" or "relu"; the head
    is taken as tied when there is no output.weight, unless
    tie_word_embeddings says otherwise (a tied checkpoint that also stored
    lm_head.weight converts to a file with one). The relative max distance
    is no key: llama.cpp fixes it at 128, transformers' default."""
    arch = metadata.get("general.architecture")
    if arch != "t5":
        raise OracleError(f"GGUF general.architecture {arch!r}, expected 't5'")

    def key(name, default=None):
        value = metadata.get(f"t5.{name}", default)
        if value is None:
            raise OracleError(f"GGUF key t5.{name} missing")
        return value

    d_model, heads = key("embedding_length"), key("attention.head_count")
    d_kv = key("attention.key_length", d_model // heads)  # llama.cpp's default n_embd / n_head
    if key("attention.value_length", d_kv) != d_kv:
        raise OracleError("GGUF t5.attention.value_length differs from key_length")
    # llama.cpp reads the RMS key; the converter writes both with one value.
    eps = metadata.get("t5.attention.layer_norm_rms_epsilon",
                       metadata.get("t5.attention.layer_norm_epsilon"))
    if eps is None:
        raise OracleError("GGUF key t5.attention.layer_norm_rms_epsilon missing")
    names = tensors.keys() if tensors is not None else ()
    if tensors is not None and "token_embd.weight" in tensors:
        vocab = tensors["token_embd.weight"].shape[0]
    else:
        vocab = len(metadata.get("tokenizer.ggml.tokens", []))
    ffn_up = {n.rsplit(".", 2)[0] for n in names if n.endswith(".ffn_up.weight")}
    ffn_gate = {n.rsplit(".", 2)[0] for n in names if n.endswith(".ffn_gate.weight")}
    if ffn_gate and ffn_gate != ffn_up:
        raise OracleError("GGUF: ffn_gate in some blocks only; T5Config gates all or none")
    if tie_word_embeddings is None:
        tie_word_embeddings = "output.weight" not in names
    raw = {
        "model_type": "t5",
        "is_encoder_decoder": True,
        "d_model": d_model,
        "d_kv": d_kv,
        "d_ff": key("feed_forward_length"),
        "num_layers": key("block_count"),
        "num_decoder_layers": key("decoder_block_count", key("block_count")),
        "num_heads": heads,
        "relative_attention_num_buckets": key("attention.relative_buckets_count"),
        "relative_attention_max_distance": 128,
        "layer_norm_epsilon": eps,
        "feed_forward_proj": "gated-gelu" if ffn_gate else "relu",
        "tie_word_embeddings": bool(tie_word_embeddings),
        "vocab_size": vocab,
    }
    if "t5.context_length" in metadata:
        raw["n_positions"] = metadata["t5.context_length"]
    for gguf_key, field in (("tokenizer.ggml.padding_token_id", "pad_token_id"),
                            ("tokenizer.ggml.eos_token_id", "eos_token_id"),
                            ("t5.decoder_start_token_id", "decoder_start_token_id")):
        if gguf_key in metadata:
            raw[field] = metadata[gguf_key]
    return raw


_EMBEDDING_NAMES = ("shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight")
# A checkpoint's tensor that transformers reads past (see the module docstring).
_IGNORED = ("EncDecAttention.relative_attention_bias.weight",)


class T5Oracle(NamedTensors):
    def __init__(self, raw, tensors):
        if not handles(raw):
            raise OracleError(f"model_type {raw.get('model_type')!r}: expected one of {FAMILIES}")
        # The sizes have T5Config defaults (t5-small's); a config.json always
        # states them, and a missing one is more likely a wrong file.
        for field in ("d_model", "d_kv", "d_ff", "num_layers", "num_heads"):
            if field not in raw:
                raise OracleError(f"config: field '{field}' missing")
        self.raw = raw
        self.d_model = raw["d_model"]
        self.d_kv = raw["d_kv"]
        self.heads = raw["num_heads"]
        self.inner = self.heads * self.d_kv
        self.encoder_layers = raw["num_layers"]
        decoder_layers = raw.get("num_decoder_layers")
        self.decoder_layers = self.encoder_layers if decoder_layers is None else decoder_layers
        self.num_buckets = raw.get("relative_attention_num_buckets", 32)
        self.max_distance = raw.get("relative_attention_max_distance", 128)
        self.eps = raw.get("layer_norm_epsilon", 1e-6)
        self.act, self.gated = feed_forward_proj(raw)
        activation(self.act, torch.zeros(1, dtype=torch.float64))  # refuse early
        self.tied = raw.get("tie_word_embeddings", True)
        pad = raw.get("pad_token_id", 0)
        start = raw.get("decoder_start_token_id")
        self.decoder_start_token_id = pad if start is None else start

        self.t = {}
        embeddings = []
        for name, value in tensors.items():
            value = torch.as_tensor(value).double()
            if name in _EMBEDDING_NAMES:
                embeddings.append((name, value))
            elif name.endswith(_IGNORED):
                continue
            else:
                self.t[name] = value
        if not embeddings:
            raise OracleError("weights: tensor 'shared.weight' missing")
        self.shared = embeddings[0][1]
        for name, value in embeddings[1:]:
            # transformers ties them to one parameter; copies that differ
            # leave it unclear which the model was meant to use.
            if value.shape != self.shared.shape or not torch.equal(value, self.shared):
                raise OracleError(f"weights: '{name}' differs from '{embeddings[0][0]}'")
        vocab = raw.get("vocab_size")
        if vocab is not None and vocab != self.shared.shape[0]:
            raise OracleError(f"vocab_size {vocab} but the embedding has "
                              f"{self.shared.shape[0]} rows")
        if tuple(self.shared.shape[1:]) != (self.d_model,):
            raise OracleError(f"embedding shape {tuple(self.shared.shape)}: expected "
                              f"[vocab, d_model {self.d_model}]")
        if self.tied and "lm_head.weight" in self.t:
            if not torch.equal(self.t["lm_head.weight"], self.shared):
                raise OracleError("tie_word_embeddings but lm_head.weight differs from "
                                  "shared.weight")
        self._check_names()

    def _expected_names(self):
        names = set()
        ffn = ["wi_0", "wi_1", "wo"] if self.gated else ["wi", "wo"]
        for stack, layers in (("encoder", self.encoder_layers), ("decoder", self.decoder_layers)):
            for i in range(layers):
                p = f"{stack}.block.{i}.layer."
                sub = ["0.SelfAttention"] + (["1.EncDecAttention"] if stack == "decoder" else [])
                for s in sub:
                    names.update(f"{p}{s}.{m}.weight" for m in "qkvo")
                norms = len(sub) + 1
                names.update(f"{p}{j}.layer_norm.weight" for j in range(norms))
                names.update(f"{p}{norms - 1}.DenseReluDense.{w}.weight" for w in ffn)
            if layers:
                names.add(f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight")
            names.add(f"{stack}.final_layer_norm.weight")
        if not self.tied:
            names.add("lm_head.weight")
        return names

    def _check_names(self):
        """Every tensor the config calls for, and no other (a block's own
        relative_attention_bias past block 0, or wi beside wi_0, would mean a
        different model from the one computed here)."""
        expected = self._expected_names()
        missing = sorted(expected - self.t.keys())
        extra = sorted(self.t.keys() - expected - ({"lm_head.weight"} if self.tied else set()))
        if missing:
            raise OracleError(f"weights: tensors missing: {missing}")
        if extra:
            raise OracleError(f"weights: tensors this T5 config has no place for: {extra}")
        for stack, layers in (("encoder", self.encoder_layers), ("decoder", self.decoder_layers)):
            if not layers:
                continue
            table = self.t[f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]
            if tuple(table.shape) != (self.num_buckets, self.heads):
                raise OracleError(f"{stack} relative_attention_bias {tuple(table.shape)}: "
                                  f"expected [{self.num_buckets}, {self.heads}]")


    def norm(self, x, name):
        return t5_layer_norm(x, self.get(name + ".weight"), self.eps)

    def attention(self, x, kv, p, bias):
        """T5Attention: x [Tq, d_model] attends to kv [Tk, d_model]; bias
        [heads, Tq, Tk] (position bias plus mask) or None; scores unscaled."""
        Tq, Tk = x.shape[0], kv.shape[0]
        q = (x @ self.get(p + ".q.weight").T).view(Tq, self.heads, self.d_kv)
        k = (kv @ self.get(p + ".k.weight").T).view(Tk, self.heads, self.d_kv)
        v = (kv @ self.get(p + ".v.weight").T).view(Tk, self.heads, self.d_kv)
        scores = torch.einsum("qhd,khd->hqk", q, k)
        if bias is not None:
            scores = scores + bias
        probs = torch.softmax(scores, dim=-1)
        context = torch.einsum("hqk,khd->qhd", probs, v).reshape(Tq, self.inner)
        return context @ self.get(p + ".o.weight").T

    def feed_forward(self, x, p):
        """T5LayerFF's DenseReluDense at prefix p (…DenseReluDense)."""
        if self.gated:
            return dense_gated_act_dense(x, self.get(p + ".wi_0.weight"),
                                         self.get(p + ".wi_1.weight"),
                                         self.get(p + ".wo.weight"), self.act)
        return dense_act_dense(x, self.get(p + ".wi.weight"), self.get(p + ".wo.weight"),
                               self.act)

    def bias(self, stack, query_length, key_length):
        """Block 0's relative position bias of a stack, [heads, Tq, Tk]; the
        decoder's with the causal mask (-inf past the query) added. None for
        a stack of no blocks."""
        if not (self.encoder_layers if stack == "encoder" else self.decoder_layers):
            return None
        table = self.get(f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight")
        decoder = stack == "decoder"
        b = position_bias(table, query_length, key_length, not decoder, self.max_distance)
        if decoder:
            future = torch.ones(query_length, key_length, dtype=torch.bool).triu(1)
            b = b.masked_fill(future, float("-inf"))
        return b

    def embed(self, ids, what):
        ids = torch.as_tensor(ids, dtype=torch.long).reshape(-1)
        if len(ids) == 0:
            raise OracleError(f"no {what} tokens")
        if int(ids.min()) < 0 or int(ids.max()) >= self.shared.shape[0]:
            raise OracleError(f"{what} token ids must lie in [0, {self.shared.shape[0]})")
        return self.shared[ids]

    def encode(self, source_ids):
        """The encoder's last_hidden_state [S, d_model] (after final_layer_norm)."""
        h = self.embed(source_ids, "source")
        bias = self.bias("encoder", len(h), len(h))
        for i in range(self.encoder_layers):
            p = f"encoder.block.{i}.layer."
            x = self.norm(h, p + "0.layer_norm")
            h = h + self.attention(x, x, p + "0.SelfAttention", bias)
            h = h + self.feed_forward(self.norm(h, p + "1.layer_norm"), p + "1.DenseReluDense")
        return self.norm(h, "encoder.final_layer_norm")

    def decoder_hidden(self, source_ids, decoder_ids, encoded=None):
        """The decoder's last_hidden_state [T, d_model] (after its
        final_layer_norm) for decoder_ids, which start with the decoder start
        token; `encoded` reuses encode(source_ids)."""
        enc = self.encode(source_ids) if encoded is None else encoded
        g = self.embed(decoder_ids, "decoder")
        bias = self.bias("decoder", len(g), len(g))
        for i in range(self.decoder_layers):
            p = f"decoder.block.{i}.layer."
            x = self.norm(g, p + "0.layer_norm")
            g = g + self.attention(x, x, p + "0.SelfAttention", bias)
            g = g + self.attention(self.norm(g, p + "1.layer_norm"), enc,
                                   p + "1.EncDecAttention", None)
            g = g + self.feed_forward(self.norm(g, p + "2.layer_norm"), p + "2.DenseReluDense")
        return self.norm(g, "decoder.final_layer_norm")

    def head(self, hidden):
        """T5ForConditionalGeneration's lm_head: tied, the hidden state is
        first scaled by d_model^-0.5 (Mesh TensorFlow's rescale)."""
        if self.tied:
            return (hidden * self.d_model ** -0.5) @ self.shared.T
        return hidden @ self.get("lm_head.weight").T

    def decoder_logits(self, source_ids, decoder_ids):
        """Logits [len(decoder_ids), vocab] of every decoder position."""
        return self.head(self.decoder_hidden(source_ids, decoder_ids))
