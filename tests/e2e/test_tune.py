"""tfmc --tune: each kernel timed under every candidate schedule, checked
against plain first, and the winners recorded in a tuning file that later
compiles read. Nothing here is timed against a bound: which schedule wins is
this machine's business; what is checked is what the record says and that
compiles obey it.

One case per script argument:
  tune  The 15M Llama shape (aidreams260k's kernels are too short for the
        profiler's millisecond samples) tuned with fast (the baseline),
        fast-mv32 and fast-attn8, in a cache folder of its own: the tuning
        file names kernels by the manifest's tuning key and the target
        without the profiler, decode_logits among them; a kernel records
        another schedule than fast only when it measured faster by over 3%,
        and never a schedule that compiled it to fast's own object bytes; a
        kernel without a record (too few
        samples) stays fast; the tuned library's kernels have the recorded
        schedules; a later compile without --tune reads the same choices,
        and --tuning-file none leaves every kernel fast. Refusals: --tune
        with --schedule, an unknown candidate."""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib  # noqa: E402

CANDIDATES = ["fast", "fast-mv32", "fast-attn8"]


def manifest(model):
    with open(os.path.join(model, "manifest.json")) as f:
        return json.load(f)


def compile_with(env, config, out, *args):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [testlib.bin("tfmc"), config, "-o", out, *args]
    returncode, _, stderr = testlib.run(cmd, env=env, timeout=900)
    assert returncode == 0, f"{' '.join(cmd)} failed:\n{stderr}"
    return stderr


@testlib.case
def tune():
    work = testlib.work_dir("e2e-tune")
    cache = os.path.join(work, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, TFM_CACHE_DIR=cache)
    config = testlib.source_path("configs/llama-15m.json")
    tuned = os.path.join(work, "tuned")
    log = compile_with(env, config, tuned, "--tune", "--tune-schedules", ",".join(CANDIDATES),
                       "--tune-threads", "2")
    print(log)
    with open(os.path.join(cache, "tuning.json")) as f:
        tuning = json.load(f)
    assert tuning["format"] == "tfmc-tuning" and tuning["version"] == 1, tuning
    m = manifest(tuned)
    target = "-".join(p for p in m["target"].split("-") if p != "profile")
    records = {(r["target"], r["kernel_key"]): r for r in tuning["records"]}
    kernels = [k for k in m["kernels"] if not k["kernel"].startswith("score_")]
    assert kernels, "the manifest lists no prefill or decode kernels"
    bench = os.path.join(tuned, "tune", "bench")
    recorded = set()
    for k in kernels:
        assert k["tuning_key"], f"{k['kernel']}: no tuning key in the manifest"
        r = records.get((target, k["tuning_key"]))
        if not r:
            assert k["schedule"] == "fast", f"{k['kernel']}: no record, yet {k['schedule']}"
            continue
        recorded.add(k["kernel"])
        assert r["kernel"] == k["kernel"], r
        assert r["schedule"] in CANDIDATES, r
        assert k["schedule"] == r["schedule"], (
            f"{k['kernel']}: compiled with {k['schedule']}, the record says {r['schedule']}")
        if r["schedule"] != "fast":
            assert r["median_ms"] < 0.97 * r["default_ms"], f"not 3% faster than fast: {r}"
            obj = os.path.join("obj", k["kernel"] + ".o")
            with open(os.path.join(bench, r["schedule"], obj), "rb") as a, \
                    open(os.path.join(bench, "fast", obj), "rb") as b:
                assert a.read() != b.read(), f"{r['schedule']} is fast's code: {r}"

    assert "decode_logits" in recorded, f"decode_logits not recorded; records: {tuning}"

    untuned = os.path.join(work, "untuned")
    compile_with(env, config, untuned, "--tuning-file", "none")
    assert {k["schedule"] for k in manifest(untuned)["kernels"]} == {"fast"}
    again = os.path.join(work, "again")
    compile_with(env, config, again)
    assert [k["schedule"] for k in manifest(again)["kernels"]] == \
        [k["schedule"] for k in m["kernels"]], "a later compile chose otherwise"

    refused = testlib.run([testlib.bin("tfmc"), config, "-o", os.path.join(work, "x"), "--tune",
                           "--schedule", "plain"], env=env)
    testlib.assert_clean_failure(refused, ["--tune", "--schedule"], "tfmc --tune --schedule")
    refused = testlib.run([testlib.bin("tfmc"), config, "-o", os.path.join(work, "x"), "--tune",
                           "--tune-schedules", "fast,fastest"], env=env)
    testlib.assert_clean_failure(refused, ["unknown schedule 'fastest'"], "tfmc --tune-schedules")
    chosen = sorted({r["schedule"] for r in tuning["records"]})
    print(f"ok: {len(recorded)} of {len(kernels)} kernels recorded ({', '.join(chosen)}), "
          "compiles obey the record")


if __name__ == "__main__":
    testlib.run_case(__doc__)
