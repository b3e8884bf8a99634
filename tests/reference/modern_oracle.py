"""Float64 forward passes of the Llama-shaped families of 2024-2026, in
PyTorch: Llama 3.x (rope_scaling "llama3"), Mistral, Qwen 2 / 2.5, Qwen 3 and
Phi-3.

Written from Hugging Face transformers' modeling_llama.py, modeling_mistral.py,
modeling_qwen2.py, modeling_qwen3.py, modeling_phi3.py and
modeling_rope_utils.py (_compute_llama3_parameters), not from tfmc's code:
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
Weights are read under Hugging Face's names, q and k rows in rotate_half's
order. A GGUF's are renamed back, and arch llama's q/k rows un-permuted
(llama.cpp's converter permutes them; its qwen2 and qwen3 keep Hugging
Face's).
"""

import json
import math

import torch

from llama_oracle import cache_rounding, rms_norm


class OracleError(Exception):
    pass


FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "phi3")


def handles(raw):
    """Llama configs go to llama_oracle unless they scale RoPE."""
    return raw.get("model_type") in ("mistral", "qwen2", "qwen3", "phi3") or (
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


def sliding_window(raw):
    """MistralConfig's window (4096 unless given; null: none), Phi3Config's
    (none unless given); Qwen's is off."""
    if raw["model_type"] == "mistral":
        return raw.get("sliding_window", 4096)
    if raw["model_type"] == "phi3":
        return raw.get("sliding_window")
    return None


def inverse_frequencies(raw, head_dim):
    """modeling_rope_utils: the default inv_freq, then Llama 3's rescaling."""
    base = raw.get("rope_theta", 10000.0)
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    scaling = raw.get("rope_scaling")
    if scaling is None:
        return inv_freq
    kind = scaling.get("rope_type", scaling.get("type"))
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


def hf_names_from_gguf(tensors, raw):
    """A GGUF's tensors under Hugging Face's names and layouts."""
    heads = raw["num_attention_heads"]
    kv_heads = raw.get("num_key_value_heads") or heads
    permuted = raw["model_type"] == "llama" or raw["model_type"] == "mistral"
    out = {}
    for name, t in tensors.items():
        if name == "rope_freqs.weight":
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
            hf = _GGUF_TO_HF[stem]
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
        self.inv_freq = inverse_frequencies(raw, self.head_dim)
        self.store = cache_rounding(cache_dtype)

    def project(self, x, name):
        y = x @ self.t[name + ".weight"].T
        bias = self.t.get(name + ".bias")
        return y if bias is None else y + bias

    def logits(self, tokens):
        t, T = self.t, len(tokens)
        positions = torch.arange(T, dtype=torch.float64)
        freqs = positions[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)
        window = sliding_window(self.raw)
        if window is not None:  # modeling_mistral: key k masked when k <= q - window
            causal |= torch.ones(T, T, dtype=torch.bool).tril(-window)
        h = t["model.embed_tokens.weight"][torch.as_tensor(tokens, dtype=torch.long)]
        for i in range(self.raw["num_hidden_layers"]):
            p = f"model.layers.{i}."
            x = rms_norm(h, t[p + "input_layernorm.weight"], self.eps)
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
                q = rms_norm(q, t[p + "self_attn.q_norm.weight"], self.eps)
                k = rms_norm(k, t[p + "self_attn.k_norm.weight"], self.eps)
            q = q * cos + rotate_half(q) * sin
            k = self.store(k * cos + rotate_half(k) * sin)
            v = self.store(v)
            group = self.heads // self.kv_heads
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
            scores = torch.einsum("thd,shd->hts", q, k) / math.sqrt(self.head_dim)
            probs = torch.softmax(scores.masked_fill(causal, float("-inf")), dim=-1)
            attended = torch.einsum("hts,shd->thd", probs, v).reshape(T, -1)
            h = h + self.project(attended, p + "self_attn.o_proj")
            m = rms_norm(h, t[p + "post_attention_layernorm.weight"], self.eps)
            if p + "mlp.gate_up_proj.weight" in t:  # Phi-3
                gate, up = self.project(m, p + "mlp.gate_up_proj").chunk(2, dim=-1)
            else:
                gate, up = self.project(m, p + "mlp.gate_proj"), self.project(m, p + "mlp.up_proj")
            h = h + self.project(torch.nn.functional.silu(gate) * up, p + "mlp.down_proj")
        head = t.get("lm_head.weight", t["model.embed_tokens.weight"])
        return rms_norm(h, t["model.norm.weight"], self.eps) @ head.T
