"""Float64 forward pass of the encoder-only BERT family, in PyTorch: BERT,
RoBERTa, CamemBERT and XLM-RoBERTa (the last two are RoBERTa's code under
other names), and the sentence embeddings pooled from it.

Written from Hugging Face transformers' modeling_bert.py (BertEmbeddings,
BertSelfAttention, BertSelfOutput, BertIntermediate, BertOutput) and
modeling_roberta.py (RobertaEmbeddings, create_position_ids_from_input_ids),
with activations.py's ACT2FN for hidden_act, not from tfmc's code. What it
computes is BertModel's last_hidden_state for one sequence, attention mask
all ones, token_type_ids all 0:
  h = LayerNorm(word_embeddings[token] + position_embeddings[pos]
                + token_type_embeddings[0])                  (eps layer_norm_eps)
  pos = 0 .. T-1 (BERT); RoBERTa's family counts from padding_idx + 1, and a
        token equal to padding_idx (pad_token_id, default 1) takes position
        padding_idx without advancing the count (cumsum of token != pad)
  per layer (post-LN):
      q, k, v = query(h), key(h), value(h)           (Linear with bias, heads of
                                                      hidden_size / heads columns)
      h = LayerNorm(h + attention.output.dense(softmax(q k^T / sqrt(head_dim)) v))
          (every query sees every key: no causal mask)
      h = LayerNorm(h + output.dense(act(intermediate.dense(h))))
  act: "gelu" the exact erf GELU; "gelu_new", "gelu_pytorch_tanh", "gelu_fast"
       the tanh form; "relu"; "silu"/"swish"; "quick_gelu" x * sigmoid(1.702 x).
Only absolute position embeddings are modelled (position_embedding_type
"relative_key" and the like are refused), and only the encoder (is_decoder
is refused). The pooler (pooler.dense, tanh) is not part of it: sentence
embeddings are pooled from the hidden states as sentence-transformers and
llama.cpp pool them (pool(): none, mean, cls, last; L2 normalisation as
llama.cpp's embd_normalize 2).

Weights are read under Hugging Face's names, with or without BertModel's
"bert." / RobertaModel's "roberta." prefix; TF-era checkpoints' LayerNorm
gamma/beta are read as weight/bias (as transformers' loader renames them). A
GGUF's llama.cpp names (arch "bert": src/llama-arch.cpp LLM_ARCH_BERT,
gguf-py's tensor_mapping.py) are renamed back by hf_names_from_gguf; its
matrices are stored [out, in] like a Linear weight, so nothing is transposed.
llama.cpp's converter (convert_hf_to_gguf.py, XLMRobertaModel / RobertaModel)
drops RoBERTa's first padding_idx + 1 position rows, and llama.cpp's bert
graph (src/models/bert.cpp) counts positions from 0, so config_from_gguf
gives model_type "bert" for every GGUF of arch bert. (Its converter takes
CamembertModel as a BertModel and keeps the whole table: such a GGUF is
computed here as llama.cpp computes it, which is not as transformers does.)
"""

import math

import torch

from gpt2_oracle import gelu
import oracle_parts
from oracle_parts import NamedTensors, OracleError


FAMILIES = ("bert", "roberta", "camembert", "xlm-roberta")
ROBERTA = FAMILIES[1:]  # RobertaEmbeddings' positions


def handles(raw):
    return raw.get("model_type") in FAMILIES


def load_config(path):
    return oracle_parts.load_config(path, handles, f"one of {FAMILIES}")


def activation(name, x):
    """ACT2FN[hidden_act] of activations.py, for the names BERT-family configs use."""
    if name == "gelu":
        return gelu(x, "gelu")
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return gelu(x, "gelu_new")  # gelu_fast: the same, sqrt(2/pi) to 10 digits
    if name == "relu":
        return torch.relu(x)
    if name in ("silu", "swish"):
        return x * torch.sigmoid(x)
    if name == "quick_gelu":
        return x * torch.sigmoid(1.702 * x)
    raise OracleError(f"hidden_act {name!r} not modelled here")


def padding_idx(raw):
    """RobertaEmbeddings' padding_idx: config.pad_token_id (RobertaConfig's default 1)."""
    pad = raw.get("pad_token_id")
    return 1 if pad is None else pad


def position_ids(raw, tokens):
    """BertEmbeddings' arange(T); RobertaEmbeddings' create_position_ids_from_input_ids:
    cumsum(token != pad) * (token != pad) + pad, i.e. pad + 1 + i without pad tokens."""
    tokens = torch.as_tensor(tokens, dtype=torch.long)
    if raw["model_type"] not in ROBERTA:
        return torch.arange(len(tokens))
    pad = padding_idx(raw)
    mask = tokens.ne(pad).long()
    return torch.cumsum(mask, dim=0) * mask + pad


def l2_normalize(x):
    """Each vector (last dimension) over its L2 norm; a zero vector stays zero, as
    llama.cpp's common_embd_normalize leaves it (sentence-transformers' Normalize
    divides by max(norm, 1e-12): the same on any vector that is not ~0)."""
    norm = x.norm(dim=-1, keepdim=True)
    return torch.where(norm > 0, x / torch.where(norm > 0, norm, torch.ones_like(norm)),
                       torch.zeros_like(x))


POOLING_MODES = ("none", "mean", "cls", "last")


def pool(hidden, mode, normalize=False):
    """Sentence embedding(s) from hidden [T, d]: "none" the rows [T, d]; "mean"
    the mean of the rows, "cls" row 0, "last" row T-1, each [d]. normalize:
    each vector over its L2 norm."""
    if mode == "none":
        out = hidden
    elif mode == "mean":
        out = hidden.mean(dim=0)
    elif mode == "cls":
        out = hidden[0]
    elif mode == "last":
        out = hidden[-1]
    else:
        raise OracleError(f"pooling {mode!r}: expected one of {POOLING_MODES}")
    return l2_normalize(out) if normalize else out


# llama.cpp's GGUF names (LLM_ARCH_BERT) -> BertModel's, without a prefix.
_GGUF_TOP = {
    "token_embd": "embeddings.word_embeddings",
    "token_types": "embeddings.token_type_embeddings",
    "position_embd": "embeddings.position_embeddings",
    "token_embd_norm": "embeddings.LayerNorm",
}
_GGUF_LAYER = {
    "attn_q": "attention.self.query",
    "attn_k": "attention.self.key",
    "attn_v": "attention.self.value",
    "attn_output": "attention.output.dense",
    "attn_output_norm": "attention.output.LayerNorm",
    "ffn_up": "intermediate.dense",
    "ffn_down": "output.dense",
    "layer_output_norm": "output.LayerNorm",
}


def hf_names_from_gguf(tensors):
    """A bert GGUF's tensors under BertModel's names (no prefix). llama.cpp's
    optional fused blk.N.attn_qkv (rows [q; k; v], as its bert graph views
    them) is split into query, key and value. Every tensor must map: any other
    name (a reranker's cls / cls.output head, which BertModel has not) is
    refused rather than silently left out of the comparison."""
    out, unknown = {}, []
    for name, value in tensors.items():
        stem, _, part = name.rpartition(".")
        if part not in ("weight", "bias"):
            unknown.append(name)
        elif stem in _GGUF_TOP:
            out[f"{_GGUF_TOP[stem]}.{part}"] = value
        elif stem.startswith("blk.") and stem.count(".") == 2:
            _, layer, role = stem.split(".")
            p = f"encoder.layer.{layer}."
            if role in _GGUF_LAYER and layer.isdigit():
                out[f"{p}{_GGUF_LAYER[role]}.{part}"] = value
            elif role == "attn_qkv" and layer.isdigit() and value.shape[0] % 3 == 0:
                for hf, rows in zip(("query", "key", "value"), value.chunk(3, dim=0)):
                    out[f"{p}attention.self.{hf}.{part}"] = rows
            else:
                unknown.append(name)
        else:
            unknown.append(name)
    if unknown:
        raise OracleError(f"GGUF tensors with no BertModel name: {sorted(unknown)}")
    return out


# llama.cpp's enum llama_pooling_type, as bert.pooling_type stores it.
GGUF_POOLING = {0: "none", 1: "mean", 2: "cls", 3: "last", 4: "rank"}


def config_from_gguf(metadata, tensors=None, hidden_act="gelu"):
    """The BertConfig a bert GGUF's bert.* keys describe, as a config.json dict.
    vocab_size and type_vocab_size come from token_embd's and token_types' rows
    when `tensors` is given (else the tokenizer's list). The GGUF does not say
    which activation the model was trained with: llama.cpp's graph always runs
    ggml's GELU (tanh form), BERT's configs say "gelu" (erf), hence the default.
    "pooling_type" (GGUF_POOLING's names, absent when the file has none) is no
    BertConfig field: it says how llama.cpp pools the file by default."""
    arch = metadata.get("general.architecture")
    if arch != "bert":
        raise OracleError(f"GGUF general.architecture {arch!r}, expected 'bert'")

    def key(name, default=None):
        value = metadata.get(f"bert.{name}", default)
        if value is None:
            raise OracleError(f"GGUF key bert.{name} missing")
        return value

    if tensors is not None and "token_embd.weight" in tensors:
        vocab = tensors["token_embd.weight"].shape[0]
    else:
        vocab = len(metadata.get("tokenizer.ggml.tokens", []))
    types = (tensors["token_types.weight"].shape[0]
             if tensors is not None and "token_types.weight" in tensors
             else metadata.get("tokenizer.ggml.token_type_count", 2))
    if key("attention.causal", False):
        raise OracleError("GGUF bert.attention.causal is true: not an encoder")
    raw = {
        "model_type": "bert",
        "hidden_size": key("embedding_length"),
        "num_hidden_layers": key("block_count"),
        "num_attention_heads": key("attention.head_count"),
        "intermediate_size": key("feed_forward_length"),
        "max_position_embeddings": key("context_length"),
        "layer_norm_eps": key("attention.layer_norm_epsilon"),
        "vocab_size": vocab,
        "type_vocab_size": types,
        "hidden_act": hidden_act,
        "position_embedding_type": "absolute",
    }
    if "tokenizer.ggml.padding_token_id" in metadata:
        raw["pad_token_id"] = metadata["tokenizer.ggml.padding_token_id"]
    if "bert.pooling_type" in metadata:
        kind = metadata["bert.pooling_type"]
        if kind not in GGUF_POOLING:
            raise OracleError(f"GGUF bert.pooling_type {kind} not known here")
        raw["pooling_type"] = GGUF_POOLING[kind]
    return raw


def _hf_name(name):
    """BertModel's own name of a checkpoint's tensor: no task-model prefix, and
    LayerNorm.gamma/.beta as transformers' loader renames them."""
    for prefix in ("bert.", "roberta."):
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    if name.endswith("LayerNorm.gamma"):
        name = name[:-len("gamma")] + "weight"
    elif name.endswith("LayerNorm.beta"):
        name = name[:-len("beta")] + "bias"
    return name


class BertOracle(NamedTensors):
    def __init__(self, raw, tensors):
        if not handles(raw):
            raise OracleError(f"model_type {raw.get('model_type')!r}: expected one of {FAMILIES}")
        kind = raw.get("position_embedding_type", "absolute") or "absolute"
        if kind != "absolute":
            raise OracleError(f"position_embedding_type {kind!r}: only 'absolute' is modelled")
        if raw.get("is_decoder", False):
            raise OracleError("is_decoder: BertModel as a causal decoder is not modelled")
        self.raw = raw
        self.d = raw["hidden_size"]
        self.heads = raw["num_attention_heads"]
        if self.d % self.heads:
            raise OracleError(f"hidden_size {self.d} is not a multiple of "
                              f"num_attention_heads {self.heads}")
        self.head_dim = self.d // self.heads
        self.layers = raw["num_hidden_layers"]
        self.eps = raw.get("layer_norm_eps", 1e-12)
        self.act = raw.get("hidden_act", "gelu")
        activation(self.act, torch.zeros(1, dtype=torch.float64))  # refuse early
        self.t = {}
        for name, value in tensors.items():
            hf = _hf_name(name)
            if hf in self.t:
                raise OracleError(f"weights: tensor '{hf}' given twice (as '{name}')")
            self.t[hf] = torch.as_tensor(value).double()




    def embeddings(self, tokens):
        """BertEmbeddings / RobertaEmbeddings: the LayerNorm of the three sums."""
        positions = position_ids(self.raw, tokens)
        table = self.get("embeddings.position_embeddings.weight")
        if int(positions.max()) >= table.shape[0]:
            raise OracleError(f"{len(tokens)} tokens reach position {int(positions.max())}, "
                              f"past the {table.shape[0]} rows of position_embeddings")
        words = self.get("embeddings.word_embeddings.weight")
        if int(tokens.max()) >= words.shape[0] or int(tokens.min()) < 0:
            raise OracleError(f"token ids must lie in [0, {words.shape[0]})")
        h = (words[tokens] + self.get("embeddings.token_type_embeddings.weight")[0]
             + table[positions])
        return self.layer_norm(h, "embeddings.LayerNorm")

    def attention(self, h, p):
        """BertSelfAttention then BertSelfOutput's dense; no mask: all ones."""
        T = h.shape[0]
        q = self.linear(h, p + "attention.self.query").view(T, self.heads, self.head_dim)
        k = self.linear(h, p + "attention.self.key").view(T, self.heads, self.head_dim)
        v = self.linear(h, p + "attention.self.value").view(T, self.heads, self.head_dim)
        scores = torch.einsum("thd,shd->hts", q, k) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores, dim=-1)
        context = torch.einsum("hts,shd->thd", probs, v).reshape(T, self.d)
        return self.linear(context, p + "attention.output.dense")

    def hidden(self, tokens):
        """last_hidden_state [T, hidden_size] of one sequence of token ids."""
        tokens = torch.as_tensor(tokens, dtype=torch.long).reshape(-1)
        if len(tokens) == 0:
            raise OracleError("no tokens")
        h = self.embeddings(tokens)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            h = self.layer_norm(h + self.attention(h, p), p + "attention.output.LayerNorm")
            up = activation(self.act, self.linear(h, p + "intermediate.dense"))
            h = self.layer_norm(h + self.linear(up, p + "output.dense"), p + "output.LayerNorm")
        return h

    def embedding(self, tokens, mode, normalize=False):
        """pool(hidden(tokens), mode, normalize)."""
        return pool(self.hidden(tokens), mode, normalize)
