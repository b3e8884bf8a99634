"""tfm-run on downloaded-style models, each holding a random-weight GPT-2
Small with the real GPT-2 tokenizer, one case each:
  hf    HuggingFaceFolder: a Hugging Face folder (config.json,
        model.safetensors, vocab.json + merges.txt)
  gguf  GgufFile: one .gguf (tfm-weights --vocab: llama.cpp's GPT-2
        vocabulary, hyperparameters and tensors in one file)

Checks, each against the independent float64 oracle (tests/reference) reading
the model's own weight file:
  --tokenize      the ids Hugging Face's GPT-2 tokenizer gives (gpt-2.out)
  --logits        every prompt position within 1e-4 relative error
  --perplexity    llama-perplexity's chunked estimate from the oracle's logits
  generation      greedy ids equal the oracle's argmax continuation
and that --model-dir compiles once and reuses the cached library after. For
the GGUF also: the config derived from its metadata compiles to the same
config (and hash) as the JSON it was made from, and a vocabulary-only GGUF
is refused naming the file and the missing tensor.

usage: test_model_dir.py hf|gguf   (environment as in the top-level CMakeLists.txt)
       test_model_dir.py --list
"""

import json
import math
import os
import shutil
import sys
import unittest

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "reference"))

import gpt2_oracle  # noqa: E402
import testlib  # noqa: E402
import weight_files  # noqa: E402

CONFIG = os.path.join(os.path.dirname(HERE), "reference", "configs", "gpt2-small-shape.json")
TOLERANCE = 1e-4

# Our own words, long enough for two 64-token perplexity chunks.
TEXT = (
    "The lighthouse keeper wrote down the weather every morning at six. On calm days the sea "
    "was a sheet of grey glass, and the gulls sat on the rocks without a sound. On rough days "
    "the spray reached the lamp room, and he counted the seconds between the waves to guess "
    "how long the storm would last. Nobody read his notebooks, but he kept them in order on a "
    "shelf by the stairs, one for every year since he arrived. When the ship from the mainland "
    "brought flour, oil and letters, he gave the captain a cup of tea and asked about the "
    "harbour, the market and the price of rope. Then the ship left, and the island was quiet "
    "again until the next storm came in from the west.\n")


def relative_error(ours, ref):
    return float(np.max(np.abs(ours - ref)) / np.max(np.abs(ref)))


def compiled_reference():
    """CONFIG compiled by tfmc: the manifest tfm-weights takes the tensor list
    from (one folder for both classes; compile_model locks it)."""
    return testlib.compile_model(CONFIG, os.path.join(testlib.work_dir("e2e/model-dir"),
                                                      "compiled"))


class ModelDirChecks:
    """The checks every --model-dir source passes. A subclass's setUpClass
    sets `model` (what --model-dir gets), `cache` (its own --cache-dir,
    emptied), `work` (scratch) and `oracle` (built from the model's weights)."""

    @classmethod
    def tearDownClass(cls):
        testlib.discard(cls.model)  # random weights, written again by every run

    def tfm_run(self, *args):
        return testlib.check_run([testlib.bin("tfm-run"), "--model-dir", self.model,
                                  "--cache-dir", self.cache, "--threads", "2", *args])

    def tokenize(self, *prompt_args):
        return json.loads(self.tfm_run("--tokenize", *prompt_args))

    def test_tokenize_gives_hugging_face_ids(self):
        self.assertEqual(self.tokenize("-p", "Hello world"), [15496, 995])
        self.assertEqual(self.tokenize("-p", " Hello, world!"), [18435, 11, 995, 0])

    def test_logits_of_every_prompt_position(self):
        prompt = "The lighthouse keeper wrote down the weather"
        ids = self.tokenize("-p", prompt)
        path = os.path.join(self.work, "logits.npy")
        self.tfm_run("--logits", path, "-p", prompt)
        ours = np.load(path)
        self.assertEqual(ours.dtype, np.float32)
        self.assertEqual(ours.shape, (len(ids), 50257))
        reference = self.oracle.logits(ids).numpy()
        for row in range(len(ids)):
            self.assertLessEqual(relative_error(ours[row].astype(np.float64), reference[row]),
                                 TOLERANCE, f"position {row}")

    def test_perplexity_matches_the_oracle(self):
        path = os.path.join(self.work, "text.txt")
        with open(path, "w") as f:
            f.write(TEXT)
        ids = self.tokenize("-f", path)
        chunk = 64
        self.assertGreaterEqual(len(ids), 2 * chunk)
        nll = []
        for start in range(0, len(ids) - chunk + 1, chunk):
            piece = ids[start:start + chunk]
            log_probs = torch.log_softmax(self.oracle.logits(piece), dim=-1)
            nll += [-log_probs[j, piece[j + 1]].item() for j in range(chunk // 2, chunk - 1)]
        expected = math.exp(sum(nll) / len(nll))
        out = self.tfm_run("--perplexity", path, "-c", str(chunk))
        final = [line for line in out.splitlines() if line.startswith("Final estimate: PPL = ")]
        self.assertEqual(len(final), 1, out)
        ours = float(final[0].split("=")[1].split()[0])
        self.assertAlmostEqual(ours / expected, 1.0, delta=1e-3,
                               msg=f"perplexity {ours}, oracle {expected}")

    def test_greedy_generation_follows_the_oracle(self):
        out = self.tfm_run("-p", "On calm days the sea", "-n", "6", "--temp", "0", "--ids",
                           "--ignore-eos")
        ids = json.loads(out.strip().splitlines()[-1])
        prompt = self.tokenize("-p", "On calm days the sea")
        self.assertEqual(ids[:len(prompt)], prompt)
        expected = list(prompt)
        for _ in range(6):
            expected.append(int(self.oracle.logits(expected)[-1].argmax()))
        self.assertEqual(ids, expected)

    def test_compiles_once_then_reuses_the_cache(self):
        self.tokenize("-p", "a")
        self.tokenize("-p", "b")
        compiled = [d for d in os.listdir(self.cache) if d not in ("configs", "locks")]
        self.assertEqual(len(compiled), 1, compiled)
        self.assertTrue(os.path.exists(os.path.join(self.cache, compiled[0], "manifest.json")))


@testlib.case(name="hf")
class HuggingFaceFolder(ModelDirChecks, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        encoder = testlib.shared_path("models/gpt2-tokenizer/encoder.json")
        vocab_bpe = testlib.shared_path("models/gpt2-tokenizer/vocab.bpe")
        work = testlib.work_dir("e2e/model-dir")
        cls.model, cls.work = os.path.join(work, "gpt2-random"), work
        cls.cache = os.path.join(work, "cache")
        shutil.rmtree(cls.cache, ignore_errors=True)
        os.makedirs(cls.model, exist_ok=True)
        with open(CONFIG) as f:
            config = json.load(f)
        del config["name"]  # a downloaded config.json has none: the folder names the model
        with open(os.path.join(cls.model, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
        # Hugging Face's vocab.json + merges.txt are OpenAI's files under new names.
        shutil.copyfile(encoder, os.path.join(cls.model, "vocab.json"))
        shutil.copyfile(vocab_bpe, os.path.join(cls.model, "merges.txt"))
        testlib.check_run([testlib.bin("tfm-weights"), "--model", compiled_reference(),
                           "--format", "safetensors", "--seed", "7", "-o", cls.model])
        cls.oracle = gpt2_oracle.Gpt2Oracle(
            gpt2_oracle.load_config(CONFIG),
            weight_files.read_safetensors(os.path.join(cls.model, "model.safetensors")))


@testlib.case(name="gguf")
class GgufFile(ModelDirChecks, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        vocab = testlib.shared_path("models/gguf-vocab/ggml-vocab-gpt-2.gguf")
        work = testlib.work_dir("e2e/model-dir-gguf")
        cls.cache, cls.work = os.path.join(work, "cache"), work
        shutil.rmtree(cls.cache, ignore_errors=True)
        with open(CONFIG) as f:
            name = json.load(f)["name"]
        # --model-dir names the model after the file: the config's own name.
        cls.model = os.path.join(work, name + ".gguf")
        cls.reference = compiled_reference()
        testlib.check_run([testlib.bin("tfm-weights"), "--model", cls.reference, "--format",
                           "gguf", "--vocab", vocab, "--seed", "7", "-o", cls.model])
        cls.oracle = gpt2_oracle.Gpt2Oracle(
            gpt2_oracle.load_config(CONFIG),
            gpt2_oracle.hf_names_from_gguf(weight_files.read_gguf(cls.model)[1]))

    def test_derived_config_compiles_to_the_same_model(self):
        self.tokenize("-p", "a")
        compiled = [d for d in os.listdir(self.cache) if d not in ("configs", "locks")]
        self.assertEqual(len(compiled), 1, compiled)
        with open(os.path.join(self.cache, compiled[0], "manifest.json")) as f:
            ours = json.load(f)
        with open(os.path.join(self.reference, "manifest.json")) as f:
            reference = json.load(f)
        self.assertEqual(ours["config"], reference["config"])
        self.assertEqual(ours["build_hash"], reference["build_hash"])

    def test_activations_reach_the_compile_and_its_cache_key(self):
        """--activations bf16 on a bf16 file compiles a library of its own,
        whose products take bf16 inputs, within their stated bound of the
        oracle (tests/reference/CMakeLists.txt) and further from it than an
        exact run."""
        vocab = testlib.shared_path("models/gguf-vocab/ggml-vocab-gpt-2.gguf")
        folder = os.path.join(self.work, "bf16")
        os.makedirs(folder, exist_ok=True)
        self.addCleanup(testlib.discard, folder)
        model = os.path.join(folder, os.path.basename(self.model))
        testlib.check_run([testlib.bin("tfm-weights"), "--model", self.reference, "--format",
                           "gguf", "--dtype", "bf16", "--vocab", vocab, "--seed", "7", "-o",
                           model])
        cache = os.path.join(self.work, "cache-bf16")
        shutil.rmtree(cache, ignore_errors=True)

        def tfm_run(*args):
            return testlib.check_run([testlib.bin("tfm-run"), "--model-dir", model,
                                      "--cache-dir", cache, "--threads", "2", *args])

        prompt = "The lighthouse keeper wrote down the weather"
        ids = json.loads(tfm_run("--tokenize", "-p", prompt))
        path = os.path.join(folder, "logits.npy")
        tfm_run("--activations", "bf16", "--logits", path, "-p", prompt)
        products = set()
        for compiled in os.listdir(cache):
            if compiled not in ("configs", "locks"):
                with open(os.path.join(cache, compiled, "manifest.json")) as f:
                    products |= {k["products"] for k in json.load(f)["kernels"]}
        self.assertEqual(products, {"f32", "bf16"}, "one library per --activations")
        oracle = gpt2_oracle.Gpt2Oracle(
            gpt2_oracle.load_config(CONFIG),
            gpt2_oracle.hf_names_from_gguf(weight_files.read_gguf(model)[1]))
        reference = oracle.logits(ids).numpy()
        ours = np.load(path)
        worst = max(relative_error(ours[row].astype(np.float64), reference[row])
                    for row in range(len(ids)))
        self.assertLessEqual(worst, 5e-3)
        self.assertGreater(worst, TOLERANCE, "the inputs were not rounded")

    def test_vocabulary_only_file_is_refused(self):
        # llama.cpp's MPT vocabulary file: an architecture tfmc builds, but
        # no model in it.
        mpt = testlib.shared_path("models/gguf-vocab/ggml-vocab-mpt.gguf")
        result = testlib.run([testlib.bin("tfm-run"), "--model-dir", mpt, "--cache-dir",
                              os.path.join(self.work, "cache-refused"), "--tokenize", "-p", "a"])
        testlib.assert_clean_failure(result, [mpt, "'token_embd.weight'", "missing"],
                                     "tfm-run")


if __name__ == "__main__":
    testlib.run_case(__doc__)
