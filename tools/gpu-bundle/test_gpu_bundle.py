"""The GPU bundle (tools/gpu-bundle.sh): built from this build, at most
64 MiB, its binaries and libraries needing nothing outside glibc and
libstdc++; its check script's CPU half run here (CPU libraries run, CUDA
libraries refused by name without a signal); and its GPU half run on an
OpenCL bundle of one model on this machine's OpenCL platform (POCL).

usage: test_gpu_bundle.py   (environment as in the top-level CMakeLists.txt's TFM_TEST_ENV)
"""

import os
import re
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import testlib  # noqa: E402

LIMIT_BYTES = 64 << 20


# Where check.sh writes its random weights: outside the bundles, whose size
# is checked, and shared by both.
WEIGHTS = testlib.work_dir("gpu_bundle/weights")


def build_bundle(out, *options):
    env = dict(os.environ, TFM_BUILD_DIR=os.path.dirname(os.path.dirname(testlib.bin("tfmc"))))
    return testlib.check_run([os.path.join(ROOT, "tools", "gpu-bundle.sh"), *options, out],
                             env=env)


def bundle_files(out):
    for folder, _, files in os.walk(out):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".so") or (os.access(path, os.X_OK) and name != "check.sh"):
                yield path


class CudaBundle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = os.path.join(testlib.work_dir("gpu_bundle"), "cuda")
        cls.listing = build_bundle(cls.out)

    def test_size_listed_and_under_limit(self):
        match = re.search(r"gpu-bundle: (\d+) bytes in all", self.listing)
        self.assertIsNotNone(match, self.listing)
        total = sum(os.path.getsize(os.path.join(d, f))
                    for d, _, files in os.walk(self.out) for f in files)
        self.assertGreaterEqual(int(match.group(1)), total, self.listing)
        self.assertLessEqual(total, LIMIT_BYTES)
        for tool in ("bin/tfm-run", "bin/tfm-bench", "bin/tfm-weights"):
            self.assertIn(tool, self.listing)
        for model in ("gpt2-small", "llama-110m", "llama2-7b-f16"):
            for kind in ("gpu", "cpu"):
                self.assertTrue(os.path.isdir(os.path.join(self.out, "models", f"{model}-{kind}")))

    def test_ldd_shows_only_glibc_and_libstdcxx(self):
        files = list(bundle_files(self.out))
        self.assertGreaterEqual(len(files), 9)  # 3 tools, 6 libraries
        for path in files:
            testlib.assert_needs_only_glibc(path)

    def test_gpu_libraries_are_cuda(self):
        with open(os.path.join(self.out, "models", "llama-110m-gpu", "manifest.json")) as f:
            manifest = f.read()
        self.assertIn("-cuda-cuda_capability_80", manifest)
        self.assertNotIn("avx512", manifest)  # the bundle's hosts need AVX2 only

    def test_cpu_half_of_the_check(self):
        if os.path.exists("/dev/nvidia0"):
            self.skipTest("an NVIDIA GPU is here: the CPU half's refusals do not apply")
        code, stdout, stderr = testlib.run([os.path.join(self.out, "check.sh"), "--cpu-only",
                                            "--work", WEIGHTS])
        self.assertEqual(code, 0, stdout + stderr)
        for model in ("gpt2-small", "llama-110m"):
            self.assertRegex(stdout, rf"== {model}-cpu: runs \(rates [0-9.]+ [0-9.]+")
            self.assertRegex(stdout, rf"== {model}-gpu: refused as it should be here: .*"
                                     r"no NVIDIA driver \(libcuda\.so\.1 is not found\)")

    def test_unknown_model_refused(self):
        env = dict(os.environ, TFM_BUILD_DIR=os.path.dirname(os.path.dirname(testlib.bin("tfmc"))))
        out = os.path.join(testlib.work_dir("gpu_bundle"), "unknown")
        testlib.assert_clean_failure(
            testlib.run([os.path.join(ROOT, "tools", "gpu-bundle.sh"), "--models", "gpt2-smal",
                         out], env=env),
            mentions=["--models: no model 'gpt2-smal'"])

    def test_check_refuses_unknown_options(self):
        testlib.assert_clean_failure(
            testlib.run([os.path.join(self.out, "check.sh"), "--cpu-only", "--device", "0"]),
            mentions=["--device goes with the GPU check"])


class OpenClBundle(unittest.TestCase):
    """The GPU half of check.sh, on this machine's OpenCL platform."""

    def test_gpu_half_on_opencl(self):
        testlib.require_opencl_platform()
        out = os.path.join(testlib.work_dir("gpu_bundle"), "opencl")
        build_bundle(out, "--opencl", "--models", "llama-110m")
        stdout = testlib.check_run([os.path.join(out, "check.sh"), "--work", WEIGHTS,
                                    "--models", "llama-110m",
                                    "--prompt", "16", "--decode", "4", "--repeat", "1",
                                    "--device", "0"])
        roof = re.search(r"device roofline of models/llama-110m-gpu: f32 multiply-add peak "
                         r"([0-9.]+) GFLOP/s; copy ([0-9.]+) GB/s", stdout)
        self.assertIsNotNone(roof, stdout)
        self.assertGreater(float(roof.group(1)), 0)
        self.assertGreater(float(roof.group(2)), 0)
        row = re.search(r"^models/llama-110m-gpu\s+gpu\s+0\s+([0-9.]+)\s+[0-9.]+\s+(\d+)%\s.*"
                        r"device\s+([0-9.]+)\s+(\d+)%\s+([0-9.e+-]+)$", stdout, re.M)
        self.assertIsNotNone(row, stdout)
        self.assertGreater(float(row.group(1)), 0)  # prefill tok/s, and its per cent of the peak
        self.assertGreater(int(row.group(2)), 0)
        self.assertLess(float(row.group(5)), 1e-4)  # against the CPU library's logits


def tearDownModule():
    testlib.discard(WEIGHTS)  # random weights, written again by every run


if __name__ == "__main__":
    unittest.main()
