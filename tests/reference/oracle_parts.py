"""What the oracles of encoders and encoder-decoders (bert_oracle.py,
t5_oracle.py, seq2seq_oracle.py) share that is no model's computation: the
refusal they raise, reading a config one of them handles, and a model's
named tensors as its modules read them."""

import json

from gpt2_oracle import layer_norm


class OracleError(Exception):
    pass


def load_config(path, handles, expected):
    """The config.json at `path` as a dict, refused unless `handles` takes
    it; `expected` says what would be."""
    with open(path) as f:
        raw = json.load(f)
    if not handles(raw):
        raise OracleError(f"{path}: field 'model_type': found {raw.get('model_type')!r} "
                          f"(architecture {raw.get('architecture')!r}), expected {expected}")
    return raw


class NamedTensors:
    """A model's tensors by name (self.t) and the modules that read them:
    nn.Linear (a [out, in] weight and a bias) and nn.LayerNorm (self.eps)."""

    def get(self, name):
        if name not in self.t:
            raise OracleError(f"weights: tensor '{name}' missing")
        return self.t[name]

    def linear(self, x, name):
        """nn.Linear: x W^T + b, W stored [out, in]."""
        return x @ self.get(name + ".weight").T + self.get(name + ".bias")

    def layer_norm(self, x, name):
        return layer_norm(x, self.get(name + ".weight"), self.get(name + ".bias"), self.eps)
