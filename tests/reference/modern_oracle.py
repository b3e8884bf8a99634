"""Float64 forward passes of the Llama-shaped families of 2024-2026, in
PyTorch: Llama 3.x (rope_scaling "llama3"), Mistral, Qwen 2 / 2.5, Qwen 3,
Phi-3, Gemma 2 and Gemma 3.

Written from Hugging Face transformers' modeling_llama.py, modeling_mistral.py,
modeling_qwen2.py, modeling_qwen3.py, modeling_phi3.py, modeling_gemma2.py,
modeling_gemma3.py and modeling_rope_utils.py (_compute_llama3_parameters,
_compute_longrope_parameters: Phi-3's LongRoPE, whose cos and sin are
multiplied by its attention factor),
not from tfmc's code:
  h = embed_tokens[token]
  per layer:  x = RMSNorm(h)  (x * rsqrt(mean(x^2) + eps) * weight)
              q, k, v = q_proj(x), k_proj(x), v_proj(x)   (+ bias: Qwen 2's q, k, v;
                                                            Llama's attention_bias;
                                                            Phi-3: qkv_proj(x) split)
              q, k = q_norm(q), k_norm(k)   (Qwen 3: RMSNorm over each head, [head_dim])
              q, k = q*cos + rotate_half(q)*sin, the same for k   (inv_freq per pair)
              h += o_proj(softmax(q k^T / sqrt(head_dim) + causal mask) v)
                   (Mistral's and Phi-3's sliding window also masks keys k <= q - window)
              h += down_proj(silu(gate_proj(m)) * up_proj(m)),   m = RMSNorm(h)
                   (Phi-3: gate, up = gate_up_proj(m).chunk(2))
  logits = lm_head(RMSNorm(h))   (embed_tokens when tie_word_embeddings)
Gemma 2 and 3 differ: h = embed_tokens[token] * sqrt(hidden_size); RMSNorm's
gain is (1 + weight); the attention's and the MLP's outputs are normed
(post_attention_layernorm, post_feedforward_layernorm) before their residual
adds, the MLP's input by pre_feedforward_layernorm; scores are scaled by
query_pre_attn_scalar^-1/2 and (Gemma 2) soft-capped, tanh(s / cap) * cap,
as the logits are; GeGLU with the tanh GELU; sliding layers: Gemma 2's even
ones, Gemma 3's (i + 1) % sliding_window_pattern != 0, whose RoPE base is
rope_local_base_freq, unscaled (Gemma 3's global layers: rope_theta and a
linear rope_scaling).
Weights are read under Hugging Face's names, q and k rows in rotate_half's
order. A GGUF's are renamed back, and arch llama's q/k rows un-permuted
(llama.cpp's converter permutes them; its qwen2, qwen3, phi3 and gemma keep
Hugging Face's), and Gemma's norm weights, stored by llama.cpp's converter
with the 1 added, have it taken off again.
"""

import json
import math

import torch

from llama_oracle import cache_rounding, rms_norm


class OracleError(Exception):
    pass


GEMMA = ("gemma2", "gemma3_text")
FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "phi3") + GEMMA


def handles(raw):
    """Llama configs go to llama_oracle unless they scale RoPE."""
    return raw.get("model_type") in FAMILIES[1:] or (
        raw.get("model_type") == "llama" and raw.get("rope_scaling") is not None)


def load_config(path):
    with open(path) as f:
        raw = json.load(f)
    if raw.get("model_type") not in FAMILIES:
        raise OracleError(f"{path}: field 'model_type': found {raw.get('model_type')!r}, "
                          f"expected one of {FAMILIES}")
    if raw.get("model_type") in ("qwen2", "qwen3") and raw.get("use_sliding_window"):
        raise OracleError(f"{path}: Qwen's sliding window is not modelled here")
    return raw


def sliding_window(raw, layer):
    """MistralConfig's window (4096 unless given; null: none), Phi3Config's
    (none unless given), Gemma's on its sliding layers; Qwen's is off."""
    if raw["model_type"] == "mistral":
        return raw.get("sliding_window", 4096)
    if raw["model_type"] == "phi3":
        return raw.get("sliding_window")
    if raw["model_type"] in GEMMA and gemma_slides(raw, layer):
        return raw.get("sliding_window", 4096)
    return None


def gemma_slides(raw, layer):
    """modeling_gemma2: not layer_idx % 2; modeling_gemma3:
    (layer_idx + 1) % sliding_window_pattern."""
    if raw["model_type"] == "gemma2":
        return layer % 2 == 0
    return (layer + 1) % raw.get("sliding_window_pattern", 6) != 0


def longrope_attention_factor(raw):
    """modeling_rope_utils' _compute_longrope_parameters: the factor cos and
    sin are multiplied by. Phi-3's original_max_position_embeddings is the
    pretrained context, its ratio to max_position_embeddings the scale."""
    scaling = raw["rope_scaling"]
    factor = scaling.get("factor")
    if "original_max_position_embeddings" in raw:
        original = raw["original_max_position_embeddings"]
        factor = raw["max_position_embeddings"] / original
    else:
        original = raw["max_position_embeddings"]
    attention_factor = scaling.get("attention_factor")
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    return attention_factor


def longrope_inverse_frequencies(raw, dim, base):
    """_compute_longrope_parameters' inv_freq: 1 / (ext_factors * base^(2i/dim)),
    the long factors past the pretrained context. transformers' Phi3 picks them
    by the length of the sequence in hand; llama.cpp, as tfm, by the context
    the model runs with (its max_position_embeddings here)."""
    scaling = raw["rope_scaling"]
    original = raw.get("original_max_position_embeddings", raw["max_position_embeddings"])
    long = raw["max_position_embeddings"] > original
    ext_factors = torch.tensor(scaling["long_factor" if long else "short_factor"],
                               dtype=torch.float64)  # float32 in transformers; float64 here
    inv_freq_shape = torch.arange(0, dim, 2, dtype=torch.int64).double() / dim
    return 1.0 / (ext_factors * base ** inv_freq_shape)


def inverse_frequencies(raw, head_dim, base=None, scaling="config"):
    """modeling_rope_utils: the default inv_freq, then Llama 3's rescaling,
    LongRoPE's or linear's (positions divided by the factor)."""
    base = raw.get("rope_theta", 10000.0) if base is None else base
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    scaling = raw.get("rope_scaling") if scaling == "config" else scaling
    if scaling is None:
        return inv_freq
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind == "linear":
        return inv_freq / scaling["factor"]
    if kind in ("longrope", "su"):
        return longrope_inverse_frequencies(raw, head_dim, base)
    if kind != "llama3":
        raise OracleError(f"rope_scaling {kind!r} not modelled here")
    factor = scaling["factor"]
    low_freq_factor, high_freq_factor = scaling["low_freq_factor"], scaling["high_freq_factor"]
    old_context_len = scaling["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def unpermute(w, n_head):
    """Undoes llama.cpp's convert_hf_to_gguf.py LlamaModel.permute."""
    rows = w.shape[0]
    return (w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


_GGUF_TO_HF = {
    "attn_norm.weight": "input_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight", "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.weight": "self_attn.k_proj.weight", "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.weight": "self_attn.v_proj.weight", "attn_v.bias": "self_attn.v_proj.bias",
    "attn_qkv.weight": "self_attn.qkv_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}
# Gemma's norms, where llama.cpp's names and Hugging Face's pair otherwise.
_GGUF_TO_HF_GEMMA = dict(_GGUF_TO_HF, **{
    "post_attention_norm.weight": "post_attention_layernorm.weight",
    "ffn_norm.weight": "pre_feedforward_layernorm.weight",
    "post_ffw_norm.weight": "post_feedforward_layernorm.weight",
})


def hf_names_from_gguf(tensors, raw):
    """A GGUF's tensors under Hugging Face's names and layouts."""
    heads = raw["num_attention_heads"]
    kv_heads = raw.get("num_key_value_heads") or heads
    permuted = raw["model_type"] == "llama" or raw["model_type"] == "mistral"
    gemma = raw["model_type"] in GEMMA
    names = _GGUF_TO_HF_GEMMA if gemma else _GGUF_TO_HF
    out = {}
    for name, t in tensors.items():
        if gemma and "norm" in name:
            t = t - 1  # stored as 1 + weight
        if name in ("rope_freqs.weight", "rope_factors_short.weight", "rope_factors_long.weight"):
            continue  # the config's rope_scaling says the same
        if name == "token_embd.weight":
            out["model.embed_tokens.weight"] = t
        elif name == "output_norm.weight":
            out["model.norm.weight"] = t
        elif name == "output.weight":
            out["lm_head.weight"] = t
        else:
            _, layer, stem = name.split(".", 2)
            if permuted and stem in ("attn_q.weight", "attn_q.bias"):
                t = unpermute(t, heads)
            elif permuted and stem in ("attn_k.weight", "attn_k.bias"):
                t = unpermute(t, kv_heads)
            hf = names[stem]
            if raw["model_type"] == "phi3" and stem == "ffn_up.weight":
                hf = "mlp.gate_up_proj.weight"  # [gate; up]
            out[f"model.layers.{layer}.{hf}"] = t
    return out


class ModernOracle:
    def __init__(self, raw, tensors, cache_dtype="f32"):
        self.raw, self.t = raw, {k: v.double() for k, v in tensors.items()}
        self.heads = raw["num_attention_heads"]
        self.kv_heads = raw.get("num_key_value_heads") or self.heads
        self.head_dim = raw.get("head_dim") or raw["hidden_size"] // self.heads
        self.eps = raw.get("rms_norm_eps", 1e-6)
        self.gemma = raw["model_type"] in GEMMA
        self.inv_freq = inverse_frequencies(raw, self.head_dim)
        scaling = raw.get("rope_scaling") or {}
        self.rope_magnitude = (longrope_attention_factor(raw)
                               if scaling.get("rope_type", scaling.get("type")) in ("longrope", "su")
                               else 1.0)
        if raw["model_type"] == "gemma3_text":  # the sliding layers' own RoPE
            self.local_inv_freq = inverse_frequencies(
                raw, self.head_dim, base=raw.get("rope_local_base_freq", 10000.0), scaling=None)
        self.store = cache_rounding(cache_dtype)
        if self.gemma:
            self.scale = raw.get("query_pre_attn_scalar", 256) ** -0.5
            defaults = (50.0, 30.0) if raw["model_type"] == "gemma2" else (None, None)
            self.attn_cap = raw.get("attn_logit_softcapping", defaults[0])
            self.final_cap = raw.get("final_logit_softcapping", defaults[1])
        else:
            self.scale, self.attn_cap, self.final_cap = self.head_dim ** -0.5, None, None

    def norm(self, x, name):
        weight = self.t[name]
        return rms_norm(x, 1 + weight if self.gemma else weight, self.eps)

    def rotation(self, layer, T):
        """cos and sin [T, 1, head_dim] of layer `layer`'s RoPE."""
        local = (self.raw["model_type"] == "gemma3_text" and gemma_slides(self.raw, layer))
        inv_freq = self.local_inv_freq if local else self.inv_freq
        freqs = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos() * self.rope_magnitude, emb.sin() * self.rope_magnitude
        return cos[:, None, :], sin[:, None, :]

    def project(self, x, name):
        y = x @ self.t[name + ".weight"].T
        bias = self.t.get(name + ".bias")
        return y if bias is None else y + bias

    def logits(self, tokens):
        t, T = self.t, len(tokens)
        h = t["model.embed_tokens.weight"][torch.as_tensor(tokens, dtype=torch.long)]
        if self.gemma:
            h = h * self.raw["hidden_size"] ** 0.5
        for i in range(self.raw["num_hidden_layers"]):
            p = f"model.layers.{i}."
            cos, sin = self.rotation(i, T)
            mask = torch.ones(T, T, dtype=torch.bool).triu(1)
            window = sliding_window(self.raw, i)
            if window is not None:  # key k masked when k <= q - window
                mask |= torch.ones(T, T, dtype=torch.bool).tril(-window)
            x = self.norm(h, p + "input_layernorm.weight")
            if p + "self_attn.qkv_proj.weight" in t:  # Phi-3
                q_width, kv_width = self.heads * self.head_dim, self.kv_heads * self.head_dim
                q, k, v = self.project(x, p + "self_attn.qkv_proj").split(
                    [q_width, kv_width, kv_width], dim=-1)
            else:
                q = self.project(x, p + "self_attn.q_proj")
                k = self.project(x, p + "self_attn.k_proj")
                v = self.project(x, p + "self_attn.v_proj")
            q = q.reshape(T, self.heads, self.head_dim)
            k = k.reshape(T, self.kv_heads, self.head_dim)
            v = v.reshape(T, self.kv_heads, self.head_dim)
            if p + "self_attn.q_norm.weight" in t:  # Qwen 3
                q = self.norm(q, p + "self_attn.q_norm.weight")
                k = self.norm(k, p + "self_attn.k_norm.weight")
            q = q * cos + rotate_half(q) * sin
            k = self.store(k * cos + rotate_half(k) * sin)
            v = self.store(v)
            group = self.heads // self.kv_heads
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
            scores = torch.einsum("thd,shd->hts", q, k) * self.scale
            if self.attn_cap is not None:
                scores = torch.tanh(scores / self.attn_cap) * self.attn_cap
            probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
            attended = torch.einsum("hts,shd->thd", probs, v).reshape(T, -1)
            attended = self.project(attended, p + "self_attn.o_proj")
            if self.gemma:
                attended = self.norm(attended, p + "post_attention_layernorm.weight")
            h = h + attended
            m = self.norm(h, p + ("pre_feedforward_layernorm.weight" if self.gemma
                                  else "post_attention_layernorm.weight"))
            if p + "mlp.gate_up_proj.weight" in t:  # Phi-3
                gate, up = self.project(m, p + "mlp.gate_up_proj").chunk(2, dim=-1)
            else:
                gate, up = self.project(m, p + "mlp.gate_proj"), self.project(m, p + "mlp.up_proj")
            act = (lambda g: torch.nn.functional.gelu(g, approximate="tanh")) if self.gemma \
                else torch.nn.functional.silu
            out = self.project(act(gate) * up, p + "mlp.down_proj")
            if self.gemma:
                out = self.norm(out, p + "post_feedforward_layernorm.weight")
            h = h + out
        head = t.get("lm_head.weight", t["model.embed_tokens.weight"])
        logits = self.norm(h, "model.norm.weight") @ head.T
        if self.final_cap is not None:
            logits = torch.tanh(logits / self.final_cap) * self.final_cap
        return logits
