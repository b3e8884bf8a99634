"""tfm-run takes the flags a llama.cpp user types, meaning what they mean
there (issue 48, in part): -m for a model folder, a GGUF or a Hugging Face
folder; -t for threads; -s for the seed, random by default and printed so
that -s repeats a run; -c/--ctx-size for the context, refused by name past
the compiled one; -f - for a prompt on standard input; and a repeated -p
refused rather than keeping the last. On aidreams260k and its real
checkpoint.

One case per script argument."""

import json
import os
import re

import aidreams
import testlib


def run(*args, input=None, model_flag="--model"):
    return testlib.run([testlib.bin("tfm-run"), model_flag, aidreams.model_dir(), "--weights",
                        aidreams.checkpoint(), "--tokenizer", aidreams.tokenizer(), *args],
                       input=input)


def ids_of(result, what):
    code, out, err = result
    assert code == 0, f"{what}: exit {testlib.describe_exit(code)}: {err}"
    return json.loads(out.rstrip("\n").rpartition("\n")[2])


@testlib.case
def short_model_and_threads():
    greedy = ["-p", "Once upon a time", "-n", "8", "--temp", "0", "--ids"]
    long_form = ids_of(run("--threads", "1", *greedy), "--model, --threads")
    short_form = ids_of(run("-t", "1", *greedy, model_flag="-m"), "-m, -t")
    assert short_form == long_form, f"-m/-t: {short_form}, --model/--threads: {long_form}"
    print(f"ok: -m and -t give the same {len(short_form)} ids as --model and --threads")


@testlib.case
def model_names_a_gguf():
    """--model (-m) takes a .gguf as --model-dir does: a broken one is
    refused as a GGUF, not as a missing model folder."""
    broken = os.path.join(testlib.work_dir("e2e-llamacpp-flags"), "broken.gguf")
    with open(broken, "wb") as f:
        f.write(b"GGUF\x03\x00\x00\x00")
    result = testlib.run([testlib.bin("tfm-run"), "-m", broken, "-p", "hi", "-n", "1"])
    testlib.assert_clean_failure(result, [broken], "-m broken.gguf")
    assert "lib<name>.so" not in result[2] and "folder does not exist" not in result[2], result[2]
    print("ok: " + result[2].strip().splitlines()[-1][:200])


@testlib.case
def random_seed_printed_and_repeated():
    sampled = ["-p", "Once upon a time", "-n", "16", "--temp", "0.8", "--ids", "-t", "1"]
    runs = [run(*sampled) for _ in range(2)]
    seeds = []
    for code, _, err in runs:
        found = re.search(r"^seed: (\d+) \(-s \1 repeats this run\)$", err, re.M)
        assert code == 0 and found, f"no seed printed: {err}"
        seeds.append(found.group(1))
    assert seeds[0] != seeds[1], f"two runs without -s took the same seed {seeds[0]}"
    first = ids_of(runs[0], "first run")
    again = ids_of(run(*sampled, "-s", seeds[0]), "-s " + seeds[0])
    assert again == first, f"-s {seeds[0]} gave {again}, the run that printed it {first}"
    print(f"ok: seeds {seeds[0]} and {seeds[1]}; -s {seeds[0]} repeats the first run")


@testlib.case
def context_size():
    result = run("-p", "Once", "-n", "40", "-c", "32", "--temp", "0")
    testlib.assert_clean_failure(result, ["-n asks for 40", "the context is 32"], "-c 32 -n 40")
    result = run("-p", "Once", "-n", "4", "--ctx-size", "1000")
    testlib.assert_clean_failure(
        result, ["-c/--ctx-size is 1000", "more than the context of 128 the model was compiled "
                 "for"], "--ctx-size past the compiled context")
    ids = ids_of(run("-p", "Once", "-n", "8", "-c", "32", "--temp", "0", "--ids"), "-c 32")
    assert len(ids) <= 32, ids
    print("ok: -c limits the context, --ctx-size past the compiled one is refused by name")


@testlib.case
def prompt_on_standard_input():
    greedy = ["-n", "8", "--temp", "0", "--ids", "-t", "1"]
    from_p = ids_of(run("-p", "Once upon a time", *greedy), "-p")
    for name in ("-", "/dev/stdin"):
        from_stdin = ids_of(run("-f", name, *greedy, input="Once upon a time"), "-f " + name)
        assert from_stdin == from_p, f"-f {name}: {from_stdin}, -p: {from_p}"
    print("ok: -f - and -f /dev/stdin read the prompt from standard input")


@testlib.case
def repeated_prompt_refused():
    result = run("-p", "Once", "-p", "upon", "-n", "1")
    testlib.assert_clean_failure(result, ["-p is given 2 times"], "-p twice")
    print("ok: " + result[2].strip().splitlines()[-1])


if __name__ == "__main__":
    testlib.run_case(__doc__)
