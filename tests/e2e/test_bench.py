"""tfm-bench measures this machine's roofline, then runs compiled models
side by side against it. Nothing here is timed against a bound.

One case per script argument:
  models  aidreams260k compiled with the fast and the plain schedules,
          benchmarked on its real checkpoint at depths 0 and 32: the
          roofline's ceilings are printed first and are positive, each model
          has a row per depth with its schedule and positive rates (and
          --rates prints only those), and the decode rate is held against
          the cache's bandwidth, since 260K parameters fit in any last-level
          cache (before, it was held against the memory's, and read over
          100%). Both are checked against plain's logits first
          (--reference, within 1e-4, shown per row). A run past the context
          is refused, naming it, with no empty table, as are --device with no
          GPU library among the folders and --config for a GPU target.
  config  tfm-bench --config with fast and mullapudi2016: both checked
          against plain (within 1e-4), timed, and listed kernel by kernel in
          the table, the CSV and the JSON, no kernel above 100% of the
          roofline by more than the profiler's sampling allows. Progress
          goes to stderr, the tables alone to stdout, and Halide's profiler
          reports to <out>/<schedule>.check.log, not the terminal.
  checks_first  a misspelled schedule, a missing weight file, a run past the
          context and a failed compile are refused before any roofline is
          measured, the compile with tfmc's own message.
  roofline_kept  the roofline is measured once per machine and thread
          count, kept in the cache folder, and measured again with
          --remeasure."""

import csv
import json
import os
import re
import shutil

import aidreams
import testlib

ROOFLINE = {
    "memory": r"read from memory\s+([0-9.]+) GB/s",
    "cache": r"read from cache\s+([0-9.]+) GB/s",
    "fma": r"f32 FMA peak\s+([0-9.]+) GFLOP/s",
}
# model, schedule, depth, prefill tok/s, GFLOP/s, % peak, decode tok/s, GB/s, % of read, where,
# the weights' own read rate, % of it, and with --reference the logits' difference from its
ROW = re.compile(r"^(\S+)\s+(\S+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9]+)%\s+([0-9.]+)\s+"
                 r"([0-9.]+)\s+([0-9]+)%\s+(cache|memory)\s+([0-9.]+)\s+([0-9]+)%"
                 r"(?:\s+([0-9.e+-]+))?$")


@testlib.case
def models():
    work = testlib.work_dir("e2e-bench")
    models = {}
    for schedule in ("fast", "plain"):
        models[schedule] = testlib.compile_model(aidreams.config(),
                                                 os.path.join(work, schedule),
                                                 ["--schedule", schedule])
    out = testlib.check_run([testlib.bin("tfm-bench"), "--weights", aidreams.checkpoint(),
                             "--repeat", "1", "--prompt", "16", "--decode", "8",
                             "--depth", "0,32", "--reference", models["plain"],
                             models["fast"], models["plain"]])
    print(out)
    for name, pattern in ROOFLINE.items():
        found = re.search(pattern, out)
        assert found, f"no {name} ceiling in the roofline"
        assert float(found.group(1)) > 0, f"{name} ceiling is {found.group(1)}"
    rows = [ROW.match(line) for line in out.splitlines()]
    rows = {(m.group(1), int(m.group(3))): m for m in rows if m}
    for schedule, folder in models.items():
        for depth in (0, 32):
            row = rows.get((folder, depth))
            assert row, f"no row for {folder} at depth {depth}"
            assert row.group(2) == schedule, f"{folder}: schedule {row.group(2)}, not {schedule}"
            for column, what in ((4, "prefill tok/s"), (5, "prefill GFLOP/s"),
                                 (7, "decode tok/s"), (8, "decode GB/s"),
                                 (11, "the weights' read rate")):
                assert float(row.group(column)) > 0, f"{folder}: {what} is {row.group(column)}"
            assert row.group(13) is not None and float(row.group(13)) <= 1e-4, (
                f"{folder}: {row.group(13)} from --reference's logits")
            assert row.group(10) == "cache", (
                f"{folder}: 260K parameters' decode held against {row.group(10)}, not the cache")
    rates = testlib.check_run([testlib.bin("tfm-bench"), "--rates", "--weights",
                               aidreams.checkpoint(), "--repeat", "1", "--prompt", "16",
                               "--decode", "8", models["fast"]])
    assert re.fullmatch(r"rates [0-9.e+-]+ [0-9.e+-]+\n", rates), f"--rates printed {rates!r}"
    # Past the context (128 positions): refused by name, and no table of
    # nothing printed after the roofline.
    result = testlib.run([testlib.bin("tfm-bench"), "--weights", aidreams.checkpoint(),
                          "--repeat", "1", "--prompt", "64", "--decode", "65", models["fast"]])
    testlib.assert_clean_failure(result, ["= 129 positions, more than the context of 128",
                                          models["fast"]], "tfm-bench past the context")
    assert "decode tok/s" not in result[1], f"a table with no rows:\n{result[1]}"
    result = testlib.run([testlib.bin("tfm-bench"), "--weights", aidreams.checkpoint(),
                          "--prompt", "16", "--decode", "8", "--device", "0", models["fast"]])
    testlib.assert_clean_failure(result, ["--device 0 is given, and no model folder holds a GPU"],
                                 "tfm-bench --device with CPU libraries")
    result = testlib.run([testlib.bin("tfm-bench"), "--config", aidreams.config(), "--weights",
                          aidreams.checkpoint(), "--tfmc-args", "--dtype f32 --target opencl"])
    testlib.assert_clean_failure(result, ["--tfmc-args names the GPU target opencl", "--reference"],
                                 "tfm-bench --config for a GPU target")
    print("ok: roofline, both models' rows at two depths checked against plain, decode held "
          "against the cache, a run past the context and a --device without a GPU refused")


@testlib.case
def config():
    out = os.path.join(testlib.work_dir("e2e-bench"), "compare")
    code, text, err = testlib.run([testlib.bin("tfm-bench"), "--config", aidreams.config(),
                                   "--weights", aidreams.checkpoint(), "--schedules",
                                   "fast,mullapudi2016", "--repeat", "1", "--prompt", "16",
                                   "--decode", "32", "--out", out], timeout=900)
    assert code == 0, f"tfm-bench --config: exit {testlib.describe_exit(code)}: {err}"
    print(text)
    assert "tfm-bench: compiling" not in text and "round 1/1" not in text, "progress on stdout"
    assert "tfm-bench: compiling" in err and "total time:" not in err, \
        f"stderr should carry progress and no profiler report:\n{err[:2000]}"
    for schedule in ("plain", "fast"):
        with open(os.path.join(out, schedule + ".check.log")) as f:
            assert "total time:" in f.read(), f"no profiler report in {schedule}.check.log"
    for schedule in ("plain", "fast", "mullapudi2016"):
        row = re.search(rf"^{schedule}\s+(\S+)\s+(\S+)\s+([0-9.e+-]+)$", text, re.M)
        assert row, f"no whole-model row for {schedule}"
        assert float(row.group(3)) <= 1e-4, f"{schedule}: {row.group(3)} from plain's logits"
    with open(os.path.join(out, "kernels.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(out, "results.json")) as f:
        results = json.load(f)
    assert results["roofline"]["fma_gflop_s"] > 0 and results["roofline"]["reads"]
    assert len(results["kernels"]) == len(rows), "the CSV and the JSON list other kernels"
    for schedule in ("fast", "mullapudi2016"):
        kernels = {r["kernel"] for r in rows if r["schedule"] == schedule}
        for kernel in ("prefill_attn_in", "decode_attention", "decode_logits"):
            assert kernel in kernels, f"{schedule}: no row for {kernel}"
            assert re.search(rf"^{kernel} \(a call: ", text, re.M), f"no table for {kernel}"
    # The profiler samples every millisecond: a kernel of under 10 samples
    # has no rate (its time is a few ticks spread over its calls), and one
    # well sampled may not pass the roofline.
    for r in rows:
        if int(r["samples"]) < 10:
            assert r["roofline_pct"] == r["gb_s"] == "", f"{r['kernel']} {r['schedule']}: {r}"
        if int(r["samples"]) >= 20:
            assert float(r["roofline_pct"]) <= 110, f"{r['kernel']} {r['schedule']}: {r}"
    print(f"ok: {len(rows)} kernel rows, every schedule checked against plain")


def fresh_cache(name):
    cache = os.path.join(testlib.work_dir("e2e-bench"), name)
    shutil.rmtree(cache, ignore_errors=True)
    return dict(os.environ, TFM_CACHE_DIR=cache), os.path.join(cache, "roofline")


@testlib.case
def checks_first():
    env, roofline_dir = fresh_cache("checks-first-cache")
    model = testlib.compile_model(aidreams.config(),
                                  os.path.join(testlib.work_dir("e2e-bench"), "fast"),
                                  ["--schedule", "fast"])
    bench = [testlib.bin("tfm-bench"), "--repeat", "1"]
    missing = os.path.join(testlib.work_dir("e2e-bench"), "no-such-weights.bin")
    cases = [
        ([*bench, "--weights", aidreams.checkpoint(), "--config", aidreams.config(),
          "--schedules", "fsat"], ["unknown schedule 'fsat'", "fast, "]),
        ([*bench, "--weights", missing, model], [missing]),
        ([*bench, "--weights", aidreams.checkpoint(), "--prompt", "100", "--decode", "29", model],
         ["= 129 positions, more than the context of 128"]),
        ([*bench, "--weights", aidreams.checkpoint(), "--config", aidreams.config(),
          "--schedules", "fast", "--tfmc-args", "--kv-dtype q8_0", "--out",
          os.path.join(testlib.work_dir("e2e-bench"), "failed-compile")],
         ["--kv-dtype: found 'q8_0'"]),
    ]
    for cmd, mentions in cases:
        result = testlib.run(cmd, env=env)
        testlib.assert_clean_failure(result, mentions, "tfm-bench")
        assert "roofline" not in result[1], f"measured before refusing:\n{result[1]}"
        assert not os.path.exists(roofline_dir), "a roofline was measured before refusing"
        print("ok: " + result[2].strip().splitlines()[-1][:160])


@testlib.case
def roofline_kept():
    env, roofline_dir = fresh_cache("roofline-cache")
    model = testlib.compile_model(aidreams.config(),
                                  os.path.join(testlib.work_dir("e2e-bench"), "fast"),
                                  ["--schedule", "fast"])
    bench = [testlib.bin("tfm-bench"), "--weights", aidreams.checkpoint(), "--repeat", "1",
             "--prompt", "8", "--decode", "8", model]
    runs = [testlib.run(bench, env=env), testlib.run(bench, env=env),
            testlib.run(bench + ["--remeasure"], env=env)]
    for code, out, err in runs:
        assert code == 0, f"tfm-bench: exit {testlib.describe_exit(code)}: {err}"
        assert re.search(ROOFLINE["fma"], out), f"no roofline printed:\n{out}"
    measured = ["measuring this machine's roofline" in err for _, _, err in runs]
    assert measured == [True, False, True], f"measured in runs {measured}, expected the 1st and 3rd"
    assert "measured before" in runs[1][1], runs[1][1]
    assert len(os.listdir(roofline_dir)) == 1, os.listdir(roofline_dir)
    print(f"ok: the roofline is measured once, kept in {os.listdir(roofline_dir)[0]}, and again "
          f"with --remeasure")


if __name__ == "__main__":
    testlib.run_case(__doc__)
