#!/usr/bin/python3
"""Logits of tfm-run and llama.cpp on the same GGUF file, side by side.

    tools/parity_vs_llamacpp.py tests/reference/configs/bloom-h6x32-alibi.json \\
        tests/reference/configs/falcon-gqa-two-norms.json /tmp/llama3-small.gguf

For each config: tfm-weights writes a random-weight f32 GGUF of it carrying
a llama.cpp vocabulary (--vocab, GPT-2's by default; the config's vocab_size
becomes the vocabulary's, so that llama.cpp's embedding and ours agree);
`tfm-run --model-dir FILE.gguf` derives the config back from the file's
metadata, compiles it, tokenizes --text and writes the logits of every
position; llama_logits (../shared/peers) computes the same positions with
llama.cpp. The table gives the largest relative error of any position
(max |ours - llama.cpp| / max |llama.cpp| per row) and how many positions
agree on the most likely token. llama.cpp stores the KV cache in f16 and
computes GELU through an f16 table, so it differs from the float64 oracles
by about 1e-3 (--f32-cache: llama.cpp's f32 cache, about 1e-6 on f32 files
without GELU); it is the independent check that the file means to llama.cpp
what it means to tfm. A .gguf given instead of a config is run as it is
(one written by ../shared/peers/make_random_gguf.py, say). An encoder's
file (arch bert) is compared by its embeddings instead: `tfm-run
--embeddings` against `llama_encdec embed` (f32 cache), every token's hidden
state and the mean and cls pooled ones (--vocab ggml-vocab-bert-bge.gguf for
a BERT config). An encoder-decoder's (arch t5) is compared by the
decoder's logits after encoding --text as the source: `tfm-run --source
--logits` against `llama_encdec t5`, the decoder's tokens its start token
and --decoder-text's; llama.cpp does not scale a tied head by
d_model^-0.5 as T5 does, so its logits are scaled here before they are
compared. Exits 1 when an error exceeds --tolerance.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.environ.get("PEERS", os.path.join(os.environ.get("TMPDIR", "/tmp"), "peers"))
SHARED = os.environ.get("TFM_SHARED_DIR", os.path.join(os.path.dirname(ROOT), "shared"))
TEXT = ("The lighthouse keeper wrote down the weather every morning at six. On calm days the "
        "sea was a sheet of grey glass, and the gulls sat on the rocks without a sound.")


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"parity: {' '.join(cmd)} failed:\n{done.stderr}")
    return done.stdout


def vocabulary_size(vocab):
    """The token count of a vocabulary GGUF."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
    import weight_files  # noqa: E402 (the tests' GGUF reader, in Python)
    metadata, _ = weight_files.read_gguf(vocab)
    return len(metadata["tokenizer.ggml.tokens"])


def logits_of_hidden(gguf, hidden):
    """The logits llama.cpp's graph makes of its normed last hidden states:
    times the head (output.weight, else the tied token embedding, dequantized
    by the tests' own reader), then Gemma 2's final soft cap if the file has
    one."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
    import weight_files  # noqa: E402
    metadata, tensors = weight_files.read_gguf(gguf)
    head = np.asarray(tensors.get("output.weight", tensors["token_embd.weight"]), dtype=np.float64)
    logits = hidden @ head.T
    cap = metadata.get(f"{metadata['general.architecture']}.final_logit_softcapping")
    return np.tanh(logits / cap) * cap if cap else logits


def architecture(gguf):
    """The file's general.architecture, its embedding width and whether its
    head is tied (no output.weight)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
    import weight_files  # noqa: E402
    metadata, tensors = weight_files.read_gguf(gguf)
    arch = metadata["general.architecture"]
    return arch, metadata[f"{arch}.embedding_length"], "output.weight" not in tensors


def compare_t5(args, name, gguf, tfm_run, width, tied):
    """(label, rows, max relative error, argmax agreement) of the decoder's
    logits after encoding --text."""
    source = json.loads(run(tfm_run + ["--tokenize", "--source", args.text]))
    decoder = json.loads(run(tfm_run + ["--tokenize", "-p", args.decoder_text]))
    ours_path = os.path.join(args.work, name + ".tfm.npy")
    ref_path = os.path.join(args.work, name + ".llama.npy")
    run(tfm_run + ["--logits", ours_path, "--source", args.text, "-p", args.decoder_text])
    run([args.llama_encdec, "t5", gguf, ref_path] + [str(i) for i in source] + ["--"] +
        [str(i) for i in decoder])
    ours, ref = np.load(ours_path).astype(np.float64), np.load(ref_path).astype(np.float64)
    if tied:  # T5 scales the decoder's output by d_model^-0.5 before a tied head
        ref *= width ** -0.5
    if ours.shape != ref.shape:
        sys.exit(f"parity: {name}: tfm's logits {ours.shape}, llama.cpp's {ref.shape}")
    errors = np.abs(ours - ref).max(axis=1) / np.abs(ref).max(axis=1)
    agree = int((ours.argmax(axis=1) == ref.argmax(axis=1)).sum())
    return [(f"{name} ({len(source)} source)", len(ours), float(errors.max()), agree)]


def compare_embeddings(args, name, gguf, tfm_run, ids):
    """Rows of (label, tokens, max relative error, argmax agreement) of an
    encoder's embeddings: every token's, mean- and cls-pooled."""
    rows = []
    for pooling in ("none", "mean", "cls"):
        ours_path = os.path.join(args.work, f"{name}.{pooling}.tfm.npy")
        ref_path = os.path.join(args.work, f"{name}.{pooling}.llama.npy")
        run(tfm_run + ["--embeddings", ours_path, "--pooling", pooling, "-p", args.text])
        run([args.llama_encdec, "embed", gguf, ref_path, pooling] + [str(i) for i in ids])
        ours, ref = np.load(ours_path).astype(np.float64), np.load(ref_path).astype(np.float64)
        ref = ref.reshape(ours.shape) if ref.size == ours.size else ref
        if ours.shape != ref.shape:
            sys.exit(f"parity: {name}: tfm's {pooling} embeddings {ours.shape}, "
                     f"llama.cpp's {ref.shape}")
        errors = np.abs(ours - ref).max(axis=1) / np.abs(ref).max(axis=1)
        agree = int((ours.argmax(axis=1) == ref.argmax(axis=1)).sum())
        rows.append((f"{name} {pooling}", len(ours), float(errors.max()), agree))
    return rows


def write_gguf(args, config_path, tokens):
    """tfm-weights' random-weight GGUF of a config, with --vocab's tokenizer."""
    with open(config_path) as f:
        config = json.load(f)
    name = config.get("name") or os.path.splitext(os.path.basename(config_path))[0]
    config["vocab_size"] = tokens
    for setting in args.set:
        field, _, value = setting.partition("=")
        config[field] = json.loads(value)
    for key in ("bos_token_id", "eos_token_id"):
        config.pop(key, None)  # the vocabulary's own apply
    sized = os.path.join(args.work, name + ".json")
    with open(sized, "w") as f:
        json.dump(config, f, indent=2)
    gguf = os.path.join(args.work, name + ".gguf")
    run([os.path.join(args.bin, "tfm-weights"), sized, "--format", "gguf", "--vocab",
         args.vocab, "--seed", "1", "-o", gguf])
    return name, gguf


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+", metavar="CONFIG")
    parser.add_argument("--vocab", default=os.path.join(SHARED, "models", "gguf-vocab",
                                                        "ggml-vocab-gpt-2.gguf"))
    parser.add_argument("--text", default=TEXT)
    parser.add_argument("--decoder-text", default="Der Leuchtturmwärter schrieb",
                        help="an encoder-decoder's decoder tokens after its start token")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=JSON",
                        help="set a config field in every config (repeatable), e.g. bias=false "
                             "where llama.cpp's graph lacks a variant")
    parser.add_argument("--tolerance", type=float, default=1e-2)
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "parity"))
    parser.add_argument("--llama-logits", default=os.path.join(PEERS, "llama_logits"))
    parser.add_argument("--llama-encdec", default=os.path.join(PEERS, "llama_encdec"))
    parser.add_argument("--f32-cache", action="store_true",
                        help="llama.cpp with an f32 KV cache and no flash attention "
                             "(llama_encdec's normed hidden states times the head), for "
                             "checks tighter than llama_logits' f16 cache allows")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    tokens = vocabulary_size(args.vocab)

    failed = False
    print(f"{'config':32} {'positions':>9} {'max rel err':>12} {'argmax agree':>13}")
    for config_path in args.configs:
        if config_path.endswith(".gguf"):
            # Written by another writer (../shared/peers/make_random_gguf.py).
            gguf = config_path
            name = os.path.splitext(os.path.basename(gguf))[0]
        else:
            name, gguf = write_gguf(args, config_path, tokens)
        tfm_run = [os.path.join(args.bin, "tfm-run"), "--model-dir", gguf, "--cache-dir",
                   os.path.join(args.work, "cache"), "--threads", "2"]
        arch, width, tied = architecture(gguf)
        if arch in ("bert", "t5"):
            rows = (compare_t5(args, name, gguf, tfm_run, width, tied) if arch == "t5" else
                    compare_embeddings(args, name, gguf, tfm_run, json.loads(
                        run(tfm_run + ["--tokenize", "-p", args.text]))))
            for label, count, worst, agree in rows:
                failed |= worst > args.tolerance
                print(f"{label:32} {count:>9} {worst:>12.3e} {agree:>6}/{count:<6}"
                      f"{'' if worst <= args.tolerance else '  over tolerance'}")
            continue
        ids = json.loads(run(tfm_run + ["--tokenize", "-p", args.text]))
        ours_path = os.path.join(args.work, name + ".tfm.npy")
        run(tfm_run + ["--logits", ours_path, "-p", args.text])
        ref_path = os.path.join(args.work, name + ".llama.npy")
        peer = ([args.llama_encdec, "embed", gguf, ref_path, "none"] if args.f32_cache
                else [args.llama_logits, gguf, ref_path])
        done = subprocess.run(peer + [str(i) for i in ids], capture_output=True, text=True)
        if done.returncode != 0:
            failed = True
            reason = [l for l in done.stderr.splitlines() if "error" in l.lower()][-1:]
            print(f"{name:32} llama.cpp refused the file: {' '.join(reason)}")
            continue
        ours, ref = np.load(ours_path).astype(np.float64), np.load(ref_path).astype(np.float64)
        if args.f32_cache:
            ref = logits_of_hidden(gguf, ref)
        if ours.shape != ref.shape:
            sys.exit(f"parity: {name}: tfm's logits {ours.shape}, llama.cpp's {ref.shape}")
        errors = np.abs(ours - ref).max(axis=1) / np.abs(ref).max(axis=1)
        agree = int((ours.argmax(axis=1) == ref.argmax(axis=1)).sum())
        worst = float(errors.max())
        failed |= worst > args.tolerance
        print(f"{name:32} {len(ids):>9} {worst:>12.3e} {agree:>6}/{len(ids):<6}"
              f"{'' if worst <= args.tolerance else '  over tolerance'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
