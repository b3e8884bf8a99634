"""Float64 forward pass of two post-LN encoder-decoder families, in PyTorch:
Marian (Hugging Face's MarianMTModel, the Helsinki-NLP opus-mt models) and
tfm's own "transformer" family as the 2017 encoder-decoder (Vaswani et al.,
"Attention Is All You Need", sections 3.1-3.5). The encoder's last hidden
state and the decoder's logits of one source and one decoder sequence.

Marian is written from transformers' modeling_marian.py
(MarianSinusoidalPositionalEmbedding._init_weight, MarianAttention and
eager_attention_forward, MarianEncoderLayer, MarianDecoderLayer, MarianEncoder,
MarianDecoder, MarianMTModel) and configuration_marian.py's defaults; the
2017 family from the paper, and the test (test_seq2seq_oracle.py) holds both
block stacks to torch.nn.Transformer (post-LN) given the same weights. Not
from tfmc's code. What it computes, attention masks all ones (no padding):
  embed(ids) = E[ids] * scale + P[0 .. n-1]      every stack from position 0
  attention(x, kv) = out(softmax(q(x) k(kv)^T * head_dim^-0.5 [+ causal]) v(kv))
             per head of d_model / heads columns; q, k, v and out are Linear
             layers with biases
  ffn(x) = fc2(act(fc1(x)))                     (Linear layers with biases)
  encoder: h = embed(source)
      per layer:  h = LN(h + attention(h, h))             self_attn_layer_norm
                  h = LN(h + ffn(h))                      final_layer_norm
      encode = h (no final norm)                                  [S, d_model]
  decoder: g = embed(decoder ids)   (the first the decoder start token)
      per layer:  g = LN(g + attention(g, g) with the causal mask)
                  g = LN(g + attention(g, encode))        encoder_attn_layer_norm
                  g = LN(g + ffn(g))
      logits = g @ E^T + b        tied (lm_head = E); b = final_logits_bias
                                  (Marian, zeros when the file has none; the
                                  2017 family has none)
LN is LayerNorm with weight and bias (biased variance; eps 1e-5, nn.LayerNorm's
default, for Marian, which has no field for it; norm_eps for the 2017 family).

The families differ in:
  P: Marian's table is NOT interleaved: with s = ceil(d/2) (_init_weight's
     "sentinel"), P[pos, i] = sin(pos / 10000^(2i/d)) for i < s and
     P[pos, s + i] = cos(pos / 10000^(2i/d)) for i < d // 2 (marian_positions).
     The paper's: P[pos, 2i] = sin(pos / 10000^(2i/d)), P[pos, 2i+1] = cos(same)
     (interleaved_positions).
  scale: Marian sqrt(d_model) when scale_embedding (MarianConfig's default
     false; the opus-mt configs say true), else 1; the 2017 family
     embedding_scale, "sqrt_d_model" or a number (default 1).
  act: Marian's activation_function ("swish"/"silu", "relu", "gelu" the erf
     GELU, "gelu_new" the tanh form; default "gelu"); the 2017 family's
     activation ("relu" default, "gelu" erf, "silu").
transformers builds Marian's position table in numpy float64 and stores it as
torch.FloatTensor: rounded to float32 even in a float64 model (a relative
error under 6e-8); this oracle keeps it float64. A checkpoint that holds the
table (model.encoder/decoder.embed_positions.weight: older save_pretrained
wrote them; MarianMTModel now lists them in _keys_to_ignore_on_save) has it
checked against the formula to POSITION_TOLERANCE, which a float16 or
bfloat16 copy meets and the other layout misses by far, and not read
otherwise (transformers would load such a table as stored, rounding and
all). Dropout is off (inference).

Weights are read under MarianMTModel's names, with or without MarianModel's
"model." prefix: model.shared.weight (model.encoder.embed_tokens.weight or
model.decoder.embed_tokens.weight may stand in for it; every copy given, and
lm_head.weight when tied, must equal it),
model.{encoder,decoder}.layers.N.self_attn.{q,k,v,out}_proj.{weight,bias},
.self_attn_layer_norm, .fc1, .fc2, .final_layer_norm, and in the decoder
.encoder_attn.{q,k,v,out}_proj and .encoder_attn_layer_norm; final_logits_bias
([1, vocab] as the buffer is saved, or [vocab]); lm_head.weight when untied.
The manifest names tfm-weights writes (llama.cpp's style with enc./dec.
stacks, the same in safetensors and GGUF) are accepted as well: the
constructor renames them with hf_names_from_manifest when it sees them, so
either scheme may be passed (not both mixed). Every tensor the config calls
for must be there and no other (a stray tensor means a model this oracle
does not compute).
"""

import math

import torch

from gpt2_oracle import gelu
import oracle_parts
from oracle_parts import NamedTensors, OracleError


FAMILIES = ("marian", "transformer")

# The largest difference allowed between a checkpoint's stored position table
# and the formula: a bfloat16 copy of values in [-1, 1] is off by at most
# 2^-9 (~2e-3), a float16 one by 2^-12 (~2.4e-4); the other layout (or
# another frequency) is off by O(1) in most cells.
POSITION_TOLERANCE = 4e-3


def handles(raw):
    kind = raw.get("model_type")
    return kind == "marian" or (kind == "transformer"
                                and raw.get("architecture") == "encoder_decoder")


def load_config(path):
    return oracle_parts.load_config(
        path, handles, "'marian', or 'transformer' with architecture 'encoder_decoder'")


def activation(name, x):
    """ACT2FN[name] of transformers' activations.py (Marian's names) and the
    2017 family's names: "gelu" is the erf GELU there (GELUActivation), the
    tanh form is "gelu_new"; "swish" is SiLU."""
    if name == "relu":
        return torch.relu(x)
    if name == "gelu":
        return gelu(x, "gelu")
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return gelu(x, "gelu_new")  # gelu_fast: the same, sqrt(2/pi) to 10 digits
    if name in ("silu", "swish"):
        return x * torch.sigmoid(x)
    raise OracleError(f"activation {name!r} not modelled here")


def _angles(n, d, count):
    """pos / 10000^(2i/d) for pos < n, i < count: [n, count] float64. The
    exponent 2i/d is formed as the published code forms it (2 * (j // 2) / dim
    in numpy float64, then 10000 ** that, then a division)."""
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    exponent = torch.tensor([2 * i / d for i in range(count)], dtype=torch.float64)
    return pos / torch.pow(torch.tensor(10000.0, dtype=torch.float64), exponent)[None, :]


def marian_positions(n, d):
    """MarianSinusoidalPositionalEmbedding's table, rows 0 .. n-1 [n, d]: the
    sines of all frequencies first (ceil(d/2) columns), then the cosines
    (d // 2 columns); of odd d the last frequency has a sine only."""
    sines = (d + 1) // 2
    out = torch.empty(n, d, dtype=torch.float64)
    out[:, :sines] = torch.sin(_angles(n, d, sines))
    out[:, sines:] = torch.cos(_angles(n, d, d // 2))
    return out


def interleaved_positions(n, d):
    """The 2017 paper's table [n, d]: PE(pos, 2i) = sin(pos / 10000^(2i/d)),
    PE(pos, 2i+1) = cos(pos / 10000^(2i/d)); of odd d the last column is a sine."""
    angles = _angles(n, d, (d + 1) // 2)
    out = torch.empty(n, d, dtype=torch.float64)
    out[:, 0::2] = torch.sin(angles)
    out[:, 1::2] = torch.cos(angles[:, :d // 2])
    return out


# The manifest's names (tfm-weights, for both families, in safetensors and
# GGUF alike) -> MarianMTModel's. A block's role has .weight and .bias.
_MANIFEST_TOP = {
    "token_embd.weight": "model.shared.weight",
    "output.weight": "lm_head.weight",
    "output.bias": "final_logits_bias",            # Marian only: [vocab]
    # Not written for either family as far as is known; accepted so that a
    # writer that keeps Marian's stored tables is checked, not refused.
    "enc.position_embd.weight": "model.encoder.embed_positions.weight",
    "dec.position_embd.weight": "model.decoder.embed_positions.weight",
}
_MANIFEST_ROLES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_o": "self_attn.out_proj",
    "attn_norm": "self_attn_layer_norm",      # after the attention's residual add
    "ffn_up": "fc1",
    "ffn_down": "fc2",
    "ffn_norm": "final_layer_norm",           # after the feed-forward's residual add
}
_MANIFEST_CROSS = {
    "cross_attn_q": "encoder_attn.q_proj",
    "cross_attn_k": "encoder_attn.k_proj",
    "cross_attn_v": "encoder_attn.v_proj",
    "cross_attn_o": "encoder_attn.out_proj",
    "cross_attn_norm": "encoder_attn_layer_norm",
}


def _is_manifest_name(name):
    return name in _MANIFEST_TOP or name.startswith(("enc.blk.", "dec.blk."))


def hf_names_from_manifest(tensors, raw=None):
    """Manifest-named tensors under MarianMTModel's names ("model." prefix),
    shapes as read (Linear weights [out, in] in both: nothing is transposed).
    output.bias, final_logits_bias, becomes [1, vocab] as the buffer is held;
    it is refused for the 2017 family (raw given), whose head has no bias.
    Any name with no place is refused rather than silently left out."""
    family = None if raw is None else raw.get("model_type")
    out, unknown = {}, []
    for name, value in tensors.items():
        if name in _MANIFEST_TOP:
            if name == "output.bias":
                if family == "transformer":
                    unknown.append(name)
                    continue
                value = torch.as_tensor(value).reshape(1, -1)
            out[_MANIFEST_TOP[name]] = value
            continue
        parts = name.split(".")
        if (len(parts) != 5 or parts[0] not in ("enc", "dec") or parts[1] != "blk"
                or not parts[2].isdigit() or parts[4] not in ("weight", "bias")):
            unknown.append(name)
            continue
        side, _, layer, role, part = parts
        roles = dict(_MANIFEST_ROLES, **(_MANIFEST_CROSS if side == "dec" else {}))
        if role not in roles:
            unknown.append(name)
            continue
        stack = "encoder" if side == "enc" else "decoder"
        out[f"model.{stack}.layers.{layer}.{roles[role]}.{part}"] = value
    if unknown:
        raise OracleError(f"manifest tensors with no place in this encoder-decoder: "
                          f"{sorted(unknown)}")
    return out


def _flag(raw, field, default):
    value = raw.get(field)
    return default if value is None else value


class Seq2SeqOracle(NamedTensors):
    def __init__(self, raw, tensors):
        if not handles(raw):
            raise OracleError(f"model_type {raw.get('model_type')!r} (architecture "
                              f"{raw.get('architecture')!r}): not an encoder-decoder "
                              f"this oracle computes")
        self.raw = raw
        self.family = raw["model_type"]
        if self.family == "marian":
            self._marian_config(raw)
        else:
            self._transformer_config(raw)
        if self.heads < 1 or self.d % self.heads:
            raise OracleError(f"d_model {self.d} is not a multiple of the head count "
                              f"{self.heads}")
        self.head_dim = self.d // self.heads
        activation(self.act, torch.zeros(1, dtype=torch.float64))  # refuse early
        self._read(tensors)

    # -- configuration ------------------------------------------------------

    def _marian_config(self, raw):
        # MarianConfig has defaults for every size (opus-mt-en-de's); a
        # config.json states them all, and a missing one is more likely a
        # wrong file than a wish for the default.
        for field in ("d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads",
                      "decoder_attention_heads", "encoder_ffn_dim", "decoder_ffn_dim"):
            if field not in raw:
                raise OracleError(f"config: field '{field}' missing")
        # One head count and one feed-forward width for both stacks: what the
        # compiled model supports (transformers itself would take two).
        for a, b in (("encoder_attention_heads", "decoder_attention_heads"),
                     ("encoder_ffn_dim", "decoder_ffn_dim")):
            if raw[a] != raw[b]:
                raise OracleError(f"config: {a} {raw[a]} differs from {b} {raw[b]}")
        # Fields of BART-era configs (the first opus-mt conversions carry them)
        # that modeling_marian.py no longer reads: a value other than the one
        # it computes describes a model it would not run as described.
        for field, expected in (("normalize_before", False), ("add_final_layer_norm", False),
                                ("normalize_embedding", False), ("add_bias_logits", False),
                                ("static_position_embeddings", True)):
            if field in raw and raw[field] != expected:
                raise OracleError(f"config: {field} {raw[field]!r}: Marian is post-LN with "
                                  f"sinusoidal positions and no extra norms "
                                  f"(expected {expected!r})")
        if not _flag(raw, "share_encoder_decoder_embeddings", True):
            raise OracleError("config: share_encoder_decoder_embeddings false (separate "
                              "source and target vocabularies) is not modelled")
        vocab = _flag(raw, "vocab_size", 58101)
        decoder_vocab = _flag(raw, "decoder_vocab_size", vocab)
        if decoder_vocab != vocab:
            raise OracleError(f"config: decoder_vocab_size {decoder_vocab} differs from "
                              f"vocab_size {vocab}")
        self.vocab = vocab
        self.d = raw["d_model"]
        self.heads = raw["encoder_attention_heads"]
        self.ffn = raw["encoder_ffn_dim"]
        self.encoder_layers = raw["encoder_layers"]
        self.decoder_layers = raw["decoder_layers"]
        self.act = _flag(raw, "activation_function", "gelu")
        self.eps = 1e-5  # nn.LayerNorm's default: MarianConfig has no field for it
        self.scale = math.sqrt(self.d) if _flag(raw, "scale_embedding", False) else 1.0
        self.positions = marian_positions
        # The position table has max_position_embeddings rows: transformers
        # fails past it (an index error), so this oracle refuses there too.
        self.max_positions = _flag(raw, "max_position_embeddings", 1024)
        self.tied = _flag(raw, "tie_word_embeddings", True)
        self.has_logits_bias = True
        pad = _flag(raw, "pad_token_id", 58100)
        # MarianConfig's own default is 58100 whatever the pad; Marian starts
        # the decoder from its pad token, so a config without the field is
        # taken to mean the pad (the two agree for every published model).
        self.decoder_start_token_id = _flag(raw, "decoder_start_token_id", pad)

    def _transformer_config(self, raw):
        for field in ("d_model", "n_heads", "n_layers", "d_ff", "vocab_size"):
            if field not in raw:
                raise OracleError(f"config: field '{field}' missing")
        # The switches of the decoder-only family (family_oracle.py) that this
        # encoder-decoder does not model: refused, not ignored. Defaults are
        # that family's, so a config that says nothing about the norm's place
        # means pre-LN there and is refused here.
        if raw.get("positions", "sinusoidal") != "sinusoidal":
            raise OracleError(f"config: positions {raw['positions']!r}: only 'sinusoidal' "
                              f"is modelled for the encoder-decoder")
        if raw.get("norm_position", "pre") != "post":
            raise OracleError(f"config: norm_position {raw.get('norm_position', 'pre')!r} "
                              f"(default 'pre'): only 'post' is modelled")
        if raw.get("norm", "layer_norm") != "layer_norm":
            raise OracleError(f"config: norm {raw['norm']!r}: only 'layer_norm' is modelled")
        d, heads = raw["d_model"], raw["n_heads"]
        if raw.get("n_kv_heads") not in (None, heads):
            raise OracleError(f"config: n_kv_heads {raw['n_kv_heads']} (grouped attention) "
                              f"is not modelled for the encoder-decoder")
        if heads > 0 and raw.get("head_dim") not in (None, d // heads):
            raise OracleError(f"config: head_dim {raw['head_dim']}: only d_model / n_heads "
                              f"is modelled for the encoder-decoder")
        for field in ("gated_ffn", "alibi", "fused_qkv", "embedding_norm", "parallel_residual",
                      "clip_qkv"):
            if raw.get(field):
                raise OracleError(f"config: {field} {raw[field]!r} is not modelled "
                                  f"for the encoder-decoder")
        self.vocab = raw["vocab_size"]
        self.d = d
        self.heads = heads
        self.ffn = raw["d_ff"]
        self.decoder_layers = raw["n_layers"]
        self.encoder_layers = _flag(raw, "n_encoder_layers", raw["n_layers"])
        self.act = raw.get("activation", "relu")
        self.eps = _flag(raw, "norm_eps", 1e-5)
        scale = _flag(raw, "embedding_scale", 1.0)
        if scale == "sqrt_d_model":
            scale = math.sqrt(d)
        elif isinstance(scale, str) or isinstance(scale, bool):
            raise OracleError(f"config: embedding_scale {scale!r}: expected 'sqrt_d_model' "
                              f"or a number")
        self.scale = float(scale)
        self.positions = interleaved_positions
        # No table: context_length and source_length are the compiled sizes,
        # which tfmc --context may exceed; the formula has no end.
        self.max_positions = None
        self.tied = _flag(raw, "tie_word_embeddings", True)
        self.has_logits_bias = False
        start = raw.get("decoder_start_token_id")
        self.decoder_start_token_id = raw.get("bos_token_id") if start is None else start

    # -- weights ------------------------------------------------------------

    def _read(self, tensors):
        if any(_is_manifest_name(name) for name in tensors):
            tensors = hf_names_from_manifest(tensors, self.raw)
        self.t = {}
        for name, value in tensors.items():
            key = name[len("model."):] if name.startswith("model.") else name
            if key in self.t:
                raise OracleError(f"weights: tensor '{key}' given twice (as '{name}')")
            self.t[key] = torch.as_tensor(value).double()
        aliases = [n for n in ("shared.weight", "encoder.embed_tokens.weight",
                               "decoder.embed_tokens.weight") if n in self.t]
        if not aliases:
            raise OracleError("weights: tensor 'model.shared.weight' (token_embd.weight) missing")
        self.shared = self.t[aliases[0]]
        if tuple(self.shared.shape) != (self.vocab, self.d):
            raise OracleError(f"embedding shape {tuple(self.shared.shape)}: expected "
                              f"[vocab_size {self.vocab}, d_model {self.d}]")
        # transformers ties them to one parameter; copies that differ leave it
        # unclear which the model was meant to use.
        same = aliases[1:] + (["lm_head.weight"] if self.tied and "lm_head.weight" in self.t
                              else [])
        for name in same:
            value = self.t[name]
            if value.shape != self.shared.shape or not torch.equal(value, self.shared):
                raise OracleError(f"weights: '{name}' differs from '{aliases[0]}'"
                                  + (" (tie_word_embeddings)" if name == "lm_head.weight"
                                     else ""))
        self.lm_head = self.shared if self.tied else self.get("lm_head.weight")
        if tuple(self.lm_head.shape) != (self.vocab, self.d):
            raise OracleError(f"lm_head.weight shape {tuple(self.lm_head.shape)}: expected "
                              f"[{self.vocab}, {self.d}]")
        bias = self.t.get("final_logits_bias")
        if bias is None:
            # MarianMTModel lists it in _keys_to_ignore_on_load_missing: a
            # file without it loads with the zeros of a fresh buffer.
            bias = torch.zeros(self.vocab, dtype=torch.float64)
        if bias.numel() != self.vocab or bias.dim() > 2 or (bias.dim() == 2
                                                            and bias.shape[0] != 1):
            raise OracleError(f"final_logits_bias shape {tuple(bias.shape)}: expected "
                              f"[1, {self.vocab}] or [{self.vocab}]")
        self.logits_bias = bias.reshape(-1)
        self._check_names()
        self._check_positions()

    def _expected_shapes(self):
        d, f = self.d, self.ffn
        shapes = {}
        attention = {".q_proj": (d, d), ".k_proj": (d, d), ".v_proj": (d, d),
                     ".out_proj": (d, d)}
        for stack, layers in (("encoder", self.encoder_layers), ("decoder", self.decoder_layers)):
            for i in range(layers):
                p = f"{stack}.layers.{i}."
                subs = ["self_attn"] + (["encoder_attn"] if stack == "decoder" else [])
                linears = {"fc1": (f, d), "fc2": (d, f)}
                for s in subs:
                    linears.update({s + m: shape for m, shape in attention.items()})
                for m, (rows, cols) in linears.items():
                    shapes[f"{p}{m}.weight"] = (rows, cols)
                    shapes[f"{p}{m}.bias"] = (rows,)
                for norm in [s + "_layer_norm" for s in subs] + ["final_layer_norm"]:
                    shapes[f"{p}{norm}.weight"] = (d,)
                    shapes[f"{p}{norm}.bias"] = (d,)
        return shapes

    def _check_names(self):
        """Every tensor the config calls for with its shape, and no other."""
        expected = self._expected_shapes()
        optional = {"shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight",
                    "lm_head.weight", "encoder.embed_positions.weight",
                    "decoder.embed_positions.weight"}
        if self.has_logits_bias:
            optional.add("final_logits_bias")
        missing = sorted(expected.keys() - self.t.keys())
        extra = sorted(self.t.keys() - expected.keys() - optional)
        if missing:
            raise OracleError(f"weights: tensors missing: {missing}")
        if extra:
            raise OracleError(f"weights: tensors this {self.family} config has no place for: "
                              f"{extra}")
        for name, shape in expected.items():
            if tuple(self.t[name].shape) != shape:
                raise OracleError(f"weights: '{name}' shape {tuple(self.t[name].shape)}: "
                                  f"expected {list(shape)}")

    def _check_positions(self):
        """A stored position table must be the formula's (it is not read)."""
        for stack in ("encoder", "decoder"):
            name = f"{stack}.embed_positions.weight"
            if name not in self.t:
                continue
            table = self.t[name]
            rows = table.shape[0] if table.dim() == 2 else -1
            if table.dim() != 2 or table.shape[1] != self.d or (
                    self.max_positions is not None and rows != self.max_positions):
                raise OracleError(f"weights: '{name}' shape {tuple(table.shape)}: expected "
                                  f"[{self.max_positions or 'rows'}, {self.d}]")
            worst = (table - self.positions(rows, self.d)).abs().max().item() if rows else 0.0
            if not worst <= POSITION_TOLERANCE:
                raise OracleError(f"weights: '{name}' is not the {self.family} sinusoid "
                                  f"table (off by {worst:.3g})")


    # -- forward ------------------------------------------------------------



    def attention(self, x, kv, p, causal):
        """MarianAttention at prefix p: x [Tq, d] attends to kv [Tk, d]; the
        scores times head_dim^-0.5 (eager_attention_forward's scaling), the
        causal mask adding -inf past the query (transformers adds the dtype's
        minimum: its softmax weight is 0 all the same)."""
        Tq, Tk, H, hd = x.shape[0], kv.shape[0], self.heads, self.head_dim
        q = self.linear(x, p + ".q_proj").view(Tq, H, hd)
        k = self.linear(kv, p + ".k_proj").view(Tk, H, hd)
        v = self.linear(kv, p + ".v_proj").view(Tk, H, hd)
        scores = torch.einsum("qhd,khd->hqk", q, k) * hd ** -0.5
        if causal:
            future = torch.ones(Tq, Tk, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        context = torch.einsum("hqk,khd->qhd", probs, v).reshape(Tq, self.d)
        return self.linear(context, p + ".out_proj")

    def feed_forward(self, x, p):
        return self.linear(activation(self.act, self.linear(x, p + "fc1")), p + "fc2")

    def embed(self, ids, what="token"):
        """E[ids] * scale + positions 0 .. n-1 [n, d_model]: the input of
        either stack (MarianEncoder / MarianDecoder before their layers)."""
        ids = torch.as_tensor(ids, dtype=torch.long).reshape(-1)
        if len(ids) == 0:
            raise OracleError(f"no {what} tokens")
        if int(ids.min()) < 0 or int(ids.max()) >= self.vocab:
            raise OracleError(f"{what} token ids must lie in [0, {self.vocab})")
        if self.max_positions is not None and len(ids) > self.max_positions:
            raise OracleError(f"{len(ids)} {what} tokens, more than max_position_embeddings "
                              f"{self.max_positions}")
        return self.shared[ids] * self.scale + self.positions(len(ids), self.d)

    def encode(self, source_ids):
        """The encoder's last_hidden_state [S, d_model] (no final norm)."""
        h = self.embed(source_ids, "source")
        for i in range(self.encoder_layers):
            p = f"encoder.layers.{i}."
            h = self.layer_norm(h + self.attention(h, h, p + "self_attn", False),
                          p + "self_attn_layer_norm")
            h = self.layer_norm(h + self.feed_forward(h, p), p + "final_layer_norm")
        return h

    def decoder_hidden(self, source_ids, decoder_ids, encoded=None):
        """The decoder's last_hidden_state [T, d_model] for decoder_ids, which
        start with the decoder start token; `encoded` reuses encode(source_ids)."""
        enc = self.encode(source_ids) if encoded is None else encoded
        g = self.embed(decoder_ids, "decoder")
        for i in range(self.decoder_layers):
            p = f"decoder.layers.{i}."
            g = self.layer_norm(g + self.attention(g, g, p + "self_attn", True),
                          p + "self_attn_layer_norm")
            g = self.layer_norm(g + self.attention(g, enc, p + "encoder_attn", False),
                          p + "encoder_attn_layer_norm")
            g = self.layer_norm(g + self.feed_forward(g, p), p + "final_layer_norm")
        return g

    def head(self, hidden):
        """lm_head(hidden) + final_logits_bias (zeros for the 2017 family)."""
        return hidden @ self.lm_head.T + self.logits_bias

    def decoder_logits(self, source_ids, decoder_ids):
        """Logits [len(decoder_ids), vocab] of every decoder position."""
        return self.head(self.decoder_hidden(source_ids, decoder_ids))
