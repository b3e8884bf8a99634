"""Every preset in configs/ compiles with tfmc, as its file stands: the
published Hugging Face config.json files among them (Llama 3.1 and 3.2,
Mistral v0.1 and v0.3, Qwen 2.5, SmolLM2, TinyLlama, ...) unedited.

A config whose sliding window is shorter than its context is refused by
name, before any kernel is compiled, and compiles with --context at most
the window (where the window never takes effect).

usage: test_presets_compile.py   (environment as in the top-level CMakeLists.txt)
"""

import glob
import json
import os
import shutil
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import testlib  # noqa: E402

PRESETS = sorted(glob.glob(testlib.source_path("configs/*.json")))


class PresetsCompile(unittest.TestCase):
    def test_every_preset_compiles(self):
        self.assertGreater(len(PRESETS), 20)
        work = testlib.work_dir("presets_compile")
        for preset in PRESETS:
            name = os.path.splitext(os.path.basename(preset))[0]
            with self.subTest(preset=name):
                with open(preset) as f:
                    config = json.load(f)
                out = os.path.join(work, name)
                shutil.rmtree(out, ignore_errors=True)
                command = [testlib.bin("tfmc"), preset, "-o", out]
                window = config.get("sliding_window") if config.get("model_type") == "mistral" \
                    else None
                if window and window < config["max_position_embeddings"]:
                    testlib.assert_clean_failure(
                        testlib.run(command),
                        mentions=(preset, f"sliding_window {window} is shorter than the context"),
                        what=f"tfmc {name}")
                    self.assertFalse(os.path.exists(os.path.join(out, "manifest.json")))
                    command += ["--context", str(window)]
                testlib.check_run(command)
                with open(os.path.join(out, "manifest.json")) as f:
                    manifest = json.load(f)
                self.assertEqual(manifest["config"]["vocab_size"], config.get("vocab_size",
                                 manifest["config"]["vocab_size"]))


if __name__ == "__main__":
    unittest.main()
