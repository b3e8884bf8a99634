"""tfm-weights: the llama2.c layout, determinism, value ranges; safetensors
and GGUF for compiled models (Hugging Face names and layouts, dtypes, shards),
read back with the reference's independent readers; refusals. GGUFs that
carry a real vocabulary (--vocab) are tested in test_tfm_weights_vocab.py.

usage: test_tfm_weights.py   (environment as in the top-level CMakeLists.txt's TFM_TEST_ENV)
"""

import json
import math
import os
import sys
import unittest

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTS = os.path.join(ROOT, "tests")
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(TESTS, "reference"))

import testlib  # noqa: E402
import weight_files  # noqa: E402

SMALL = {
    "model_type": "llama", "name": "weights_test",
    "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 37,
    "max_position_embeddings": 16, "rope_theta": 10000.0, "tie_word_embeddings": False,
}


def write_config(name, **changes):
    config = dict(SMALL, **changes)
    path = os.path.join(testlib.work_dir("tfm-weights"), name + ".json")
    with open(path, "w") as f:
        json.dump(config, f)
    return path, config


def generate(config_path, out_name, seed=0):
    out = os.path.join(testlib.work_dir("tfm-weights"), out_name)
    result = testlib.run([testlib.bin("tfm-weights"), config_path, "-o", out, "--seed", str(seed)])
    return out, result


def split_llama2c(path, c):
    """The file cut into its tensors, following the llama2.c layout."""
    d, L, hidden, vocab = c["hidden_size"], c["num_hidden_layers"], c["intermediate_size"], c["vocab_size"]
    hd = d // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    ctx = c["max_position_embeddings"]
    shapes = [("token_embedding", (vocab, d)), ("rms_att", (L, d)), ("wq", (L, q, d)),
              ("wk", (L, kv, d)), ("wv", (L, kv, d)), ("wo", (L, d, q)), ("rms_ffn", (L, d)),
              ("w1", (L, hidden, d)), ("w2", (L, d, hidden)), ("w3", (L, hidden, d)),
              ("rms_final", (d,)), ("freq_cis_real", (ctx, hd // 2)), ("freq_cis_imag", (ctx, hd // 2))]
    if not c["tie_word_embeddings"]:
        shapes.append(("wcls", (vocab, d)))
    header = np.fromfile(path, dtype="<i4", count=7)
    data = np.fromfile(path, dtype="<f4", offset=28)
    tensors, offset = {}, 0
    for name, shape in shapes:
        count = math.prod(shape)
        tensors[name] = data[offset:offset + count].reshape(shape)
        offset += count
    return header, tensors, offset == data.size


class Layout(unittest.TestCase):
    def test_untied_header_tensors_and_size(self):
        config_path, c = write_config("untied")
        path, result = generate(config_path, "untied.bin", seed=3)
        self.assertEqual(result[0], 0, result[2])
        header, tensors, exact = split_llama2c(path, c)
        self.assertEqual(header.tolist(), [64, 96, 2, 4, 2, -37, 16])
        self.assertTrue(exact, "file size does not match the llama2.c layout of the config")

        # embeddings about N(0, 1); projections within 1/sqrt(fan_in); norm gains near 1
        emb = tensors["token_embedding"]
        self.assertLess(abs(emb.mean()), 0.1)
        self.assertAlmostEqual(float(emb.std()), 1.0, delta=0.1)
        for name, fan_in in [("wq", 64), ("wk", 64), ("wv", 64), ("wo", 64), ("w1", 64),
                             ("w2", 96), ("w3", 64), ("wcls", 64)]:
            bound = 1 / math.sqrt(fan_in)
            self.assertLessEqual(np.abs(tensors[name]).max(), bound * (1 + 1e-6), name)
            self.assertGreater(np.abs(tensors[name]).max(), bound * 0.9, name)
        for name in ["rms_att", "rms_ffn", "rms_final"]:
            self.assertTrue(((tensors[name] >= 0.9) & (tensors[name] <= 1.1)).all(), name)
        # layers and tensors draw different values
        self.assertFalse(np.array_equal(tensors["wq"][0], tensors["wq"][1]))
        self.assertFalse(np.array_equal(tensors["w1"], tensors["w3"]))

        # RoPE tables: cos and sin of pos * theta^(-2i/head_dim), head_dim 16
        pos = np.arange(16)[:, None]
        freqs = 10000.0 ** (-np.arange(0, 16, 2) / 16)
        np.testing.assert_allclose(tensors["freq_cis_real"], np.cos(pos * freqs), atol=1e-6)
        np.testing.assert_allclose(tensors["freq_cis_imag"], np.sin(pos * freqs), atol=1e-6)

    def test_tied_head_has_positive_vocab_and_no_wcls(self):
        config_path, c = write_config("tied", tie_word_embeddings=True)
        path, result = generate(config_path, "tied.bin")
        self.assertEqual(result[0], 0, result[2])
        header, _, exact = split_llama2c(path, c)
        self.assertEqual(header[5], 37)
        self.assertTrue(exact)

    def test_quiet_when_stderr_is_not_a_terminal(self):
        config_path, _ = write_config("quiet")
        _, (returncode, stdout, stderr) = generate(config_path, "quiet.bin")
        self.assertEqual(returncode, 0, stderr)
        self.assertEqual(stdout + stderr, "")


class Determinism(unittest.TestCase):
    def read(self, path):
        with open(path, "rb") as f:
            return f.read()

    def test_same_seed_same_bytes_other_seed_other_values(self):
        config_path, _ = write_config("seeded")
        a, ra = generate(config_path, "seed7a.bin", seed=7)
        b, rb = generate(config_path, "seed7b.bin", seed=7)
        c, rc = generate(config_path, "seed8.bin", seed=8)
        self.assertEqual((ra[0], rb[0], rc[0]), (0, 0, 0))
        self.assertEqual(self.read(a), self.read(b))
        self.assertNotEqual(self.read(a)[28:], self.read(c)[28:])

    def test_a_tensor_does_not_depend_on_the_others(self):
        # One more layer appends to each group but leaves the shared tensors as they were.
        one_path, one = write_config("one-layer", num_hidden_layers=1)
        two_path, two = write_config("two-layers", num_hidden_layers=2)
        a, _ = generate(one_path, "one-layer.bin", seed=5)
        b, _ = generate(two_path, "two-layers.bin", seed=5)
        _, ta, _ = split_llama2c(a, one)
        _, tb, _ = split_llama2c(b, two)
        np.testing.assert_array_equal(ta["token_embedding"], tb["token_embedding"])
        np.testing.assert_array_equal(ta["wq"][0], tb["wq"][0])
        np.testing.assert_array_equal(ta["wcls"], tb["wcls"])


class FormatFromOutputName(unittest.TestCase):
    """Without --format, -o's name says the format, as llama.cpp's tools
    take a .gguf: the same bytes as --format gives."""

    def test_extension_chooses_the_format(self):
        config_path, _ = write_config("by-name")
        tool, work = testlib.bin("tfm-weights"), testlib.work_dir("tfm-weights")
        for name, format in (("by-name.gguf", "gguf"), ("by-name.bin", "llama2c"),
                             ("by-name-folder", "safetensors")):
            implied, explicit = os.path.join(work, name), os.path.join(work, "explicit-" + name)
            testlib.check_run([tool, config_path, "-o", implied])
            testlib.check_run([tool, config_path, "-o", explicit, "--format", format])
            if format == "safetensors":
                implied = os.path.join(implied, "model.safetensors")
                explicit = os.path.join(explicit, "model.safetensors")
            with open(implied, "rb") as a, open(explicit, "rb") as b:
                self.assertEqual(a.read(), b.read(), f"-o {name} is not --format {format}")

    def test_unknown_extension_refused(self):
        config_path, _ = write_config("by-name")
        out = os.path.join(testlib.work_dir("tfm-weights"), "by-name.npz")
        result = testlib.run([testlib.bin("tfm-weights"), config_path, "-o", out])
        testlib.assert_clean_failure(result, ["'.npz'", "--format"], "tfm-weights")
        self.assertFalse(os.path.exists(out))


class Refusals(unittest.TestCase):
    def test_head_dim_other_than_dim_over_heads(self):
        config_path, _ = write_config("head-dim", head_dim=32)
        out, result = generate(config_path, "head-dim.bin")
        testlib.assert_clean_failure(result, [config_path, "'head_dim'", "llama2c"], "tfm-weights")
        self.assertFalse(os.path.exists(out))

    def test_invalid_config_names_file_and_field(self):
        config_path, _ = write_config("bad-kv", num_key_value_heads=3)
        _, result = generate(config_path, "bad-kv.bin")
        testlib.assert_clean_failure(result, [config_path, "'num_key_value_heads'"], "tfm-weights")

    def test_missing_config(self):
        missing = os.path.join(testlib.work_dir("tfm-weights"), "no-such-config.json")
        _, result = generate(missing, "none.bin")
        testlib.assert_clean_failure(result, [missing], "tfm-weights")

    def test_unwritable_output(self):
        config_path, _ = write_config("unwritable")
        out = os.path.join(testlib.work_dir("tfm-weights"), "no-such-dir", "w.bin")
        result = testlib.run([testlib.bin("tfm-weights"), config_path, "-o", out])
        testlib.assert_clean_failure(result, [out], "tfm-weights")

    def test_unknown_format(self):
        config_path, _ = write_config("format")
        out = os.path.join(testlib.work_dir("tfm-weights"), "format.bin")
        result = testlib.run([testlib.bin("tfm-weights"), config_path, "-o", out, "--format", "npz"])
        testlib.assert_clean_failure(result, ["npz"], "tfm-weights")

    def test_options_that_do_not_fit_the_format(self):
        config_path, _ = write_config("options")
        out = os.path.join(testlib.work_dir("tfm-weights"), "options.bin")
        tool = testlib.bin("tfm-weights")
        testlib.assert_clean_failure(testlib.run([tool, config_path, "-o", out, "--dtype", "f16"]),
                                     ["--dtype", "llama2c format holds f32 only"], "tfm-weights")
        testlib.assert_clean_failure(testlib.run([tool, config_path, "-o", out, "--shards", "2"]),
                                     ["--shards applies to --format safetensors"], "tfm-weights")
        testlib.assert_clean_failure(
            testlib.run([tool, config_path, "--model", "somewhere", "-o", out]),
            ["not both"], "tfm-weights")

    def test_model_folder_without_manifest(self):
        empty = os.path.join(testlib.work_dir("tfm-weights"), "not-a-model")
        os.makedirs(empty, exist_ok=True)
        out = os.path.join(testlib.work_dir("tfm-weights"), "none.gguf")
        result = testlib.run([testlib.bin("tfm-weights"), "--model", empty, "-o", out,
                              "--format", "gguf"])
        testlib.assert_clean_failure(result, [os.path.join(empty, "manifest.json"), "tfmc"],
                                     "tfm-weights")


GPT2 = {"model_type": "gpt2", "name": "weights_gpt2", "n_embd": 40, "n_head": 5, "n_layer": 2,
        "n_positions": 16, "vocab_size": 37, "n_inner": 72, "bos_token_id": 0, "eos_token_id": 0}


def compiled(name, config):
    """A tiny model compiled by tfmc (reused between runs): its folder and manifest."""
    path = os.path.join(testlib.work_dir("tfm-weights"), name + ".json")
    with open(path, "w") as f:
        json.dump(config, f)
    model = testlib.compile_model(path, os.path.join(testlib.work_dir("tfm-weights"), name))
    with open(os.path.join(model, "manifest.json")) as f:
        return model, json.load(f)


def from_model(model, out_name, *args, seed=4):
    out = os.path.join(testlib.work_dir("tfm-weights"), out_name)
    testlib.check_run([testlib.bin("tfm-weights"), "--model", model, "-o", out,
                       "--seed", str(seed), *args])
    return out


def rotate_half_rows(w, heads):
    """Manifest (interleaved-pair) rows in Hugging Face's rotate-half order:
    manifest row h*hd + 2i + j is Hugging Face row h*hd + j*hd/2 + i."""
    hd = w.shape[0] // heads
    return w.reshape(heads, hd // 2, 2, -1).transpose(0, 2, 1, 3).reshape(w.shape)


def bf16_round(values):
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    return (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)


class ManifestFormats(unittest.TestCase):
    """Weights for compiled models, checked against the GGUF of the same seed:
    a tensor's values depend only on its name and the seed."""

    @classmethod
    def setUpClass(cls):
        cls.llama, cls.llama_manifest = compiled("model-llama", SMALL)
        cls.gpt2, cls.gpt2_manifest = compiled("model-gpt2", GPT2)

    def gguf(self, model, name):
        return weight_files.read_gguf(from_model(model, name, "--format", "gguf"))

    def safetensors(self, model, name, *args):
        folder = from_model(model, name, "--format", "safetensors", *args)
        return folder, weight_files.read_safetensors(os.path.join(folder, "model.safetensors"))

    def test_gguf_holds_the_manifest_tensors_and_hyperparameters(self):
        for model, manifest in [(self.llama, self.llama_manifest), (self.gpt2, self.gpt2_manifest)]:
            metadata, tensors = self.gguf(model, manifest["name"] + ".gguf")
            c, arch = manifest["config"], manifest["config"]["family"]
            self.assertEqual([(n, list(t.shape)) for n, t in tensors.items()],
                             [(t["name"], t["shape"]) for t in manifest["tensors"]])
            self.assertEqual(metadata["general.architecture"], arch)
            self.assertEqual(metadata["general.alignment"], 32)
            for key, field in [("embedding_length", "dim"), ("block_count", "n_layers"),
                               ("feed_forward_length", "hidden_dim"),
                               ("attention.head_count", "n_heads"),
                               ("context_length", "context_length")]:
                self.assertEqual(metadata[f"{arch}.{key}"], c[field], key)

    def test_llama_gguf_equals_the_llama2c_checkpoint_of_the_config(self):
        _, tensors = self.gguf(self.llama, "llama-vs-llama2c.gguf")
        config_path, c = write_config("same-as-model")
        path, result = generate(config_path, "same-as-model.bin", seed=4)
        self.assertEqual(result[0], 0, result[2])
        _, legacy, _ = split_llama2c(path, c)
        for name, layer_tensor in [("attn_q", "wq"), ("attn_k", "wk"), ("ffn_down", "w2")]:
            np.testing.assert_array_equal(tensors[f"blk.1.{name}.weight"].numpy(),
                                          legacy[layer_tensor][1])
        np.testing.assert_array_equal(tensors["output.weight"].numpy(), legacy["wcls"])

    def test_gpt2_safetensors_use_hf_names_and_conv1d_layout(self):
        _, gguf = self.gguf(self.gpt2, "gpt2-layout.gguf")
        _, hf = self.safetensors(self.gpt2, "gpt2-layout")
        self.assertNotIn("lm_head.weight", hf)  # tied head
        self.assertEqual(len(hf), len(gguf))
        pairs = {"token_embd.weight": ("wte.weight", False),
                 "position_embd.weight": ("wpe.weight", False),
                 "output_norm.bias": ("ln_f.bias", False)}
        for i in range(2):
            for ours, theirs, transposed in [
                    ("attn_norm.weight", "ln_1.weight", False), ("attn_qkv.weight", "attn.c_attn.weight", True),
                    ("attn_qkv.bias", "attn.c_attn.bias", False), ("attn_output.weight", "attn.c_proj.weight", True),
                    ("ffn_norm.bias", "ln_2.bias", False), ("ffn_up.weight", "mlp.c_fc.weight", True),
                    ("ffn_down.weight", "mlp.c_proj.weight", True), ("ffn_down.bias", "mlp.c_proj.bias", False)]:
                pairs[f"blk.{i}.{ours}"] = (f"h.{i}.{theirs}", transposed)
        for ours, (theirs, transposed) in pairs.items():
            expected = gguf[ours].T if transposed else gguf[ours]
            np.testing.assert_array_equal(hf[theirs].numpy(), expected.numpy(), theirs)

    def test_llama_safetensors_use_hf_names_and_rotate_half_rows(self):
        _, gguf = self.gguf(self.llama, "llama-layout.gguf")
        _, hf = self.safetensors(self.llama, "llama-layout")
        self.assertEqual(len(hf), len(gguf))
        heads, kv_heads = SMALL["num_attention_heads"], SMALL["num_key_value_heads"]
        for i in range(2):
            p = f"model.layers.{i}."
            np.testing.assert_array_equal(hf[p + "self_attn.q_proj.weight"].numpy(),
                                          rotate_half_rows(gguf[f"blk.{i}.attn_q.weight"].numpy(), heads))
            np.testing.assert_array_equal(hf[p + "self_attn.k_proj.weight"].numpy(),
                                          rotate_half_rows(gguf[f"blk.{i}.attn_k.weight"].numpy(), kv_heads))
            np.testing.assert_array_equal(hf[p + "self_attn.v_proj.weight"].numpy(),
                                          gguf[f"blk.{i}.attn_v.weight"].numpy())
            np.testing.assert_array_equal(hf[p + "post_attention_layernorm.weight"].numpy(),
                                          gguf[f"blk.{i}.ffn_norm.weight"].numpy())
        np.testing.assert_array_equal(hf["model.embed_tokens.weight"].numpy(),
                                      gguf["token_embd.weight"].numpy())
        np.testing.assert_array_equal(hf["lm_head.weight"].numpy(), gguf["output.weight"].numpy())

    def test_half_types_round_to_nearest_even(self):
        _, f32 = self.safetensors(self.gpt2, "gpt2-f32")
        _, f16 = self.safetensors(self.gpt2, "gpt2-f16", "--dtype", "f16")
        _, bf16 = self.safetensors(self.gpt2, "gpt2-bf16", "--dtype", "bf16")
        gguf_path = from_model(self.llama, "llama-f16.gguf", "--format", "gguf", "--dtype", "f16")
        _, gguf16 = weight_files.read_gguf(gguf_path)
        _, gguf32 = self.gguf(self.llama, "llama-f32.gguf")
        for name, values in f32.items():
            v = values.numpy().astype(np.float32)
            np.testing.assert_array_equal(f16[name].numpy(), v.astype(np.float16), name)
            np.testing.assert_array_equal(bf16[name].numpy(), bf16_round(v), name)
        for name, values in gguf32.items():
            v = values.numpy().astype(np.float32)
            # Vectors stay f32 in GGUF files of every type, as llama.cpp writes them.
            expected = v if v.ndim == 1 else v.astype(np.float16)
            np.testing.assert_array_equal(gguf16[name].numpy(), expected, name)

    def test_shards_hold_the_same_tensors_as_one_file(self):
        _, single = self.safetensors(self.llama, "llama-single")
        folder = from_model(self.llama, "llama-sharded", "--format", "safetensors", "--shards", "3")
        names = sorted(os.listdir(folder))
        self.assertEqual(names, ["model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                                 "model-00003-of-00003.safetensors", "model.safetensors.index.json"])
        with open(os.path.join(folder, "model.safetensors.index.json")) as f:
            weight_map = json.load(f)["weight_map"]
        self.assertEqual(sorted(weight_map), sorted(single))
        self.assertEqual(sorted(set(weight_map.values())), names[:3])
        sharded = weight_files.read_safetensors(os.path.join(folder, "model.safetensors.index.json"))
        for name, values in single.items():
            np.testing.assert_array_equal(sharded[name].numpy(), values.numpy(), name)

    def test_gpt2_values_follow_each_tensor_kind(self):
        _, t = self.gguf(self.gpt2, "gpt2-ranges.gguf")
        self.assertAlmostEqual(float(t["token_embd.weight"].std()), 1.0, delta=0.15)
        self.assertLessEqual(float(t["position_embd.weight"].abs().max()), 0.1)
        for i in range(2):
            for bias in ["attn_norm.bias", "attn_qkv.bias", "ffn_up.bias", "ffn_down.bias"]:
                self.assertLessEqual(float(t[f"blk.{i}.{bias}"].abs().max()), 0.1, bias)
            norm = t[f"blk.{i}.ffn_norm.weight"]
            self.assertTrue(bool(((norm >= 0.9) & (norm <= 1.1)).all()))
            for matrix, fan_in in [("attn_qkv.weight", 40), ("ffn_down.weight", 72)]:
                self.assertLessEqual(float(t[f"blk.{i}.{matrix}"].abs().max()),
                                     (1 + 1e-6) / math.sqrt(fan_in), matrix)

    def test_a_config_gives_the_files_of_its_compiled_model(self):
        # One tensor table: the config's tensor list is the manifest's, so the
        # same seed writes the same bytes whichever way the list was found.
        for name, config, model in [("llama", SMALL, self.llama), ("gpt2", GPT2, self.gpt2)]:
            config_path = os.path.join(testlib.work_dir("tfm-weights"), f"model-{name}.json")
            for fmt in ["gguf", "safetensors"]:
                out = os.path.join(testlib.work_dir("tfm-weights"), f"from-config-{name}.{fmt}")
                testlib.check_run([testlib.bin("tfm-weights"), config_path, "-o", out,
                                   "--format", fmt, "--seed", "4"])
                ours = from_model(model, f"from-model-{name}.{fmt}", "--format", fmt)
                if fmt == "safetensors":
                    out, ours = (os.path.join(p, "model.safetensors") for p in (out, ours))
                with open(out, "rb") as a, open(ours, "rb") as b:
                    self.assertEqual(a.read(), b.read(), f"{name} {fmt}")

    def test_refusals_with_a_model(self):
        tool = testlib.bin("tfm-weights")
        out = os.path.join(testlib.work_dir("tfm-weights"), "refused")
        testlib.assert_clean_failure(
            testlib.run([tool, "--model", self.gpt2, "-o", out + ".bin"]),
            ["manifest.json", "model_type 'gpt2'", "llama2c"], "tfm-weights")
        testlib.assert_clean_failure(
            testlib.run([tool, "--model", self.gpt2, "-o", out, "--format", "safetensors",
                         "--shards", "1000"]),
            ["--shards 1000", "expected 1 to"], "tfm-weights")

    def test_vocabulary_refusals(self):
        # Those that need a real vocabulary are in test_tfm_weights_vocab.py.
        tool = testlib.bin("tfm-weights")
        out = os.path.join(testlib.work_dir("tfm-weights"), "vocab-refused")
        no_tokens = from_model(self.gpt2, "no-tokens.gguf", "--format", "gguf")
        testlib.assert_clean_failure(
            testlib.run([tool, "--model", self.gpt2, "-o", out, "--format", "safetensors",
                         "--vocab", no_tokens]),
            ["--vocab applies to --format gguf, not safetensors"], "tfm-weights")
        for vocab, mentions in [
                (no_tokens, [no_tokens, "'tokenizer.ggml.tokens' is missing", "vocabulary"]),
                (os.path.join(self.gpt2, "manifest.json"),
                 [os.path.join(self.gpt2, "manifest.json"), "not a GGUF file"])]:
            testlib.assert_clean_failure(
                testlib.run([tool, "--model", self.gpt2, "-o", out + ".gguf", "--format", "gguf",
                             "--vocab", vocab]), mentions, "tfm-weights")
            self.assertFalse(os.path.exists(out + ".gguf"))


class BlockFormats(unittest.TestCase):
    """GGUF's block formats: matrices quantized, vectors kept in f32, values
    within what each format's bits allow of the f32 file's (same seed). The
    reader's decoders follow ggml's layouts (weight_files.py)."""

    # ggml type id and the largest relative root-mean-square error per matrix
    FORMATS = {"q8_0": (8, 0.006), "q4_0": (2, 0.09), "q4_k": (12, 0.085), "q5_k": (13, 0.042),
               "q6_k": (14, 0.02)}
    # every row (hidden 256, FFN 512) holds whole blocks of 256
    SHAPE = {"hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
             "num_key_value_heads": 2, "vocab_size": 64}

    def gguf(self, config_path, dtype):
        out = os.path.join(testlib.work_dir("tfm-weights"), f"blocks-{dtype}.gguf")
        result = testlib.run([testlib.bin("tfm-weights"), config_path, "-o", out, "--seed", "9",
                              "--format", "gguf", "--dtype", dtype])
        self.assertEqual(result[0], 0, result[2])
        return weight_files.read_gguf(out, with_types=True)

    def test_matrices_in_the_block_format_vectors_in_f32(self):
        config_path, _ = write_config("blocks", **self.SHAPE)
        _, exact, exact_types = self.gguf(config_path, "f32")
        self.assertEqual(set(exact_types.values()), {0})
        for dtype, (ggml_type, bound) in self.FORMATS.items():
            with self.subTest(dtype=dtype):
                _, values, types = self.gguf(config_path, dtype)
                self.assertEqual(sorted(values), sorted(exact))
                for name, reference in exact.items():
                    ref = reference.numpy()
                    if ref.ndim == 1:
                        self.assertEqual(types[name], 0, name)
                        np.testing.assert_array_equal(values[name].numpy(), ref, name)
                        continue
                    self.assertEqual(types[name], ggml_type, name)
                    error = values[name].numpy() - ref
                    relative = math.sqrt((error ** 2).mean() / (ref ** 2).mean())
                    self.assertLess(relative, bound, name)
                    self.assertGreater(relative, 0.0, name)  # quantized, not copied

    def test_q4_k_m_mixes_as_llama_cpp_does(self):
        # Eight layers: llama.cpp gives attn_v and ffn_down of layers 0, 3, 6, 7 more bits.
        config_path, _ = write_config("blocks-mix", num_hidden_layers=8, **self.SHAPE)
        metadata, values, types = self.gguf(config_path, "q4_k_m")
        _, exact, _ = self.gguf(config_path, "f32")
        self.assertEqual(metadata["general.file_type"], 15)  # LLAMA_FTYPE_MOSTLY_Q4_K_M
        self.assertEqual(types["output.weight"], 14)
        self.assertEqual(types["token_embd.weight"], 12)
        for layer in range(8):
            more = 14 if layer in (0, 3, 6, 7) else 12
            self.assertEqual(types[f"blk.{layer}.attn_v.weight"], more, layer)
            self.assertEqual(types[f"blk.{layer}.ffn_down.weight"], more, layer)
            self.assertEqual(types[f"blk.{layer}.attn_q.weight"], 12, layer)
            self.assertEqual(types[f"blk.{layer}.attn_norm.weight"], 0, layer)
        for name, reference in exact.items():
            ref = reference.numpy()
            error = values[name].numpy() - ref
            self.assertLess(math.sqrt((error ** 2).mean() / (ref ** 2).mean()), 0.085, name)

    def test_rows_without_whole_blocks_fall_back_with_a_note(self):
        config_path, _ = write_config("odd-rows")  # hidden 64, FFN 96: blocks of 32 fit, of 256 do not
        out = os.path.join(testlib.work_dir("tfm-weights"), "odd-rows.gguf")
        result = testlib.run([testlib.bin("tfm-weights"), config_path, "-o", out, "--format", "gguf",
                              "--dtype", "q4_k_m"])
        self.assertEqual(result[0], 0, result[2])
        self.assertIn("note: tensor 'blk.1.ffn_down.weight': rows of 96 elements are not a multiple "
                      "of q6_k's block of 256; stored as q8_0", result[2])
        _, _, types = weight_files.read_gguf(out, with_types=True)
        self.assertEqual(types["blk.1.ffn_up.weight"], 8)  # q8_0
        self.assertEqual(types["blk.1.ffn_norm.weight"], 0)

    def test_block_formats_are_gguf_only(self):
        config_path, _ = write_config("blocks-safetensors", **self.SHAPE)
        out = os.path.join(testlib.work_dir("tfm-weights"), "blocks-safetensors")
        testlib.assert_clean_failure(
            testlib.run([testlib.bin("tfm-weights"), config_path, "-o", out, "--format",
                         "safetensors", "--dtype", "q8_0"]),
            ["--dtype q8_0", "GGUF only"], "tfm-weights")
        testlib.assert_clean_failure(
            testlib.run([testlib.bin("tfm-weights"), config_path, "-o", out, "--dtype", "q3_k"]),
            ["'q3_k'", "q4_k_m"], "tfm-weights")


if __name__ == "__main__":
    unittest.main()
