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
# ggml tensor types this reader converts: f32, f16, bf16, and the block
# formats q4_0, q8_0, q4_K, q5_K and q6_K (below).
_GGML_TYPES = {0: np.dtype("<f4"), 1: np.dtype("<f2"), 30: None}


def _halves(raw):
    return raw.view("<f2").astype(np.float32)


def _q8_0(blocks):  # 34 bytes: f16 d, int8 q[32]
    return _halves(blocks[:, 0:2]) * blocks[:, 2:].view(np.int8).astype(np.float32)


def _q4_0(blocks):  # 18 bytes: f16 d, byte j = element j (low nibble), j+16 (high)
    q = blocks[:, 2:]
    levels = np.concatenate([q & 0xF, q >> 4], axis=1).astype(np.float32) - 8
    return _halves(blocks[:, 0:2]) * levels


def _scales_and_mins(packed):
    """q4_K's and q5_K's 12 bytes: 6-bit scales and minimums of 8 sub-blocks."""
    p = packed.astype(np.int32)
    scale = np.concatenate([p[:, 0:4] & 63, (p[:, 8:12] & 0xF) | ((p[:, 0:4] >> 6) << 4)], axis=1)
    mins = np.concatenate([p[:, 4:8] & 63, (p[:, 8:12] >> 4) | ((p[:, 4:8] >> 6) << 4)], axis=1)
    return scale, mins


def _q4_k(blocks):  # 144 bytes: f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, q[128]
    d, dmin = _halves(blocks[:, 0:2]), _halves(blocks[:, 2:4])
    scale, mins = _scales_and_mins(blocks[:, 4:16])
    q = blocks[:, 16:].reshape(-1, 4, 32)  # chunks of 64 elements: low nibbles, then high
    levels = np.stack([q & 0xF, q >> 4], axis=2).reshape(-1, 8, 32).astype(np.float32)
    return (d[:, :, None] * scale[:, :, None] * levels - dmin[:, :, None] * mins[:, :, None]).reshape(-1, 256)


def _q5_k(blocks):  # 176 bytes: q4_K's 16-byte header, fifth bits qh[32], low nibbles q[128]
    d, dmin = _halves(blocks[:, 0:2]), _halves(blocks[:, 2:4])
    scale, mins = _scales_and_mins(blocks[:, 4:16])
    fifth = (blocks[:, 16:48][:, None, :] >> np.arange(8, dtype=np.uint8)[None, :, None]) & 1  # [b, 8, 32]
    q = blocks[:, 48:].reshape(-1, 4, 32)
    levels = np.stack([q & 0xF, q >> 4], axis=2).reshape(-1, 8, 32) | (fifth << 4)
    return (d[:, :, None] * scale[:, :, None] * levels.astype(np.float32)
            - dmin[:, :, None] * mins[:, :, None]).reshape(-1, 256)


def _q6_k(blocks):  # 210 bytes: ql[128], qh[64], int8 scales[16], f16 d
    ql = blocks[:, 0:128].reshape(-1, 2, 64).astype(np.int32)
    qh = blocks[:, 128:192].reshape(-1, 2, 32).astype(np.int32)
    scales = blocks[:, 192:208].view(np.int8).astype(np.float32)
    d = _halves(blocks[:, 208:210])
    parts = [(ql[:, :, 0:32] & 0xF) | ((qh & 3) << 4), (ql[:, :, 32:64] & 0xF) | (((qh >> 2) & 3) << 4),
             (ql[:, :, 0:32] >> 4) | (((qh >> 4) & 3) << 4), (ql[:, :, 32:64] >> 4) | (((qh >> 6) & 3) << 4)]
    levels = np.concatenate(parts, axis=2).reshape(-1, 256).astype(np.float32) - 32
    return d * np.repeat(scales, 16, axis=1) * levels


# ggml type id: (elements per block, bytes per block, decoder of [blocks, bytes] uint8)
_GGML_BLOCKS = {8: (32, 34, _q8_0), 2: (32, 18, _q4_0), 12: (256, 144, _q4_k), 13: (256, 176, _q5_k),
                14: (256, 210, _q6_k)}


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


def read_gguf(path, with_types=False):
    """Returns (metadata dict, {tensor name: float64 tensor}), and with
    `with_types` also {tensor name: ggml type id}."""
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
        if kind not in _GGML_TYPES and kind not in _GGML_BLOCKS:
            raise WeightFileError(f"{path}: tensor {name}: ggml type {kind} not readable here")
        count = int(np.prod(ne))
        start = base + offset
        if kind in _GGML_BLOCKS:
            elements, nbytes, decode = _GGML_BLOCKS[kind]
            blocks = np.frombuffer(data, dtype=np.uint8, count=count // elements * nbytes, offset=start)
            values = decode(blocks.reshape(-1, nbytes))
        elif kind == 30:
            values = _bf16_to_f32(np.frombuffer(data, dtype="<u2", count=count, offset=start))
        else:
            values = np.frombuffer(data, dtype=_GGML_TYPES[kind], count=count, offset=start)
        tensors[name] = torch.from_numpy(values.astype(np.float64).reshape(list(reversed(ne))))
    if with_types:
        return metadata, tensors, {name: kind for name, _, kind, _ in infos}
    return metadata, tensors
