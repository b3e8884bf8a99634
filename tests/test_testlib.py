"""tests/testlib.py: the skip/fail rule for shared data, exit classification,
compile_model's reuse of an up-to-date compile, and the cases a script
registers with @testlib.case, which CMake lists with --list.

usage: test_testlib.py   (environment as in the top-level CMakeLists.txt's TFM_TEST_ENV)
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TESTS_DIR)

import testlib  # noqa: E402


def shared_path_in_child(relpath, **env):
    """Calls testlib.shared_path in a fresh interpreter (it may exit)."""
    code = f"import testlib; print(testlib.shared_path({relpath!r}))"
    child_env = {k: v for k, v in os.environ.items() if k not in ("CI", "TFM_SHARED_DIR")}
    child_env.update(env)
    return subprocess.run([sys.executable, "-c", code], cwd=TESTS_DIR, env=child_env,
                          capture_output=True, text=True, timeout=60)


class SharedPath(unittest.TestCase):
    def setUp(self):
        self.shared = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.shared, "models"))

    def tearDown(self):
        shutil.rmtree(self.shared)

    def test_present_path_is_returned(self):
        done = shared_path_in_child("models", TFM_SHARED_DIR=self.shared)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), os.path.join(self.shared, "models"))

    def test_missing_path_skips_outside_ci(self):
        done = shared_path_in_child("models/absent.bin", TFM_SHARED_DIR=self.shared)
        self.assertEqual(done.returncode, testlib.SKIP_EXIT_CODE)
        self.assertIn("SKIP:", done.stdout)
        self.assertIn("absent.bin", done.stdout)
        self.assertIn("TFM_SHARED_DIR", done.stdout)

    def test_missing_path_fails_under_ci(self):
        done = shared_path_in_child("models/absent.bin", TFM_SHARED_DIR=self.shared, CI="true")
        self.assertEqual(done.returncode, 1)
        self.assertIn("absent.bin", done.stdout)

    def test_unset_shared_dir_skips(self):
        done = shared_path_in_child("models")
        self.assertEqual(done.returncode, testlib.SKIP_EXIT_CODE)
        self.assertIn("TFM_SHARED_DIR", done.stdout)


class ExitClassification(unittest.TestCase):
    def test_clean_refusal_passes(self):
        result = testlib.run([sys.executable, "-c",
                              "import sys; sys.stderr.write('cfg.json: field x'); sys.exit(1)"])
        testlib.assert_clean_failure(result, ["cfg.json", "field x"])

    def test_success_is_not_a_refusal(self):
        result = testlib.run([sys.executable, "-c", "pass"])
        with self.assertRaisesRegex(AssertionError, "non-zero"):
            testlib.assert_clean_failure(result)

    def test_signal_is_a_crash(self):
        result = testlib.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
        with self.assertRaisesRegex(AssertionError, "crashed"):
            testlib.assert_clean_failure(result)

    def test_missing_mention_is_reported(self):
        result = testlib.run([sys.executable, "-c", "import sys; sys.exit(2)"])
        with self.assertRaisesRegex(AssertionError, "does not mention"):
            testlib.assert_clean_failure(result, ["config.json"])

    def test_timeout_is_reported(self):
        with self.assertRaisesRegex(AssertionError, "timed out"):
            testlib.run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=1)


class CompileModel(unittest.TestCase):
    """compile_model against a recording tfmc in a private bin folder."""

    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.saved_bin_dir = os.environ.get("TFM_BIN_DIR")
        os.environ["TFM_BIN_DIR"] = self.root
        self.calls = os.path.join(self.root, "calls")
        tfmc = os.path.join(self.root, "tfmc")
        with open(tfmc, "w") as f:
            f.write(f"#!{sys.executable}\n"
                    "import os, sys\n"
                    f"open({self.calls!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
                    "if 'fail' in sys.argv[1]:\n"
                    "    sys.stderr.write(sys.argv[1] + ': field x: bad\\n'); sys.exit(1)\n"
                    "out = sys.argv[sys.argv.index('-o') + 1]\n"
                    "os.makedirs(out, exist_ok=True)\n"
                    "open(os.path.join(out, 'manifest.json'), 'w').write('{}')\n")
        os.chmod(tfmc, 0o755)
        self.config = os.path.join(self.root, "model.json")
        with open(self.config, "w") as f:
            f.write("{}")
        past = time.time() - 100
        os.utime(self.config, (past, past))
        os.utime(tfmc, (past, past))

    def tearDown(self):
        if self.saved_bin_dir is None:
            del os.environ["TFM_BIN_DIR"]
        else:
            os.environ["TFM_BIN_DIR"] = self.saved_bin_dir
        shutil.rmtree(self.root)

    def call_count(self):
        with open(self.calls) as f:
            return len(f.readlines())

    def test_compiles_once_then_reuses(self):
        out = os.path.join(self.root, "out")
        self.assertEqual(testlib.compile_model(self.config, out), out)
        testlib.compile_model(self.config, out)
        self.assertEqual(self.call_count(), 1)

    def test_recompiles_after_the_config_changes(self):
        out = os.path.join(self.root, "out")
        testlib.compile_model(self.config, out)
        future = time.time() + 100
        os.utime(self.config, (future, future))
        testlib.compile_model(self.config, out)
        self.assertEqual(self.call_count(), 2)

    def test_recompiles_for_other_arguments(self):
        out = os.path.join(self.root, "out")
        testlib.compile_model(self.config, out)
        testlib.compile_model(self.config, out, ["--schedule", "plain"])
        self.assertEqual(self.call_count(), 2)

    def test_failure_carries_tfmc_stderr(self):
        failing = os.path.join(self.root, "fail.json")
        with open(failing, "w") as f:
            f.write("{}")
        with self.assertRaisesRegex(AssertionError, "field x: bad"):
            testlib.compile_model(failing, os.path.join(self.root, "out"))


CASES_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
import testlib

@testlib.case
def first():
    print("ran first")

@testlib.case(name="renamed")
def second():
    print("ran second")

testlib.run_case("a script of two cases")
"""


class RegisteredCases(unittest.TestCase):
    def run_script(self, text, *args):
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(text)
        try:
            return subprocess.run([sys.executable, f.name, *args], capture_output=True,
                                  text=True, timeout=60)
        finally:
            os.unlink(f.name)

    def test_list_prints_every_case_in_order(self):
        done = self.run_script(CASES_SCRIPT.format(tests=TESTS_DIR), "--list")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.split(), ["first", "renamed"])

    def test_a_case_runs_by_its_name(self):
        done = self.run_script(CASES_SCRIPT.format(tests=TESTS_DIR), "renamed")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("ran second", done.stdout)
        self.assertNotIn("ran first", done.stdout)

    def test_an_unknown_case_is_refused(self):
        done = self.run_script(CASES_SCRIPT.format(tests=TESTS_DIR), "third")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("third", done.stderr)

    def test_a_script_without_cases_fails(self):
        script = CASES_SCRIPT.format(tests=TESTS_DIR).replace("@testlib.case(name=\"renamed\")", "")
        script = script.replace("@testlib.case\n", "")
        done = self.run_script(script, "--list")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("no case registered", done.stderr)


if __name__ == "__main__":
    unittest.main()
