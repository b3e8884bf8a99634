"""An independent float64 forward pass of a Llama-family model, in PyTorch.

Written from the model's definition (Llama / llama2.c model.py), not from any
tfmc code, so that it can judge the compiled models:
  h = embedding[token]
  per layer:  h += Wo · attention(RoPE(Wq·n), RoPE(Wk·n), Wv·n),  n = RMSNorm(h)
              h += W2 · (silu(W1·m) * (W3·m)),                      m = RMSNorm(h)
  logits = Wcls · RMSNorm(h)        (Wcls = embedding when the head is tied)
RoPE rotates the interleaved pairs (x[2i], x[2i+1]) of each head by the angle
pos * theta^(-2i/head_dim); attention is causal, scaled by 1/sqrt(head_dim),
and query head h reads key/value head h // (n_heads / n_kv_heads).

Weights come from a llama2.c checkpoint (7 int32 header, then f32 tensors
grouped by kind across layers; see tools/tfm-weights/Llama2cWriter.h).
"""

import json
import math
import os
from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class LlamaConfig:
    dim: int
    hidden_dim: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    vocab_size: int
    context_length: int
    norm_eps: float
    rope_theta: float
    tied_embeddings: bool

    @property
    def head_dim(self):
        return self.dim // self.n_heads


class OracleError(Exception):
    """Bad input to the oracle: a config or checkpoint it cannot read."""


def load_config(path):
    """Reads a Hugging Face style Llama config.json, with Hugging Face's
    defaults for the optional fields."""
    with open(path) as f:
        raw = json.load(f)
    if raw.get("model_type") != "llama":
        raise OracleError(f"{path}: field 'model_type': found {raw.get('model_type')!r}, expected 'llama'")

    def required(field):
        if field not in raw:
            raise OracleError(f"{path}: field '{field}': missing")
        return raw[field]

    config = LlamaConfig(
        dim=required("hidden_size"),
        hidden_dim=required("intermediate_size"),
        n_layers=required("num_hidden_layers"),
        n_heads=required("num_attention_heads"),
        n_kv_heads=raw.get("num_key_value_heads") or required("num_attention_heads"),
        vocab_size=required("vocab_size"),
        context_length=required("max_position_embeddings"),
        norm_eps=raw.get("rms_norm_eps", 1e-6),
        rope_theta=raw.get("rope_theta", 10000.0),
        tied_embeddings=raw.get("tie_word_embeddings", False),
    )
    if raw.get("head_dim", config.head_dim) != config.head_dim:
        raise OracleError(f"{path}: field 'head_dim': found {raw['head_dim']}, "
                          f"expected hidden_size / num_attention_heads = {config.head_dim}")
    return config


HEADER_FIELDS = ("dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len")


def read_llama2c_header(path):
    header = np.fromfile(path, dtype="<i4", count=len(HEADER_FIELDS))
    if header.size != len(HEADER_FIELDS):
        raise OracleError(f"{path}: shorter than the 7 int32 llama2.c header")
    return dict(zip(HEADER_FIELDS, (int(v) for v in header)))


def config_from_llama2c(path, norm_eps=1e-5, rope_theta=10000.0):
    """The config a llama2.c checkpoint implies (llama2.c's run.c fixes the
    norm epsilon and RoPE theta rather than storing them)."""
    h = read_llama2c_header(path)
    return LlamaConfig(dim=h["dim"], hidden_dim=h["hidden_dim"], n_layers=h["n_layers"],
                       n_heads=h["n_heads"], n_kv_heads=h["n_kv_heads"],
                       vocab_size=abs(h["vocab_size"]), context_length=h["seq_len"],
                       norm_eps=norm_eps, rope_theta=rope_theta,
                       tied_embeddings=h["vocab_size"] > 0)


def read_llama2c(path, config):
    """Reads a llama2.c checkpoint into float64 tensors, refusing one whose
    header or size does not match `config`."""
    c = config
    expected_header = dict(dim=c.dim, hidden_dim=c.hidden_dim, n_layers=c.n_layers,
                           n_heads=c.n_heads, n_kv_heads=c.n_kv_heads,
                           vocab_size=c.vocab_size if c.tied_embeddings else -c.vocab_size,
                           seq_len=c.context_length)
    header = read_llama2c_header(path)
    for field, expected in expected_header.items():
        if header[field] != expected:
            raise OracleError(f"{path}: header field '{field}': found {header[field]}, "
                              f"expected {expected} from the config")

    L, d, hd, kv = c.n_layers, c.dim, c.head_dim, c.n_kv_heads * c.head_dim
    q = c.n_heads * hd
    shapes = [
        ("token_embedding", (c.vocab_size, d)),
        ("rms_att", (L, d)),
        ("wq", (L, q, d)),
        ("wk", (L, kv, d)),
        ("wv", (L, kv, d)),
        ("wo", (L, d, q)),
        ("rms_ffn", (L, d)),
        ("w1", (L, c.hidden_dim, d)),
        ("w2", (L, d, c.hidden_dim)),
        ("w3", (L, c.hidden_dim, d)),
        ("rms_final", (d,)),
        ("freq_cis_real", (c.context_length, hd // 2)),
        ("freq_cis_imag", (c.context_length, hd // 2)),
    ]
    if not c.tied_embeddings:
        shapes.append(("wcls", (c.vocab_size, d)))
    n_floats = sum(math.prod(shape) for _, shape in shapes)
    expected_bytes = 4 * len(HEADER_FIELDS) + 4 * n_floats
    actual_bytes = os.path.getsize(path)
    if actual_bytes != expected_bytes:
        raise OracleError(f"{path}: found {actual_bytes} bytes, expected {expected_bytes} "
                          "for the config's tensors")

    data = np.memmap(path, dtype="<f4", mode="r", offset=4 * len(HEADER_FIELDS))
    weights, offset = {}, 0
    for name, shape in shapes:
        count = math.prod(shape)
        weights[name] = torch.from_numpy(np.array(data[offset:offset + count])).reshape(shape).double()
        offset += count
    if c.tied_embeddings:
        weights["wcls"] = weights["token_embedding"]
    return weights


def rms_norm(x, gain, eps):
    """x / sqrt(mean(x^2) + eps) * gain over the last dimension."""
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * gain


def rope(x, positions, theta):
    """Rotates the pairs (x[..., 2i], x[..., 2i+1]) of x [T, heads, head_dim]
    by positions[t] * theta^(-2i/head_dim), as a complex multiplication."""
    head_dim = x.shape[-1]
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim
    freqs = theta ** (-exponents)
    angles = positions.double()[:, None] * freqs[None, :]            # [T, head_dim/2]
    rotation = torch.polar(torch.ones_like(angles), angles)[:, None, :]  # [T, 1, head_dim/2]
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], head_dim // 2, 2).contiguous())
    return torch.view_as_real(pairs * rotation).reshape(x.shape)


def rope_half(x, positions, theta):
    """Hugging Face's form of RoPE ("rotate_half"): pairs dimension i with
    i + head_dim/2 instead of 2i with 2i+1. Hugging Face checkpoints store the
    q and k rows in the order that makes this equal to the interleaved form."""
    half = x.shape[-1] // 2
    exponents = torch.arange(0, half, dtype=torch.float64) * 2 / x.shape[-1]
    angles = positions.double()[:, None] * theta ** (-exponents)[None, :]  # [T, half]
    cos, sin = torch.cos(angles)[:, None, :], torch.sin(angles)[:, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


# Hugging Face names of the oracle's tensors: (name pattern, per-layer).
_HF_NAMES = {
    "token_embedding": "model.embed_tokens.weight",
    "rms_att": "model.layers.{}.input_layernorm.weight",
    "wq": "model.layers.{}.self_attn.q_proj.weight",
    "wk": "model.layers.{}.self_attn.k_proj.weight",
    "wv": "model.layers.{}.self_attn.v_proj.weight",
    "wo": "model.layers.{}.self_attn.o_proj.weight",
    "rms_ffn": "model.layers.{}.post_attention_layernorm.weight",
    "w1": "model.layers.{}.mlp.gate_proj.weight",
    "w2": "model.layers.{}.mlp.down_proj.weight",
    "w3": "model.layers.{}.mlp.up_proj.weight",
    "rms_final": "model.norm.weight",
}


# llama.cpp's GGUF names of the oracle's tensors (interleaved q/k rows).
_GGUF_NAMES = {
    "token_embedding": "token_embd.weight", "rms_att": "blk.{}.attn_norm.weight",
    "wq": "blk.{}.attn_q.weight", "wk": "blk.{}.attn_k.weight", "wv": "blk.{}.attn_v.weight",
    "wo": "blk.{}.attn_output.weight", "rms_ffn": "blk.{}.ffn_norm.weight",
    "w1": "blk.{}.ffn_gate.weight", "w2": "blk.{}.ffn_down.weight", "w3": "blk.{}.ffn_up.weight",
    "rms_final": "output_norm.weight", "wcls": "output.weight",
}


def weights_from_names(tensors, config, naming):
    """The oracle's tensors from a state dict named the Hugging Face way
    (naming "hf": q/k rows in rotate-half order, use rope_style="half") or
    the GGUF way (naming "gguf": interleaved, the default rope_style)."""
    names = dict(_HF_NAMES, wcls="lm_head.weight") if naming == "hf" else _GGUF_NAMES
    weights = {}
    for key, pattern in names.items():
        if key == "wcls" and config.tied_embeddings:
            continue
        if "{}" in pattern:
            weights[key] = torch.stack([tensors[pattern.format(i)] for i in range(config.n_layers)])
        else:
            weights[key] = tensors[pattern]
    if config.tied_embeddings:
        weights["wcls"] = weights["token_embedding"]
    return weights


def causal_attention(q, k, v, q_positions):
    """q [T, n_heads, hd] at absolute positions q_positions; k, v [S, n_kv_heads, hd]
    for positions 0..S-1. Query head h reads kv head h // (n_heads / n_kv_heads)."""
    n_heads, head_dim = q.shape[1], q.shape[2]
    group = n_heads // k.shape[1]
    k = k.repeat_interleave(group, dim=1)  # [S, n_heads, hd]
    v = v.repeat_interleave(group, dim=1)
    scores = torch.einsum("thd,shd->hts", q, k) / math.sqrt(head_dim)
    key_positions = torch.arange(k.shape[0])
    future = key_positions[None, :] > q_positions[:, None]           # [T, S]
    scores = scores.masked_fill(future[None, :, :], float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    return torch.einsum("hts,shd->thd", probs, v)


def swiglu(x, w1, w2, w3):
    """W2 · (silu(W1·x) * (W3·x)) for rows x."""
    return (torch.nn.functional.silu(x @ w1.T) * (x @ w3.T)) @ w2.T


def cache_rounding(cache_dtype):
    """What storing keys and values in a KV cache of `cache_dtype` ("f32",
    "f16" or "bf16") does to them: they are rounded to that type."""
    torch_type = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[cache_dtype]
    return lambda t: t.to(torch_type).to(torch.float64)


class LlamaOracle:
    def __init__(self, config, weights, rope_style="interleaved", cache_dtype="f32"):
        self.config = config
        self.w = weights
        self.rope = rope if rope_style == "interleaved" else rope_half
        self.store = cache_rounding(cache_dtype)

    def new_cache(self):
        """Per layer, the keys and values of every position seen so far."""
        empty = torch.zeros(0, self.config.n_kv_heads, self.config.head_dim, dtype=torch.float64)
        return [[empty, empty] for _ in range(self.config.n_layers)]

    def forward(self, tokens, cache):
        """Runs tokens at the positions after those in `cache` (appending to
        it) and returns the logits of every token, [len(tokens), vocab]."""
        c, w = self.config, self.w
        start = cache[0][0].shape[0]
        positions = torch.arange(start, start + len(tokens))
        if positions[-1] >= c.context_length:
            raise OracleError(f"position {int(positions[-1])} is past the context length {c.context_length}")
        h = w["token_embedding"][torch.as_tensor(tokens, dtype=torch.long)]
        T = h.shape[0]
        for layer in range(c.n_layers):
            n = rms_norm(h, w["rms_att"][layer], c.norm_eps)
            q = (n @ w["wq"][layer].T).reshape(T, c.n_heads, c.head_dim)
            k = (n @ w["wk"][layer].T).reshape(T, c.n_kv_heads, c.head_dim)
            v = (n @ w["wv"][layer].T).reshape(T, c.n_kv_heads, c.head_dim)
            q = self.rope(q, positions, c.rope_theta)
            k = self.rope(k, positions, c.rope_theta)
            cache[layer][0] = torch.cat([cache[layer][0], self.store(k)])
            cache[layer][1] = torch.cat([cache[layer][1], self.store(v)])
            attended = causal_attention(q, cache[layer][0], cache[layer][1], positions)
            h = h + attended.reshape(T, -1) @ w["wo"][layer].T
            m = rms_norm(h, w["rms_ffn"][layer], c.norm_eps)
            h = h + swiglu(m, w["w1"][layer], w["w2"][layer], w["w3"][layer])
        return rms_norm(h, w["rms_final"], c.norm_eps) @ w["wcls"].T

    def logits(self, tokens):
        """Logits of every position of one sequence run from position 0."""
        return self.forward(tokens, self.new_cache())
