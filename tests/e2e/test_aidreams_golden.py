"""tfm-run reproduces llama2.c's greedy output on the real aidreams260k
model: every token id and the printed text of every line of
goldens/aidreams260k-greedy.jsonl.

llama2.c's `steps` counts positions: it runs the model at positions
0..steps-1 and records the token each one produces, so a full run holds
steps + 1 ids (BOS, the prompt, the generated tokens). It stops early only
when it samples BOS; then the golden holds fewer ids. It never stops at EOS,
so tfm-run runs with --ignore-eos here. With --emit-exe, the standalone
program is also held to needing nothing but glibc, libstdc++ and libgcc."""

import argparse
import os
import json
import sys

import aidreams
import testlib


def prompt_args(prompt):
    # An empty prompt means "from BOS alone", which tfm-run wants said explicitly.
    return ["--from-bos"] if prompt == "" else ["-p", prompt]


def run_ids(program, prompt, n):
    stdout = testlib.check_run([
        *program, "--weights", aidreams.checkpoint(), "--tokenizer", aidreams.tokenizer(),
        "--temp", "0", "--ids", "--ignore-eos", "--threads", "1", "-n", str(n),
        *prompt_args(prompt)])
    text, _, ids_line = stdout.rstrip("\n").rpartition("\n")
    return text + "\n", json.loads(ids_line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a model folder to use instead of compiling "
                        "configs/aidreams260k.json with tfmc")
    parser.add_argument("--emit-exe", action="store_true",
                        help="compile a standalone executable (tfmc --emit exe) and run "
                        "it instead of tfm-run --model")
    parser.add_argument("--no-mmap", action="store_true",
                        help="run tfm-run --no-mmap: the weights read into its own memory")
    parser.add_argument("--skip-passes", metavar="PASSES",
                        help="compile with tfmc --skip-passes PASSES (a pipeline subset)")
    parser.add_argument("--target", choices=["opencl"],
                        help="compile with tfmc --target TARGET: the kernels on a GPU "
                        "through OpenCL (POCL on the CPU-only machines)")
    args = parser.parse_args()
    if args.target:
        testlib.require_opencl_platform()
        out = os.path.join(testlib.work_dir("e2e"), "aidreams260k-" + args.target)
        testlib.compile_model(aidreams.config(), out, ("--target", args.target))
        program = [testlib.bin("tfm-run"), "--model", out]
    elif args.skip_passes:
        out = os.path.join(testlib.work_dir("e2e"), "aidreams260k-skip-" +
                           args.skip_passes.replace(",", "+"))
        testlib.compile_model(aidreams.config(), out, ("--skip-passes", args.skip_passes))
        program = [testlib.bin("tfm-run"), "--model", out]
    elif args.emit_exe:
        out = os.path.join(testlib.work_dir("e2e"), "aidreams260k-exe")
        testlib.compile_model(aidreams.config(), out, ("--emit", "exe"))
        program = [os.path.join(out, "aidreams260k")]
        # The runtime and its dependencies are linked statically: no libLLVM,
        # no ICU where it runs.
        needed = testlib.assert_needs_only_glibc(program[0])
        print(f"ok: {program[0]} needs only {', '.join(sorted(needed))}")
    else:
        aidreams.model_override = args.model
        program = [testlib.bin("tfm-run"), "--model", aidreams.model_dir()]
        if args.no_mmap:
            program.append("--no-mmap")

    golden_path = testlib.shared_path("goldens/aidreams260k-greedy.jsonl")
    with open(golden_path) as f:
        goldens = [json.loads(line) for line in f if line.strip()]
    assert goldens, f"{golden_path}: no cases"

    failures = []
    for case in goldens:
        prompt, golden = case["prompt"], case["ids"]
        assert case["temperature"] == 0, f"{golden_path}: case {prompt!r} is not greedy"
        if case["steps"] != aidreams.CONTEXT_LENGTH:
            failures.append(f"{prompt!r}: golden steps {case['steps']} != context "
                            f"{aidreams.CONTEXT_LENGTH}; this test assumes a full context")
            continue
        # -n 0 prints the prompt's ids alone: BOS and the encoded prompt.
        _, prompt_ids = run_ids(program, prompt, 0)
        n = len(golden) - len(prompt_ids)
        text, ids = run_ids(program, prompt, n)
        if ids != golden:
            first = next((i for i, (a, b) in enumerate(zip(ids, golden)) if a != b),
                         min(len(ids), len(golden)))
            failures.append(f"{prompt!r}: ids differ from position {first}: "
                            f"got {ids[first:first + 8]}, golden {golden[first:first + 8]} "
                            f"({len(ids)} vs {len(golden)} ids)")
        elif text != case["text"]:
            failures.append(f"{prompt!r}: same ids but printed text differs:\n"
                            f"got    {text!r}\ngolden {case['text']!r}")
        else:
            print(f"ok: {prompt!r}: {len(ids)} ids")

    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
