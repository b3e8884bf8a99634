"""tfm-run refuses malformed weight files with a message naming the file and
the tensor or key, and a non-zero exit, never a crash. One CTest test per
case: test_bad_weights.py CASE.

Each case starts from a valid file for aidreams260k written by tfm-weights
(safetensors under Hugging Face names, or GGUF), checks that tfm-run takes
it, then breaks one thing with Python and checks the refusal."""

import json
import os
import struct
import sys

import torch

import aidreams
import testlib


def scratch(name):
    return os.path.join(testlib.work_dir("e2e-bad-weights"), name)


def valid_weights(weight_format, case):
    """Random weights for the compiled aidreams260k that tfm-run accepts,
    written for one case (CTest runs cases in parallel); returns the path
    of the file (for safetensors, the file in the folder written)."""
    model = aidreams.model_dir()
    out = scratch(case + (".gguf" if weight_format == "gguf" else "-safetensors"))
    testlib.check_run([testlib.bin("tfm-weights"), "--model", model, "--format", weight_format,
                       "-o", out, "--seed", "5"])
    path = out if weight_format == "gguf" else os.path.join(out, "model.safetensors")
    testlib.check_run([testlib.bin("tfm-run"), "--model", model, "--weights", path,
                       "--tokenizer", aidreams.tokenizer(), "-p", "hello", "-n", "2",
                       "--threads", "1"])
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(name, data):
    path = scratch(name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def expect_refusal(path, mentions, what):
    result = aidreams.tfm_run("-p", "hello", "-n", "2", weights=path)
    testlib.assert_clean_failure(result, [path, *mentions], what)


# safetensors: an 8-byte header length, a JSON header, the data.

def split_safetensors(data):
    (length,) = struct.unpack_from("<Q", data, 0)
    return json.loads(data[8:8 + length]), data[8 + length:]


def join_safetensors(header, body):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + body


def tensors_by_offset(header):
    return sorted((k for k in header if k != "__metadata__"),
                  key=lambda k: header[k]["data_offsets"][0])


def edited_safetensors(name, edit):
    header, body = split_safetensors(read(valid_weights("safetensors", name)))
    edit(header, body)
    return write(name, join_safetensors(header, body))


@testlib.case
def safetensors_header_past_eof():
    data = read(valid_weights("safetensors", "header-past-eof"))
    path = write("header-past-eof.safetensors", struct.pack("<Q", len(data)) + data[8:])
    expect_refusal(path, [f"header length {len(data)}", "runs past the end of the file"],
                   "safetensors header length past the end")


@testlib.case
def safetensors_overlapping_offsets():
    names = []

    def overlap(header, body):
        first, second = tensors_by_offset(header)[:2]
        begin, end = header[second]["data_offsets"]
        start = header[first]["data_offsets"][0] + 4
        header[second]["data_offsets"] = [start, start + end - begin]
        names.extend([first, second])

    path = edited_safetensors("overlap.safetensors", overlap)
    expect_refusal(path, [f'"{names[0]}"', f'"{names[1]}"', "overlap"],
                   "safetensors tensors sharing bytes")


@testlib.case
def safetensors_offsets_out_of_range():
    names = []

    def past_end(header, body):
        last = tensors_by_offset(header)[-1]
        begin, end = header[last]["data_offsets"]
        header[last]["data_offsets"] = [begin + 8, end + 8]
        names.append(last)

    path = edited_safetensors("out-of-range.safetensors", past_end)
    expect_refusal(path, [f'tensor "{names[0]}"', "run past the end of the data"],
                   "safetensors data_offsets out of range")


@testlib.case
def safetensors_unknown_dtype():
    def f17(header, body):
        header["model.norm.weight"]["dtype"] = "F17"

    path = edited_safetensors("dtype.safetensors", f17)
    expect_refusal(path, ['tensor "model.norm.weight"', 'unknown dtype "F17"'],
                   "safetensors unknown dtype")


@testlib.case
def safetensors_missing_tensor():
    def drop(header, body):
        del header["model.layers.1.mlp.up_proj.weight"]

    path = edited_safetensors("missing.safetensors", drop)
    expect_refusal(path, ["'blk.1.ffn_up.weight' is missing",
                          "'model.layers.1.mlp.up_proj.weight'"],
                   "safetensors missing tensor")


@testlib.case
def safetensors_wrong_shape():
    def reshape(header, body):
        (dim,) = header["model.norm.weight"]["shape"]
        header["model.norm.weight"]["shape"] = [2, dim // 2]

    path = edited_safetensors("shape.safetensors", reshape)
    expect_refusal(path, ["'model.norm.weight' (output_norm.weight)", "has shape [2, 32]",
                          "expects [64]"],
                   "safetensors tensor of the wrong shape")


# GGUF: "GGUF", version, counts, metadata, tensor infos, aligned data.

@testlib.case
def gguf_bad_magic():
    data = read(valid_weights("gguf", "magic"))
    path = write("magic.gguf", b"GGML" + data[4:])
    expect_refusal(path, ['bad magic "GGML"', 'magic "GGUF"'], "GGUF with a bad magic")


@testlib.case
def gguf_unsupported_version():
    data = read(valid_weights("gguf", "v2"))
    path = write("v2.gguf", data[:4] + struct.pack("<I", 2) + data[8:])
    expect_refusal(path, ["GGUF version 2", "version 3 only"], "GGUF version 2")


@testlib.case
def gguf_truncated_metadata():
    data = read(valid_weights("gguf", "cut-metadata"))
    cut = data.index(b"general.name") + len("general.name") + 6  # inside its value
    path = write("cut-metadata.gguf", data[:cut])
    expect_refusal(path, ['metadata key "general.name"', "truncated metadata"],
                   "GGUF cut in its metadata")


@testlib.case
def gguf_truncated_tensor_data():
    data = read(valid_weights("gguf", "cut-data"))
    # The last tensor, output_norm.weight (64 f32), loses its end.
    path = write("cut-data.gguf", data[:-100])
    expect_refusal(path, ['tensor "output_norm.weight"', "truncated tensor data"],
                   "GGUF cut in its tensor data")


@testlib.case
def gguf_quantized_tensor():
    data = bytearray(read(valid_weights("gguf", "q8_0")))
    name = b"token_embd.weight"
    at = data.index(name) + len(name)
    (n_dims,) = struct.unpack_from("<I", data, at)
    # GGML_TYPE_Q5_0: a block format tfm does not read (rows of 64 hold its
    # blocks of 32, so the file itself is well formed).
    struct.pack_into("<I", data, at + 4 + 8 * n_dims, 6)
    path = write("q5_0.gguf", bytes(data))
    expect_refusal(path, ["tensor 'token_embd.weight' is q5_0",
                          "compiled to read it as f32", "tfm reads f32, f16, bf16, q8_0"],
                   "GGUF with a tensor type tfm does not read")


@testlib.case
def pytorch_zip():
    path = scratch("pytorch_model.bin")
    torch.save({"model.norm.weight": torch.ones(64)}, path)
    expect_refusal(path, ["PyTorch pickle", "Convert it to safetensors"],
                   "PyTorch zip checkpoint")


@testlib.case
def pytorch_legacy_pickle():
    path = scratch("legacy.pt")
    torch.save({"model.norm.weight": torch.ones(64)}, path, _use_new_zipfile_serialization=False)
    expect_refusal(path, ["PyTorch pickle", "safetensors"], "legacy PyTorch pickle")


if __name__ == "__main__":
    testlib.run_case(__doc__)
