"""Every published Hugging Face config.json in configs/published/ (Llama
3.1 and 3.2, Mistral v0.1 and v0.3, Qwen 2.5 and 3, Phi-3, Gemma 2 and 3,
SmolLM2, TinyLlama) compiles with tfmc unedited. (configs/'s own presets
are lowered and their kernels checked by BufferBoundsCheckTest.)

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

PRESETS = sorted(glob.glob(testlib.source_path("configs/published/*.json")))


class PresetsCompile(unittest.TestCase):
    def test_every_preset_compiles(self):
        self.assertGreater(len(PRESETS), 10)
        work = testlib.work_dir("presets_compile")
        for preset in PRESETS:
            name = os.path.splitext(os.path.basename(preset))[0]
            with self.subTest(preset=name):
                with open(preset) as f:
                    config = json.load(f)
                out = os.path.join(work, name)
                shutil.rmtree(out, ignore_errors=True)
                command = [testlib.bin("tfmc"), preset, "-o", out]
                testlib.check_run(command)
                with open(os.path.join(out, "manifest.json")) as f:
                    manifest = json.load(f)
                self.assertTrue(manifest["kernels"])
                for field, canonical in (("vocab_size", "vocab_size"),
                                         ("num_hidden_layers", "n_layers")):
                    if config.get(field) is not None:
                        self.assertEqual(manifest["config"][canonical], config[field], field)


if __name__ == "__main__":
    unittest.main()
