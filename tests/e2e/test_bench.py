"""tfm-bench measures this machine's roofline, then runs compiled models
side by side against it.

aidreams260k compiled with the fast and the plain schedules, benchmarked on
its real checkpoint: the roofline's three ceilings are printed first and are
positive, each model has its row with its schedule and positive rates, and
the decode rate is held against the cache's bandwidth, since 260K
parameters fit in any last-level cache (before, it was held against the
memory's, and read over 100%). Nothing here is timed against a bound."""

import os
import re
import sys

import aidreams
import testlib

ROOFLINE = {
    "memory": r"read from memory\s+([0-9.]+) GB/s",
    "cache": r"read from cache\s+([0-9.]+) GB/s",
    "fma": r"f32 FMA peak\s+([0-9.]+) GFLOP/s",
}
# model, schedule, prefill tok/s, GFLOP/s, % FMA, decode tok/s, GB/s, % of read, where
ROW = re.compile(r"^(\S+)\s+(\S+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9]+)%\s+([0-9.]+)\s+"
                 r"([0-9.]+)\s+([0-9]+)%\s+(cache|memory)$")


def main():
    work = testlib.work_dir("e2e-bench")
    models = {}
    for schedule in ("fast", "plain"):
        models[schedule] = testlib.compile_model(aidreams.config(),
                                                 os.path.join(work, schedule),
                                                 ["--schedule", schedule])
    out = testlib.check_run([testlib.bin("tfm-bench"), "--weights", aidreams.checkpoint(),
                             "--repeat", "1", "--prompt", "16", "--decode", "8",
                             models["fast"], models["plain"]])
    print(out)
    for name, pattern in ROOFLINE.items():
        found = re.search(pattern, out)
        assert found, f"no {name} ceiling in the roofline"
        assert float(found.group(1)) > 0, f"{name} ceiling is {found.group(1)}"
    rows = [ROW.match(line) for line in out.splitlines()]
    rows = {m.group(1): m for m in rows if m}
    for schedule, folder in models.items():
        row = rows.get(folder)
        assert row, f"no row for {folder}"
        assert row.group(2) == schedule, f"{folder}: schedule {row.group(2)}, not {schedule}"
        for column, what in ((3, "prefill tok/s"), (4, "prefill GFLOP/s"), (6, "decode tok/s"),
                             (7, "decode GB/s")):
            assert float(row.group(column)) > 0, f"{folder}: {what} is {row.group(column)}"
        assert row.group(9) == "cache", (
            f"{folder}: 260K parameters' decode held against {row.group(9)}, not the cache")
    print("ok: roofline, both models' rows, decode held against the cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
