"""SentencePiece Unigram models (T5's and CamemBERT's kind) encode as
sentencepiece itself does. Debian's python3-sentencepiece trains two small
models on tests/data/unigram-corpus.txt and is the reference encoder:
  nmt_nfkc       T5's layout (pad 0, EOS 1, unknown 2, no BOS) and normalizer,
                 a precompiled charsmap of NFKC rules
  identity_bytes no normalization rules, byte fallback
Each encodes 1,000 texts (the corpus' sentences, cut, recased, spaced out,
and mixed with characters from other scripts, controls and emoji), read by
tfm-run --tokenize from the .model file, from a GGUF holding it as
llama.cpp's converter writes T5's (tokenizer.ggml.model "t5", the charsmap
as bytes), and from a tokenizer.json holding it as Hugging Face's converter
writes it (convert_slow_tokenizer.py's SpmConverter: a Unigram model, the
charsmap in base64, Metaspace); every id must be sentencepiece's.
Texts hold no control piece's text ("<unk>", "</s>"): tfm cuts those out as
special tokens, as llama.cpp and Hugging Face do, sentencepiece does not.

usage: test_unigram_tokenizer.py CASE   (environment as in the top-level CMakeLists.txt)
       test_unigram_tokenizer.py --list
"""

import base64
import concurrent.futures
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import testlib  # noqa: E402
from gguf_edit import GgufEdit  # noqa: E402

CORPUS = "tests/data/unigram-corpus.txt"
TEXTS = 1000

# Characters the mutations insert: accents as combining marks, full-width and
# compatibility forms (NFKC rewrites them), other scripts, emoji, controls,
# zero-width and odd spaces.
EXTRA_CHARS = ("e\u0301", "\uff21", "\uff41", "\u2163", "\u00bd", "\ufb01", "\u3000", "\u00a0",
               "\u200b", "\u200d", "\t", "\n", "\r", "\x07", "\x7f", "\u0416", "\u03a9",
               "\u05d0", "\u0627", "\u0915", "\u6f22", "\u30ab", "\uff76", "\uac00",
               "\U0001f600", "\U0001f44d\U0001f3fd", "\u00df", "\u0130", "\u2028")


def sentencepiece():
    """The reference encoder, which tools/install-deps.sh installs: missing,
    it fails under CI and skips elsewhere."""
    try:
        import sentencepiece as spm
        return spm
    except ImportError:
        missing = "no python3-sentencepiece (the reference encoder; tools/install-deps.sh)"
    if os.environ.get("CI") == "true":
        print(f"FAIL: {missing}", flush=True)
        sys.exit(1)
    print(f"SKIP: {missing}", flush=True)
    sys.exit(testlib.SKIP_EXIT_CODE)


def train(spm, case, out_dir):
    prefix = os.path.join(out_dir, case)
    options = dict(input=testlib.source_path(CORPUS), model_prefix=prefix, vocab_size=300,
                   model_type="unigram",
                   hard_vocab_limit=False, minloglevel=2, num_threads=1)
    if case == "nmt_nfkc":
        options.update(pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
    else:
        # Byte fallback's 256 pieces come beside the learnt ones.
        options.update(normalization_rule_name="identity", byte_fallback=True, vocab_size=700)
    spm.SentencePieceTrainer.train(**options)
    return prefix + ".model"


def protobuf_fields(data):
    """(field number, value) of a protobuf message: varints as ints,
    length-delimited fields as bytes (sentencepiece_model.proto has no
    others where this reads)."""
    pos = 0

    def varint():
        nonlocal pos
        value = shift = 0
        while True:
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while pos < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            yield number, varint()
        elif wire == 2:
            size = varint()
            yield number, data[pos:pos + size]
            pos += size
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"protobuf wire type {wire}")


def write_gguf(reference, path):
    """The model as llama.cpp's convert_hf_to_gguf.py writes T5's tokenizer."""
    spec = dict(protobuf_fields(dict(protobuf_fields(reference.serialized_model_proto()))[3]))
    kinds = []
    for i in range(reference.get_piece_size()):
        kinds.append(2 if reference.is_unknown(i) else 3 if reference.is_control(i)
                     else 5 if reference.is_unused(i) else 6 if reference.is_byte(i) else 1)
    metadata = {
        "general.architecture": (GgufEdit.STRING, "t5"),
        "tokenizer.ggml.model": (GgufEdit.STRING, "t5"),
        "tokenizer.ggml.tokens": (9, (GgufEdit.STRING, [reference.id_to_piece(i) for i in
                                                        range(reference.get_piece_size())])),
        "tokenizer.ggml.scores": (9, (GgufEdit.F32, [reference.get_score(i) for i in
                                                     range(reference.get_piece_size())])),
        "tokenizer.ggml.token_type": (9, (GgufEdit.I32, kinds)),
        "tokenizer.ggml.add_space_prefix": (7, bool(spec.get(3, 1))),
        "tokenizer.ggml.remove_extra_whitespaces": (7, bool(spec.get(4, 1))),
        "tokenizer.ggml.precompiled_charsmap": (9, (0, list(spec.get(2, b"")))),
        "tokenizer.ggml.unknown_token_id": (GgufEdit.U32, reference.unk_id()),
    }
    if reference.eos_id() >= 0:
        metadata["tokenizer.ggml.eos_token_id"] = (GgufEdit.U32, reference.eos_id())
    GgufEdit(metadata, [], 32, b"").write(path)
    return path


def write_tokenizer_json(reference, path):
    """The model as Hugging Face's SpmConverter converts it: control pieces
    as special added tokens, byte fallback where the model has byte pieces,
    the normalizer's charsmap, a right Strip and runs of spaces replaced,
    and Metaspace prepending its "▁". (T5Converter's post_processor, "$A
    </s>", is left out: tfm refuses an EOS without a BOS before it.)"""
    spec = dict(protobuf_fields(dict(protobuf_fields(reference.serialized_model_proto()))[3]))
    size = reference.get_piece_size()
    added = [{"id": i, "content": reference.id_to_piece(i), "single_word": False,
              "lstrip": False, "rstrip": False, "normalized": False,
              "special": bool(reference.is_control(i))}
             for i in range(size) if reference.is_control(i)]
    steps = [{"type": "Strip", "left": False, "right": True},
             {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"}]
    charsmap = spec.get(2, b"")
    if charsmap:
        steps.insert(0, {"type": "Precompiled",
                         "precompiled_charsmap": base64.b64encode(charsmap).decode()})
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": steps},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                          "prepend_scheme": "always", "split": True},
        "post_processor": None,
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                    "split": True},
        "model": {"type": "Unigram", "unk_id": reference.unk_id(),
                  "vocab": [[reference.id_to_piece(i), reference.get_score(i)]
                            for i in range(size)],
                  "byte_fallback": any(reference.is_byte(i) for i in range(size))},
    }
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    return path


def texts(rng):
    with open(testlib.source_path(CORPUS), encoding="utf-8") as f:
        sentences = [line.strip() for line in f if line.strip()]
    out = list(sentences)
    while len(out) < TEXTS:
        text = rng.choice(sentences)
        start = rng.randrange(len(text))
        text = text[start:start + rng.randrange(1, 80)]
        for _ in range(rng.randrange(4)):
            at = rng.randrange(len(text) + 1)
            insert = rng.choice(EXTRA_CHARS + (" " * rng.randrange(1, 4),))
            text = text[:at] + insert + text[at:]
        if rng.random() < 0.2:
            text = text.upper()
        if rng.random() < 0.2:
            text = "  " + text + " \t"
        out.append(text)
    return out


def tfm_ids(model, text):
    return json.loads(testlib.check_run([testlib.bin("tfm-run"), "--tokenize", "--tokenizer",
                                         model, "-p=" + text]))


def check(case):
    spm = sentencepiece()
    out_dir = testlib.work_dir(f"e2e-unigram/{case}")
    os.makedirs(out_dir, exist_ok=True)
    model = train(spm, case, out_dir)
    reference = spm.SentencePieceProcessor(model_file=model)
    if case == "nmt_nfkc":
        assert reference.bos_id() < 0, "T5's layout has no BOS"
    gguf = write_gguf(reference, os.path.join(out_dir, case + ".gguf"))
    tokenizer_json = write_tokenizer_json(
        reference, os.path.join(out_dir, case + "-hf", "tokenizer.json"))
    rng = random.Random(2026)
    cases = [t for t in texts(rng) if "\0" not in t]
    # tfm-run --tokenize starts with BOS where a tokenizer.model has one
    # (the file says nothing of adding it; Llama's add it); llama.cpp's T5
    # GGUFs add none.
    bos = [reference.bos_id()] if reference.bos_id() >= 0 else []
    for tokenizer, first in ((model, bos), (gguf, []), (tokenizer_json, [])):
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            got = list(pool.map(lambda t: tfm_ids(tokenizer, t), cases))
        wrong = [(t, first + reference.encode(t), g) for t, g in zip(cases, got)
                 if g != first + reference.encode(t)]
        for text, want, have in wrong[:10]:
            print(f"{text!r}: sentencepiece {want}, tfm {have}")
        assert not wrong, f"{tokenizer}: {len(wrong)} of {len(cases)} texts encode differently"
        print(f"{os.path.basename(tokenizer)}: {len(cases)} texts, every id as sentencepiece's")


@testlib.case
def nmt_nfkc():
    check("nmt_nfkc")


@testlib.case
def identity_bytes():
    check("identity_bytes")


if __name__ == "__main__":
    testlib.run_case(__doc__)
