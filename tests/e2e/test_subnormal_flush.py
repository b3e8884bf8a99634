"""The kernels run with subnormal floats flushed to zero (the generated
driver sets x86's FTZ and DAZ, AArch64's FZ, around every call: an x86
instruction with a subnormal operand takes a microcode assist, which made
a 4-token prefill of a random-weight Llama 2 7B six times slower). The
effect is observable: aidreams260k with every element of its final norm's
weight set to 1e-39, a subnormal f32, has final hidden states of that size
with the norm read as it is, and its logits (sums of 64 of them times the
embeddings) are subnormal but not zero. With subnormal inputs read as zero
every logit is exactly 0, in prefill and in decode, whose output head runs
on Halide's worker threads. The unchanged weights give logits that are not
zero. Runs on any CPU: the flush is the driver's, on every target."""

import array
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib  # noqa: E402

SUBNORMAL = 1e-39
NORM = "model.norm.weight"


def with_subnormal_norm(path, out):
    """A copy of the safetensors file `path` with NORM's elements SUBNORMAL."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    header_bytes = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + header_bytes])
    entry = header[NORM]
    assert entry["dtype"] == "F32", f"{NORM} is {entry['dtype']}, expected F32"
    start, end = (8 + header_bytes + o for o in entry["data_offsets"])
    count = (end - start) // 4
    data[start:end] = struct.pack(f"<{count}f", *([SUBNORMAL] * count))
    with open(out, "wb") as f:
        f.write(data)
    return out


def read_npy_f32(path):
    """The values of a little-endian float32 .npy file, flattened."""
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[:6] == b"\x93NUMPY", f"{path}: not a .npy file"
    header_len = struct.unpack("<H", raw[8:10])[0]
    header = raw[10:10 + header_len].decode("latin1")
    assert "'<f4'" in header, f"{path}: {header}"
    values = array.array("f")
    values.frombytes(raw[10 + header_len:])
    return values


def logits(model, weights, out):
    # Two tokens through prefill, then one decode step: rows from both.
    testlib.check_run([testlib.bin("tfm-logits"), "--model", model, "--weights", weights,
                       "--tokens", "1,100,200", "--prefill", "2", "--threads", "2",
                       "--out", out])
    return read_npy_f32(out)


def main():
    work = testlib.work_dir("e2e-subnormal-flush")
    config = testlib.source_path("configs/aidreams260k.json")
    model = testlib.compile_model(config, os.path.join(work, "model"),
                                  ["--kernel-cache", "none"])
    weights_dir = os.path.join(work, "weights")
    testlib.check_run([testlib.bin("tfm-weights"), config, "--format", "safetensors",
                       "-o", weights_dir])
    plain = os.path.join(weights_dir, "model.safetensors")
    subnormal = with_subnormal_norm(plain, os.path.join(work, "subnormal-norm.safetensors"))

    normal = logits(model, plain, os.path.join(work, "plain.npy"))
    assert any(v != 0.0 for v in normal), "the unchanged weights gave all-zero logits"
    flushed = logits(model, subnormal, os.path.join(work, "subnormal.npy"))
    nonzero = [v for v in flushed if v != 0.0]
    assert not nonzero, (f"{len(nonzero)} of {len(flushed)} logits are not zero with a subnormal "
                         f"final norm (e.g. {nonzero[:3]}): subnormals were not flushed")
    print(f"ok: {len(flushed)} logits, all zero")
    return 0


if __name__ == "__main__":
    sys.exit(main())
