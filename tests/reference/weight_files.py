"""Independent readers of the weight files the runtime loads, for the oracle.

Written from the format specifications (safetensors' README, GGUF's
docs/gguf.md), not from the runtime's loaders, so a loader bug cannot hide
behind a reader sharing it. Each reader returns {tensor name: float64 torch
tensor} with the file's own names and shapes:
  safetensors: Hugging Face names, the shape as stored ([in, out] for
               GPT-2's Conv1D weights, rotate-half row order for Llama q/k);
  GGUF:        llama.cpp names, the shape as numpy sees it (ne reversed).
"""

import json
import os
import struct

import numpy as np
import torch


class WeightFileError(Exception):
    pass


_SAFETENSORS_DTYPES = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": None,
                       "F64": np.dtype("<f8")}


def _bf16_to_f32(raw):
    """bfloat16 is the top half of a float32."""
    return (raw.astype(np.uint32) << 16).view(np.float32)


def read_safetensors(path):
    """One .safetensors file, or a model.safetensors.index.json and its shards."""
    if path.endswith(".json"):
        with open(path) as f:
            weight_map = json.load(f)["weight_map"]
        tensors = {}
        for shard in sorted(set(weight_map.values())):
            tensors.update(read_safetensors(os.path.join(os.path.dirname(path), shard)))
        return tensors
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[base + begin:base + end]
        if info["dtype"] == "BF16":
            values = _bf16_to_f32(np.frombuffer(raw, dtype="<u2"))
        elif info["dtype"] in _SAFETENSORS_DTYPES:
            values = np.frombuffer(raw, dtype=_SAFETENSORS_DTYPES[info["dtype"]])
        else:
            raise WeightFileError(f"{path}: tensor {name}: dtype {info['dtype']} not readable here")
        tensors[name] = torch.from_numpy(values.astype(np.float64).reshape(info["shape"]))
    return tensors


# GGUF metadata value types (gguf.md): sizes of the fixed-width ones.
_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
                 10: "<Q", 11: "<q", 12: "<d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9
# ggml tensor types this reader converts: f32, f16, bf16.
_GGML_TYPES = {0: np.dtype("<f4"), 1: np.dtype("<f2"), 30: None}


class _Cursor:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def string(self):
        n = self.take("<Q")
        value = self.data[self.pos:self.pos + n].decode("utf-8", errors="replace")
        self.pos += n
        return value

    def value(self, kind):
        if kind in _GGUF_SCALARS:
            return self.take(_GGUF_SCALARS[kind])
        if kind == _GGUF_STRING:
            return self.string()
        if kind == _GGUF_ARRAY:
            item_kind, count = self.take("<I"), self.take("<Q")
            return [self.value(item_kind) for _ in range(count)]
        raise WeightFileError(f"unknown GGUF value type {kind}")


def read_gguf(path):
    """Returns (metadata dict, {tensor name: float64 tensor})."""
    with open(path, "rb") as f:
        data = f.read()
    c = _Cursor(data)
    if data[:4] != b"GGUF":
        raise WeightFileError(f"{path}: not a GGUF file")
    c.pos = 4
    version = c.take("<I")
    if version != 3:
        raise WeightFileError(f"{path}: GGUF version {version}, expected 3")
    n_tensors, n_kv = c.take("<Q"), c.take("<Q")
    metadata = {}
    for _ in range(n_kv):
        key = c.string()
        metadata[key] = c.value(c.take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = c.string()
        ne = [c.take("<Q") for _ in range(c.take("<I"))]
        infos.append((name, ne, c.take("<I"), c.take("<Q")))
    alignment = metadata.get("general.alignment", 32)
    base = (c.pos + alignment - 1) // alignment * alignment
    tensors = {}
    for name, ne, kind, offset in infos:
        if kind not in _GGML_TYPES:
            raise WeightFileError(f"{path}: tensor {name}: ggml type {kind} not readable here")
        count = int(np.prod(ne))
        start = base + offset
        if kind == 30:
            values = _bf16_to_f32(np.frombuffer(data, dtype="<u2", count=count, offset=start))
        else:
            values = np.frombuffer(data, dtype=_GGML_TYPES[kind], count=count, offset=start)
        tensors[name] = torch.from_numpy(values.astype(np.float64).reshape(list(reversed(ne))))
    return metadata, tensors
