"""Float64 forward passes of BLOOM, MPT, GPT-NeoX, Falcon and tfm's own
"transformer" family (the 2017 decoder and its switches), in PyTorch.

Each family's forward follows its published definition, Hugging Face
transformers' modeling_bloom.py, modeling_mpt.py, modeling_gpt_neox.py and
modeling_falcon.py (not installed here: Debian packages no transformers), and
for "transformer" the paper (Vaswani et al. 2017, sections 3.1-3.5). Nothing
is taken from tfmc's code; the weights are read under each family's own
Hugging Face names and layouts:
  - BLOOM, GPT-NeoX: query_key_value rows per head as [q_h, k_h, v_h];
  - Falcon: per kv group as [q heads of the group, k, v] (multi-query: one
    group), added ALiBi before the 1/sqrt(head_dim) scale;
  - MPT: Wqkv as [q; k; v], ALiBi relative to the last key, clip_qkv;
  - ALiBi slopes as each family's build_alibi_tensor computes them.
GGUF files (llama.cpp's names, q/k/v rows as [all q; all k; all v]) are
converted to those layouts first, undoing what llama.cpp's converter does.
"""

import json
import math

import torch

from gpt2_oracle import gelu, layer_norm
from llama_oracle import cache_rounding, rms_norm


class OracleError(Exception):
    pass


FAMILIES = ("bloom", "mpt", "gpt_neox", "falcon", "transformer")


def load_config(path):
    with open(path) as f:
        raw = json.load(f)
    if raw.get("model_type") not in FAMILIES:
        raise OracleError(f"{path}: field 'model_type': found {raw.get('model_type')!r}, "
                          f"expected one of {FAMILIES}")
    return raw


def activation(name, x):
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_tanh"):
        return gelu(x, "gelu_new")
    if name == "gelu":
        return gelu(x, "gelu")
    if name == "relu":
        return torch.relu(x)
    if name in ("silu", "swish"):
        return x * torch.sigmoid(x)
    raise OracleError(f"activation {name!r} not known here")


def bloom_slopes(n_heads):
    """modeling_bloom.build_alibi_tensor's slopes (also modeling_falcon's)."""
    closest = 2 ** math.floor(math.log2(n_heads))
    base = 2 ** (-(2 ** -(math.log2(closest) - 3)))
    slopes = [base ** p for p in range(1, closest + 1)]
    if closest != n_heads:
        extra_base = 2 ** (-(2 ** -(math.log2(2 * closest) - 3)))
        remaining = min(closest, n_heads - closest)
        slopes += [extra_base ** p for p in range(1, 1 + 2 * remaining, 2)]
    return torch.tensor(slopes, dtype=torch.float64)


def mpt_slopes(n_heads, alibi_bias_max):
    """modeling_mpt.build_mpt_alibi_tensor's slopes."""
    n2 = 2 ** math.ceil(math.log2(n_heads))
    base = torch.arange(1, n2 + 1, dtype=torch.float64) * (alibi_bias_max / n2)
    slopes = 1.0 / torch.pow(2.0, base)
    if n2 != n_heads:
        slopes = torch.cat([slopes[1::2], slopes[::2]])[:n_heads]
    return slopes


def rotate_half_rope(x, positions, rotary_dim, base, scale=1.0):
    """GPT-NeoX / Falcon rotary embedding on the first rotary_dim columns of
    each head of x [T, heads, head_dim]: x*cos + rotate_half(x)*sin."""
    inv_freq = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float64) / rotary_dim))
    t = positions.double() / scale
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)                 # [T, rotary_dim]
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    rot, passthrough = x[..., :rotary_dim], x[..., rotary_dim:]
    half = rotary_dim // 2
    rotated = torch.cat([-rot[..., half:], rot[..., :half]], dim=-1)
    return torch.cat([rot * cos + rotated * sin, passthrough], dim=-1)


def interleaved_rope(x, positions, rotary_dim, base, scale=1.0):
    """GPT-J's rotary embedding: pairs (2i, 2i+1) of the first rotary_dim columns."""
    inv_freq = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float64) / rotary_dim))
    angles = torch.outer(positions.double() / scale, inv_freq)[:, None, :]
    cos, sin = angles.cos(), angles.sin()
    rot, passthrough = x[..., :rotary_dim], x[..., rotary_dim:]
    even, odd = rot[..., 0::2], rot[..., 1::2]
    out = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)
    return torch.cat([out, passthrough], dim=-1)


def sinusoid(T, d, base=10000.0):
    """The 2017 paper's PE(pos, 2i) = sin(pos / base^(2i/d)), PE(pos, 2i+1) = cos(...)."""
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    i = torch.arange(0, d, 2, dtype=torch.float64)
    angles = pos / base ** (i / d)
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)[:, : d // 2]
    return pe


def attend(q, k, v, bias=None, scale=None, bias_before_scale=False):
    """Causal attention of q [T, H, hd] over k, v [T, H, hd]; `bias` [H, T, T]
    is added to the scores (after scaling, or before as Falcon does)."""
    T, _, hd = q.shape
    scale = 1.0 / math.sqrt(hd) if scale is None else scale
    scores = torch.einsum("thd,shd->hts", q, k)
    if bias is not None and bias_before_scale:
        scores = (scores + bias) * scale
    else:
        scores = scores * scale
        if bias is not None:
            scores = scores + bias
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    probs = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return torch.einsum("hts,shd->thd", probs, v).reshape(T, -1)


class FamilyOracle:
    def __init__(self, raw, weights, cache_dtype="f32"):
        self.c = raw
        self.family = raw["model_type"]
        self.store = cache_rounding(cache_dtype)
        # BLOOM checkpoints come with or without BloomForCausalLM's prefix.
        self.w = {name.removeprefix("transformer.") if self.family == "bloom" else name: value
                  for name, value in weights.items()}

    def get(self, name, optional=False):
        if name in self.w:
            return self.w[name]
        if optional:
            return None
        raise OracleError(f"weights: tensor '{name}' missing")

    def linear(self, x, name, bias=True):
        y = x @ self.get(name + ".weight").T
        b = self.get(name + ".bias", optional=True) if bias else None
        return y if b is None else y + b

    def layer_norm(self, x, name, eps):
        """LayerNorm `name`, with its bias when the file has one."""
        return layer_norm(x, self.get(name + ".weight"), self.get(name + ".bias", optional=True),
                          eps)

    def head(self, h, embedding, head):
        """Logits: the untied head `head`, or the embedding when the file has none."""
        w = self.get(head + ".weight", optional=True)
        return h @ (self.get(embedding + ".weight") if w is None else w).T

    def logits(self, tokens):
        return getattr(self, "_" + self.family)(torch.as_tensor(tokens, dtype=torch.long))

    # modeling_bloom.BloomForCausalLM
    def _bloom(self, tokens):
        c = self.c
        d = c.get("hidden_size", c.get("n_embed"))
        H = c.get("n_head", c.get("num_attention_heads"))
        L = c.get("n_layer", c.get("num_hidden_layers"))
        eps = c.get("layer_norm_epsilon", 1e-5)
        hd, T = d // H, len(tokens)
        def ln(x, name):
            return self.layer_norm(x, name, eps)
        h = ln(self.get("word_embeddings.weight")[tokens], "word_embeddings_layernorm")
        key_pos = torch.arange(T, dtype=torch.float64)
        alibi = bloom_slopes(H)[:, None, None] * key_pos[None, None, :]  # slope * j
        for i in range(L):
            p = f"h.{i}."
            a = ln(h, p + "input_layernorm")
            fused = self.linear(a, p + "self_attention.query_key_value").view(T, H, 3, hd)
            q, k, v = fused[:, :, 0], self.store(fused[:, :, 1]), self.store(fused[:, :, 2])
            h = h + self.linear(attend(q, k, v, alibi), p + "self_attention.dense")
            m = ln(h, p + "post_attention_layernorm")
            up = activation("gelu_tanh", self.linear(m, p + "mlp.dense_h_to_4h"))
            h = h + self.linear(up, p + "mlp.dense_4h_to_h")
        return self.head(ln(h, "ln_f"), "word_embeddings", "lm_head")

    # modeling_mpt.MptForCausalLM
    def _mpt(self, tokens):
        c = self.c
        d, H, L = c["d_model"], c["n_heads"], c["n_layers"]
        attn = c.get("attn_config") or {}
        eps = c.get("layer_norm_epsilon", 1e-5)
        clip = attn.get("clip_qkv")
        hd, T = d // H, len(tokens)
        def norm(x, name):
            return self.layer_norm(x, name, eps)
        key_pos = torch.arange(1 - T, 1, dtype=torch.float64)
        alibi = mpt_slopes(H, attn.get("alibi_bias_max", 8))[:, None, None] * key_pos[None, None, :]
        h = self.get("transformer.wte.weight")[tokens]
        for i in range(L):
            p = f"transformer.blocks.{i}."
            a = norm(h, p + "norm_1")
            qkv = self.linear(a, p + "attn.Wqkv")
            if clip is not None:
                qkv = qkv.clamp(min=-clip, max=clip)
            q, k, v = (t.reshape(T, H, hd) for t in qkv.chunk(3, dim=-1))
            h = h + self.linear(attend(q, self.store(k), self.store(v), alibi), p + "attn.out_proj")
            m = norm(h, p + "norm_2")
            h = h + self.linear(activation("gelu", self.linear(m, p + "ffn.up_proj")),
                                p + "ffn.down_proj")
        return self.head(norm(h, "transformer.norm_f"), "transformer.wte", "lm_head")

    # modeling_gpt_neox.GPTNeoXForCausalLM
    def _gpt_neox(self, tokens):
        c = self.c
        d, H, L = c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"]
        eps = c.get("layer_norm_eps", 1e-5)
        hd, T = d // H, len(tokens)
        rd = int(hd * c.get("partial_rotary_factor", c.get("rotary_pct", 0.25)))
        base = c.get("rope_theta", c.get("rotary_emb_base", 10000))
        scaling = c.get("rope_scaling") or {}
        scale = scaling.get("factor", 1.0)
        act = c.get("hidden_act", "gelu")
        def ln(x, name):
            return self.layer_norm(x, name, eps)
        positions = torch.arange(T)
        h = self.get("gpt_neox.embed_in.weight")[tokens]
        for i in range(L):
            p = f"gpt_neox.layers.{i}."
            a = ln(h, p + "input_layernorm")
            qkv = self.linear(a, p + "attention.query_key_value").view(T, H, 3 * hd)
            q, k, v = qkv[..., :hd], qkv[..., hd:2 * hd], qkv[..., 2 * hd:]
            q = rotate_half_rope(q, positions, rd, base, scale)
            k = rotate_half_rope(k, positions, rd, base, scale)
            attn_out = self.linear(attend(q, self.store(k), self.store(v)), p + "attention.dense")
            mlp = lambda x: self.linear(activation(act, self.linear(x, p + "mlp.dense_h_to_4h")),
                                        p + "mlp.dense_4h_to_h")
            if c.get("use_parallel_residual", True):
                h = mlp(ln(h, p + "post_attention_layernorm")) + attn_out + h
            else:
                attn_out = attn_out + h
                h = mlp(ln(attn_out, p + "post_attention_layernorm")) + attn_out
        return self.head(ln(h, "gpt_neox.final_layer_norm"), "gpt_neox.embed_in", "embed_out")

    # modeling_falcon.FalconForCausalLM
    def _falcon(self, tokens):
        c = self.c
        d, H, L = c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"]
        eps = c.get("layer_norm_epsilon", 1e-5)
        hd, T = d // H, len(tokens)
        new_arch = c.get("new_decoder_architecture", False)
        multi_query = c.get("multi_query", True)
        n_kv = c.get("num_kv_heads") or H if new_arch else (1 if multi_query else H)
        two_norms = new_arch and c.get("num_ln_in_parallel_attn", 2) == 2
        parallel = c.get("parallel_attn", True)
        use_alibi = c.get("alibi", False)
        act = c.get("activation", "gelu")
        scaling = c.get("rope_scaling") or {}
        def ln(x, name):
            return self.layer_norm(x, name, eps)
        positions = torch.arange(T)
        alibi = None
        if use_alibi:
            alibi = bloom_slopes(H)[:, None, None] * torch.arange(T, dtype=torch.float64)[None, None, :]
        h = self.get("transformer.word_embeddings.weight")[tokens]
        for i in range(L):
            p = f"transformer.h.{i}."
            if two_norms:
                a, mlp_in = ln(h, p + "ln_attn"), ln(h, p + "ln_mlp")
            else:
                a = ln(h, p + "input_layernorm")
                mlp_in = a
            fused = self.linear(a, p + "self_attention.query_key_value")
            if new_arch:
                g = fused.view(T, n_kv, H // n_kv + 2, hd)
                q = g[:, :, :-2].reshape(T, H, hd)
                k = g[:, :, -2].repeat_interleave(H // n_kv, dim=1)
                v = g[:, :, -1].repeat_interleave(H // n_kv, dim=1)
            elif not multi_query:
                g = fused.view(T, H, 3, hd)
                q, k, v = g[:, :, 0], g[:, :, 1], g[:, :, 2]
            else:
                g = fused.view(T, H + 2, hd)
                q = g[:, :H]
                k = g[:, H:H + 1].expand(T, H, hd)
                v = g[:, H + 1:].expand(T, H, hd)
            if not use_alibi:
                base = c.get("rope_theta", 10000.0)
                q = rotate_half_rope(q, positions, hd, base, scaling.get("factor", 1.0))
                k = rotate_half_rope(k, positions, hd, base, scaling.get("factor", 1.0))
            attn_out = self.linear(attend(q, self.store(k), self.store(v), alibi,
                                          bias_before_scale=True), p + "self_attention.dense")
            residual = h
            if not new_arch and not parallel:
                residual = h + attn_out
                mlp_in = ln(residual, p + "post_attention_layernorm")
            mlp_out = self.linear(activation(act, self.linear(mlp_in, p + "mlp.dense_h_to_4h")),
                                  p + "mlp.dense_4h_to_h")
            if new_arch or parallel:
                mlp_out = mlp_out + attn_out
            h = mlp_out + residual
        return self.head(ln(h, "transformer.ln_f"), "transformer.word_embeddings", "lm_head")

    # tfm's "transformer" configs: the 2017 decoder (self-attention only) and
    # the switches its config names, under llama.cpp's tensor names.
    def _transformer(self, tokens):
        c = self.c
        d, H, L = c["d_model"], c["n_heads"], c["n_layers"]
        n_kv = c.get("n_kv_heads", H)
        hd = c.get("head_dim", d // H)
        T = len(tokens)
        eps = c.get("norm_eps", 1e-5)
        norm_kind = c.get("norm", "layer_norm")
        post = c.get("norm_position", "pre") == "post"
        parallel = c.get("parallel_residual", False)
        act = c.get("activation", "relu")
        positions = c.get("positions", "sinusoidal")
        scale = c.get("embedding_scale", 1.0)
        scale = math.sqrt(d) if scale == "sqrt_d_model" else scale

        def norm(x, name):
            if norm_kind == "rms_norm":
                return rms_norm(x, self.get(name + ".weight"), eps)
            return self.layer_norm(x, name, eps)

        emb = self.get("token_embd.weight")
        h = emb[tokens] * scale
        if positions == "sinusoidal":
            h = h + sinusoid(T, d)
        elif positions == "learned":
            h = h + self.get("position_embd.weight")[:T]
        if c.get("embedding_norm", False):
            h = norm(h, "token_embd_norm")
        pos = torch.arange(T)
        alibi = None
        if c.get("alibi", False):
            slopes = torch.tensor([2.0 ** (-(k + 1) * c.get("alibi_max_bias", 8) / H)
                                   for k in range(H)], dtype=torch.float64)
            if H & (H - 1):
                raise OracleError("the transformer oracle's ALiBi takes a power-of-two head count")
            dist = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).double()
            alibi = -slopes[:, None, None] * dist[None]

        def attention(x, p):
            if c.get("fused_qkv", False):
                qkv = self.linear(x, p + "attn_qkv")
                q, k, v = qkv.split([H * hd, n_kv * hd, n_kv * hd], dim=-1)
            else:
                q, k, v = (self.linear(x, p + n) for n in ("attn_q", "attn_k", "attn_v"))
            clip = c.get("clip_qkv")
            if clip:
                q, k, v = (t.clamp(-clip, clip) for t in (q, k, v))
            q, k, v = q.view(T, H, hd), k.view(T, n_kv, hd), v.view(T, n_kv, hd)
            if positions == "rope":
                rope = interleaved_rope if c.get("rope_pairs", "interleaved") == "interleaved" \
                    else rotate_half_rope
                rd, base = c.get("rotary_dim", hd), c.get("rope_theta", 10000.0)
                q = rope(q, pos, rd, base, c.get("rope_scale", 1.0))
                k = rope(k, pos, rd, base, c.get("rope_scale", 1.0))
            k = self.store(k).repeat_interleave(H // n_kv, dim=1)
            v = self.store(v).repeat_interleave(H // n_kv, dim=1)
            return self.linear(attend(q, k, v, alibi), p + "attn_output")

        def ffn(x, p):
            up = self.linear(x, p + "ffn_up")
            hidden = activation(act, self.linear(x, p + "ffn_gate")) * up \
                if c.get("gated_ffn", False) else activation(act, up)
            return self.linear(hidden, p + "ffn_down")

        for i in range(L):
            p = f"blk.{i}."
            if post:    # 3.1: LayerNorm(x + Sublayer(x))
                h = norm(h + attention(h, p), p + "attn_norm")
                h = norm(h + ffn(h, p), p + "ffn_norm")
            elif parallel:
                a = norm(h, p + "attn_norm")
                m = norm(h, p + "ffn_norm") if c.get("parallel_norms", 2) == 2 else a
                h = h + attention(a, p) + ffn(m, p)
            else:
                h = h + attention(norm(h, p + "attn_norm"), p)
                h = h + ffn(norm(h, p + "ffn_norm"), p)
        return self.head(h if post else norm(h, "output_norm"), "token_embd", "output")


# llama.cpp's GGUF names -> each family's Hugging Face names (layer part).
_GGUF_LAYER = {
    "bloom": {"attn_norm": "input_layernorm", "attn_qkv": "self_attention.query_key_value",
              "attn_output": "self_attention.dense", "ffn_norm": "post_attention_layernorm",
              "ffn_up": "mlp.dense_h_to_4h", "ffn_down": "mlp.dense_4h_to_h"},
    "mpt": {"attn_norm": "norm_1", "attn_qkv": "attn.Wqkv", "attn_output": "attn.out_proj",
            "ffn_norm": "norm_2", "ffn_up": "ffn.up_proj", "ffn_down": "ffn.down_proj"},
    "gpt_neox": {"attn_norm": "input_layernorm", "attn_qkv": "attention.query_key_value",
                 "attn_output": "attention.dense", "ffn_norm": "post_attention_layernorm",
                 "ffn_up": "mlp.dense_h_to_4h", "ffn_down": "mlp.dense_4h_to_h"},
    "falcon": {"attn_norm": "input_layernorm", "attn_norm_2": "ln_attn",
               "attn_qkv": "self_attention.query_key_value", "attn_output": "self_attention.dense",
               "ffn_norm": "post_attention_layernorm", "ffn_up": "mlp.dense_h_to_4h",
               "ffn_down": "mlp.dense_4h_to_h"},
}
_GGUF_TOP = {
    "bloom": {"token_embd": "word_embeddings", "token_embd_norm": "word_embeddings_layernorm",
              "output_norm": "ln_f", "output": "lm_head"},
    "mpt": {"token_embd": "transformer.wte", "output_norm": "transformer.norm_f", "output": "lm_head"},
    "gpt_neox": {"token_embd": "gpt_neox.embed_in", "output_norm": "gpt_neox.final_layer_norm",
                 "output": "embed_out"},
    "falcon": {"token_embd": "transformer.word_embeddings", "output_norm": "transformer.ln_f",
               "output": "lm_head"},
}
_LAYER_PREFIX = {"bloom": "h.", "mpt": "transformer.blocks.", "gpt_neox": "gpt_neox.layers.",
                 "falcon": "transformer.h."}


def _grouped_from_gguf(t, n_heads, n_kv, hd):
    """llama.cpp's [all q; all k; all v] rows back to [per kv group: q..., k, v]."""
    q, k, v = t.split([n_heads * hd, n_kv * hd, n_kv * hd], dim=0)
    rest = t.shape[1:]
    q = q.reshape(n_kv, n_heads // n_kv, hd, *rest)
    k = k.reshape(n_kv, 1, hd, *rest)
    v = v.reshape(n_kv, 1, hd, *rest)
    return torch.cat([q, k, v], dim=1).reshape(t.shape)


def hf_names_from_gguf(tensors, raw):
    """A GGUF's tensors under the family's Hugging Face names and layouts."""
    family = raw["model_type"]
    if family == "transformer":
        return dict(tensors)
    H = raw.get("n_head") or raw.get("num_attention_heads") or raw.get("n_heads")
    d = raw.get("hidden_size") or raw.get("n_embed") or raw.get("d_model")
    hd = d // H
    if family == "falcon":
        new_arch = raw.get("new_decoder_architecture", False)
        n_kv = (raw.get("num_kv_heads") or H) if new_arch else (1 if raw.get("multi_query", True) else H)
        two_norms = new_arch and raw.get("num_ln_in_parallel_attn", 2) == 2
    else:
        n_kv, two_norms = H, False
    out = {}
    for name, value in tensors.items():
        stem, part = name.rsplit(".", 1)
        if stem.startswith("blk."):
            _, layer, role = stem.split(".", 2)
            module = _GGUF_LAYER[family][role]
            if family == "falcon" and role == "attn_norm" and two_norms:
                module = "ln_mlp"  # gguf-py's tensor_mapping: ln_mlp -> attn_norm
            if role == "attn_qkv" and family in ("bloom", "gpt_neox", "falcon"):
                value = _grouped_from_gguf(value, H, n_kv, hd)
            out[f"{_LAYER_PREFIX[family]}{layer}.{module}.{part}"] = value
        else:
            out[f"{_GGUF_TOP[family][stem]}.{part}"] = value
    return out
