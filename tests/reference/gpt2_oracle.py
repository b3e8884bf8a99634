"""An independent float64 forward pass of a GPT-2 model, in PyTorch.

Written from GPT-2's definition (OpenAI's model.py / Hugging Face's
modeling_gpt2), not from any tfmc code, so that it can judge the compiled
models. Weights use Hugging Face's names and layouts (Conv1D: y = x @ W + b,
W stored [in, out]):
  h = wte[token] + wpe[position]
  per layer:  h += c_proj(attention(split(c_attn(ln_1(h)))))
              h += mlp.c_proj(gelu(mlp.c_fc(ln_2(h))))
  logits = ln_f(h) @ wte^T      (lm_head when the head is untied)
LayerNorm uses the biased variance; attention is causal, scaled by
1/sqrt(head_dim); GELU is the tanh form for "gelu_new" and the erf form for
"gelu".
"""

import json
import math
from dataclasses import dataclass

import torch

from llama_oracle import cache_rounding


class OracleError(Exception):
    pass


@dataclass
class Gpt2Config:
    dim: int
    n_layers: int
    n_heads: int
    inner_dim: int
    vocab_size: int
    n_positions: int
    eps: float
    activation: str
    tied: bool

    @property
    def head_dim(self):
        return self.dim // self.n_heads


def load_config(path):
    with open(path) as f:
        raw = json.load(f)
    if raw.get("model_type") != "gpt2":
        raise OracleError(f"{path}: field 'model_type': found {raw.get('model_type')!r}, expected 'gpt2'")
    dim = raw["n_embd"]
    activation = raw.get("activation_function", "gelu_new")
    if activation not in ("gelu_new", "gelu_pytorch_tanh", "gelu"):
        raise OracleError(f"{path}: field 'activation_function': {activation!r} not known here")
    return Gpt2Config(dim=dim, n_layers=raw["n_layer"], n_heads=raw["n_head"],
                      inner_dim=raw.get("n_inner") or 4 * dim, vocab_size=raw["vocab_size"],
                      n_positions=raw["n_positions"], eps=raw.get("layer_norm_epsilon", 1e-5),
                      activation=activation, tied=raw.get("tie_word_embeddings", True))


def layer_norm(x, weight, bias, eps):
    """bias None: a LayerNorm without bias (MPT's)."""
    mean = x.mean(dim=-1, keepdim=True)
    var = (x - mean).pow(2).mean(dim=-1, keepdim=True)
    y = (x - mean) / torch.sqrt(var + eps) * weight
    return y if bias is None else y + bias


def gelu(x, activation):
    if activation == "gelu":
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


# llama.cpp's GGUF names for Hugging Face's, and whether the GGUF tensor is
# the transpose of the Conv1D weight.
_GGUF_LAYER_NAMES = {
    "attn_norm.weight": ("ln_1.weight", False), "attn_norm.bias": ("ln_1.bias", False),
    "attn_qkv.weight": ("attn.c_attn.weight", True), "attn_qkv.bias": ("attn.c_attn.bias", False),
    "attn_output.weight": ("attn.c_proj.weight", True), "attn_output.bias": ("attn.c_proj.bias", False),
    "ffn_norm.weight": ("ln_2.weight", False), "ffn_norm.bias": ("ln_2.bias", False),
    "ffn_up.weight": ("mlp.c_fc.weight", True), "ffn_up.bias": ("mlp.c_fc.bias", False),
    "ffn_down.weight": ("mlp.c_proj.weight", True), "ffn_down.bias": ("mlp.c_proj.bias", False),
}
_GGUF_NAMES = {"token_embd.weight": "wte.weight", "position_embd.weight": "wpe.weight",
               "output_norm.weight": "ln_f.weight", "output_norm.bias": "ln_f.bias",
               "output.weight": "lm_head.weight"}


def hf_names_from_gguf(tensors):
    """Renames a GPT-2 GGUF's tensors to Hugging Face's names and layouts."""
    hf = {}
    for name, value in tensors.items():
        if name in _GGUF_NAMES:
            hf[_GGUF_NAMES[name]] = value
            continue
        _, layer, suffix = name.split(".", 2)
        hf_suffix, transposed = _GGUF_LAYER_NAMES[suffix]
        hf[f"h.{layer}.{hf_suffix}"] = value.T if transposed else value
    return hf


class Gpt2Oracle:
    def __init__(self, config, weights, cache_dtype="f32"):
        self.config = config
        self.store = cache_rounding(cache_dtype)
        self.w = {name.removeprefix("transformer."): value for name, value in weights.items()}
        head = "wte.weight" if config.tied else "lm_head.weight"
        if head not in self.w:
            raise OracleError(f"weights: tensor '{head}' missing")
        self.head = self.w[head]

    def logits(self, tokens):
        """Logits of every position of one sequence run from position 0."""
        c, w = self.config, self.w
        T = len(tokens)
        if T > c.n_positions:
            raise OracleError(f"{T} tokens, more than n_positions {c.n_positions}")
        h = w["wte.weight"][torch.as_tensor(tokens)] + w["wpe.weight"][:T]
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        for i in range(c.n_layers):
            p = f"h.{i}."
            a = layer_norm(h, w[p + "ln_1.weight"], w[p + "ln_1.bias"], c.eps)
            qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
            q, k, v = (t.reshape(T, c.n_heads, c.head_dim) for t in qkv.split(c.dim, dim=-1))
            k, v = self.store(k), self.store(v)  # as the KV cache holds them
            scores = torch.einsum("thd,shd->hts", q, k) / math.sqrt(c.head_dim)
            probs = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
            attended = torch.einsum("hts,shd->thd", probs, v).reshape(T, c.dim)
            h = h + attended @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
            m = layer_norm(h, w[p + "ln_2.weight"], w[p + "ln_2.bias"], c.eps)
            up = gelu(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], c.activation)
            h = h + up @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        return layer_norm(h, w["ln_f.weight"], w["ln_f.bias"], c.eps) @ self.head.T
