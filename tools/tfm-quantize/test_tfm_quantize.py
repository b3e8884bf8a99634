"""tfm-quantize: any input format gives the same tensors, each file type the
same tensors tfm-weights writes directly in it (whose values and fallbacks
test_tfm_weights.py checks), llama.cpp's metadata, a GGUF input's tokenizer
carried over; refusals.

usage: test_tfm_quantize.py   (environment as in the top-level CMakeLists.txt's TFM_TEST_ENV)
"""

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import unittest

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTS = os.path.join(ROOT, "tests")
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(TESTS, "reference"))

import testlib  # noqa: E402
import weight_files  # noqa: E402

# Rows of 256 and 512 hold whole blocks of every format.
LLAMA = {"model_type": "llama", "name": "quantize_llama", "hidden_size": 256,
         "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "vocab_size": 64, "max_position_embeddings": 32}
GGML_Q8_0 = 8  # ggml_type
TYPES = ["f16", "bf16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k", "q4_k_m", "q5_k_m"]


def work(name):
    return os.path.join(testlib.work_dir("tfm-quantize"), name)


def write_config(name, config):
    path = work(name + ".json")
    with open(path, "w") as f:
        json.dump(config, f)
    return path


def weights(config_path, out, *args):
    testlib.check_run([testlib.bin("tfm-weights"), config_path, "-o", out, "--seed", "5", *args])
    return out


def quantize(source, out, file_type, *args):
    result = testlib.run([testlib.bin("tfm-quantize"), source, out, "--type", file_type, *args])
    if result[0] != 0:
        raise AssertionError(f"tfm-quantize {source} --type {file_type} failed:\n{result[2]}")
    return out


def same_tensors(test, a_path, b_path):
    _, a, a_types = weight_files.read_gguf(a_path, with_types=True)
    _, b, b_types = weight_files.read_gguf(b_path, with_types=True)
    test.assertEqual(a_types, b_types)
    for name in a:
        np.testing.assert_array_equal(a[name].numpy(), b[name].numpy(), name)


class Quantize(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.config = write_config("llama", LLAMA)
        cls.f32 = weights(cls.config, work("llama-f32.gguf"), "--format", "gguf")

    def test_each_type_gives_what_tfm_weights_writes_in_it(self):
        for file_type in TYPES:
            with self.subTest(type=file_type):
                out = quantize(self.f32, work(f"llama-{file_type}.gguf"), file_type)
                direct = weights(self.config, work(f"direct-{file_type}.gguf"), "--format", "gguf",
                                 "--dtype", file_type)
                same_tensors(self, out, direct)
                metadata, _ = weight_files.read_gguf(out)
                direct_metadata, _ = weight_files.read_gguf(direct)
                del metadata["general.name"], direct_metadata["general.name"]
                self.assertEqual(metadata, direct_metadata)

    def test_every_input_format_gives_the_same_file(self):
        folder = work("llama-hf")
        shutil.rmtree(folder, ignore_errors=True)
        weights(self.config, folder, "--format", "safetensors", "--shards", "2")
        shutil.copy(self.config, os.path.join(folder, "config.json"))
        checkpoint = weights(self.config, work("llama.bin"))
        from_gguf = quantize(self.f32, work("from-gguf.gguf"), "q4_k_m")
        same_tensors(self, quantize(folder, work("from-hf.gguf"), "q4_k_m"), from_gguf)
        same_tensors(self, quantize(checkpoint, work("from-llama2c.gguf"), "q4_k_m",
                                    "--config", self.config), from_gguf)

    def test_a_gguf_input_keeps_its_tokenizer(self):
        vocab = testlib.shared_path_for_test(self, "models/gguf-vocab/ggml-vocab-llama-spm.gguf")
        config = write_config("llama-32k", dict(LLAMA, vocab_size=32000, num_hidden_layers=1))
        source = weights(config, work("llama-32k.gguf"), "--format", "gguf", "--vocab", vocab)
        out = quantize(source, work("llama-32k-q8_0.gguf"), "q8_0")
        metadata, _ = weight_files.read_gguf(out)
        source_metadata, _ = weight_files.read_gguf(source)
        tokenizer = {k: v for k, v in source_metadata.items() if k.startswith("tokenizer.")}
        self.assertIn("tokenizer.ggml.tokens", tokenizer)
        self.assertEqual({k: v for k, v in metadata.items() if k.startswith("tokenizer.")}, tokenizer)
        self.assertEqual(metadata["general.file_type"], 7)

    @unittest.skipIf("address" in os.environ.get("TFM_SANITIZE", ""),
                     "AddressSanitizer's shadow memory alone exceeds any data limit")
    def test_converts_one_tensor_at_a_time(self):
        # 38M parameters: 151 MB as f32, more than the 64 MiB of data
        # (heap and anonymous mappings) tfm-quantize may take here; each
        # tensor is 0.5 MB.
        config = write_config("llama-deep", dict(LLAMA, num_hidden_layers=64))
        source = weights(config, work("llama-deep-f16.gguf"), "--format", "gguf", "--dtype", "f16")
        limit = 64 << 20
        cmd = [testlib.bin("tfm-quantize"), source, work("llama-deep-q8_0.gguf"), "--type", "q8_0"]
        done = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=testlib.DEFAULT_TIMEOUT_S,
                              preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_DATA,
                                                                    (limit, limit)))
        self.assertEqual(done.returncode, 0, f"with {limit >> 20} MiB of data: {done.stderr}")
        _, tensors, types = weight_files.read_gguf(cmd[2], with_types=True)
        self.assertEqual(len(tensors), 2 + 64 * 9 + 1)
        self.assertEqual(types["blk.63.ffn_down.weight"], GGML_Q8_0)

    def test_llama_quantize_type_names(self):
        """`IN OUT TYPE` with llama-quantize's upper-case names, as --type."""
        by_option = quantize(self.f32, work("by-option-q4_k_m.gguf"), "q4_k_m")
        by_name = work("by-name-q4_k_m.gguf")
        testlib.check_run([testlib.bin("tfm-quantize"), self.f32, by_name, "Q4_K_M"])
        with open(by_option, "rb") as a, open(by_name, "rb") as b:
            self.assertEqual(a.read(), b.read(), "Q4_K_M and --type q4_k_m wrote different files")

    def test_help_lists_only_its_options(self):
        out = testlib.check_run([testlib.bin("tfm-quantize"), "--help"])
        options = re.findall(r"^\s+(--?[\w-]+)", out, re.M)
        self.assertEqual(sorted(set(options)), ["--config", "--help", "--help-list", "--type",
                                                "--version"], out)
        # LLVM Support's own options, hidden, are refused rather than ignored.
        result = testlib.run([testlib.bin("tfm-quantize"), "--color", self.f32,
                              work("color.gguf"), "q8_0"])
        testlib.assert_clean_failure(result, ["--color is not an option of tfm-quantize"],
                                     "tfm-quantize --color")

    def test_refusals(self):
        tool = testlib.bin("tfm-quantize")
        out = work("refused.gguf")
        testlib.assert_clean_failure(testlib.run([tool, self.f32, out, "--type", "q3_k"]),
                                     ["type 'q3_k'", "q4_k_m"], "tfm-quantize")
        testlib.assert_clean_failure(testlib.run([tool, self.f32, out]),
                                     ["no type", "tfm-quantize IN OUT TYPE"], "tfm-quantize")
        testlib.assert_clean_failure(testlib.run([tool, self.f32, out, "Q8_0", "--type", "q8_0"]),
                                     ["given twice"], "tfm-quantize")
        checkpoint = weights(self.config, work("no-config.bin"))
        testlib.assert_clean_failure(testlib.run([tool, checkpoint, out, "--type", "q8_0"]),
                                     [checkpoint, "--config"], "tfm-quantize")
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
