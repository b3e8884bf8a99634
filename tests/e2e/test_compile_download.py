"""tfmc compiles what the user downloaded (issue 48): `tfmc model.gguf` and
`tfmc hf-folder/` derive the config from the file's metadata or
config.json, read every tensor in its stored type, and record the weight
and tokenizer files in the manifest; `--emit exe --bundle` copies them
beside an executable that needs nothing else.

  gguf        tfmc x.gguf: its library's logits equal tfm-run --model-dir's
              on the same file, and `tfm-run -m OUT` needs no other flag
  hf_folder   the same for a Hugging Face folder (no tokenizer in it: the
              manifest records none and tfm-run takes --tokenizer)
  exe_bundle  the executable and its GGUF, moved to a folder of their own,
              generate with -p alone, as tfm-run on the GGUF does; ldd lists
              glibc only; --help leaves out the options it refuses
  bundle_needs_a_download  --bundle with a config is refused by name

The model: aidreams260k's shapes with llama.cpp's 32000-token SentencePiece
vocabulary, random weights written by tfm-weights.

One case per script argument."""

import json
import os
import shutil

import numpy as np

import aidreams
import testlib

PROMPT = "Once upon a time"


def work(case):
    path = testlib.work_dir(f"e2e-compile-download/{case}")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def env(scratch):
    return dict(os.environ, TFM_CACHE_DIR=os.path.join(scratch, "cache"))


def tiny_config(scratch):
    with open(aidreams.config()) as f:
        config = json.load(f)
    config.update(name="tiny32k", vocab_size=32000)
    path = os.path.join(scratch, "tiny32k.json")
    with open(path, "w") as f:
        json.dump(config, f)
    return path


def tiny_gguf(scratch):
    path = os.path.join(scratch, "tiny32k.gguf")
    testlib.check_run([testlib.bin("tfm-weights"), tiny_config(scratch), "--format", "gguf",
                       "--vocab", testlib.shared_path("models/gguf-vocab/ggml-vocab-llama-spm.gguf"),
                       "-o", path])
    return path


def logits(scratch, name, *model_args):
    out = os.path.join(scratch, name + ".npy")
    testlib.check_run([testlib.bin("tfm-run"), *model_args, "-p", PROMPT, "--logits", out, "-t",
                       "1"], env=env(scratch))
    return np.load(out)


def greedy_ids(command, scratch, cwd=None):
    out = testlib.check_run([*command, "-p", PROMPT, "-n", "12", "--temp", "0", "--ids", "-t",
                             "1"], env=env(scratch), cwd=cwd)
    return json.loads(out.rstrip("\n").rpartition("\n")[2])


def compile_download(scratch, source, *args):
    out = os.path.join(scratch, "compiled")
    testlib.check_run([testlib.bin("tfmc"), source, "-o", out, *args], env=env(scratch))
    with open(os.path.join(out, "manifest.json")) as f:
        return out, json.load(f)


@testlib.case
def gguf():
    scratch = work("gguf")
    source = tiny_gguf(scratch)
    out, manifest = compile_download(scratch, source)
    assert manifest["files"] == {"weights": source, "tokenizer": source}, manifest.get("files")
    ours = logits(scratch, "tfmc", "-m", out)  # no --weights, no --tokenizer
    theirs = logits(scratch, "model-dir", "--model-dir", source)
    assert np.array_equal(ours, theirs), f"differ by {np.max(np.abs(ours - theirs))}"
    print(f"ok: tfmc x.gguf: {ours.shape} logits equal tfm-run --model-dir's, files recorded")


@testlib.case
def hf_folder():
    scratch = work("hf")
    folder = os.path.join(scratch, "hf")
    testlib.check_run([testlib.bin("tfm-weights"), aidreams.config(), "--format", "safetensors",
                       "--seed", "3", "-o", folder])
    shutil.copy(aidreams.config(), os.path.join(folder, "config.json"))
    out, manifest = compile_download(scratch, folder)
    weights = os.path.join(folder, "model.safetensors")
    assert manifest["files"] == {"weights": weights, "tokenizer": ""}, manifest.get("files")
    tokenizer = ["--tokenizer", aidreams.tokenizer()]
    ours = logits(scratch, "tfmc", "-m", out, *tokenizer)
    theirs = logits(scratch, "model-dir", "--model-dir", folder, *tokenizer)
    assert np.array_equal(ours, theirs), f"differ by {np.max(np.abs(ours - theirs))}"
    result = testlib.run([testlib.bin("tfm-run"), "-m", out, "-p", PROMPT], env=env(scratch))
    testlib.assert_clean_failure(result, ["no tokenizer"], "no tokenizer recorded or given")
    print(f"ok: tfmc hf-folder/: {ours.shape} logits equal tfm-run --model-dir's")


@testlib.case
def exe_bundle():
    scratch = work("exe")
    source = tiny_gguf(scratch)
    out, manifest = compile_download(scratch, source, "--emit", "exe", "--bundle")
    assert manifest["files"] == {"weights": "tiny32k.gguf", "tokenizer": "tiny32k.gguf"}, \
        manifest.get("files")
    alone = os.path.join(scratch, "alone")
    os.makedirs(alone)
    for name in ("tiny32k", "tiny32k.gguf"):
        shutil.copy2(os.path.join(out, name), alone)
    program = os.path.join(alone, "tiny32k")
    testlib.assert_needs_only_glibc(program)
    ids = greedy_ids([program], scratch, cwd=scratch)
    expected = greedy_ids([testlib.bin("tfm-run"), "-m", source], scratch)
    assert ids == expected, f"the bundled program's ids {ids}, tfm-run's {expected}"
    help_text = testlib.check_run([program, "--help"])
    refused = [o for o in ("--model-dir", "--model=", "--target", "--cache-dir") if o in help_text]
    assert not refused, f"--help lists options the program refuses: {refused}"
    print(f"ok: {os.listdir(alone)} generate {len(ids)} ids as tfm-run on the GGUF")


@testlib.case
def bundle_needs_a_download():
    scratch = work("bundle-config")
    result = testlib.run([testlib.bin("tfmc"), aidreams.config(), "--emit", "exe", "--bundle",
                          "-o", os.path.join(scratch, "out")], env=env(scratch))
    testlib.assert_clean_failure(result, ["--bundle", "a .gguf or a Hugging Face folder"],
                                 "--bundle with a config")
    print("ok: " + result[2].strip().splitlines()[-1])


if __name__ == "__main__":
    testlib.run_case(__doc__)
