"""tfm-run takes the flags a llama.cpp user types, meaning what they mean
there (issue 48): -m for a model folder, a GGUF or a Hugging Face folder;
-t for threads; -s for the seed, random by default and printed so that -s
repeats a run; -c/--ctx-size for the context, refused by name past the
compiled one; -f - for a prompt on standard input; a repeated -p refused
rather than keeping the last; -r stop strings; --repeat-penalty and
--repeat-last-n, checked against llama.cpp's rule computed here from the
model's logits; -i; --color; -e; --help with tfm-run's own options only,
with defaults. On aidreams260k and its real checkpoint.

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


GREEDY = ["--temp", "0", "-t", "1"]


def text_of(result, what):
    code, out, err = result
    assert code == 0, f"{what}: exit {testlib.describe_exit(code)}: {err}"
    return out


@testlib.case
def reverse_prompt():
    full = text_of(run("-p", "Once upon a time", "-n", "30", *GREEDY), "no -r")
    generated = full[len("Once upon a time"):]
    stop = generated.split()[1]  # the second word the model writes
    cut = text_of(run("-p", "Once upon a time", "-n", "30", "-r", "never-written", "-r", stop,
                      *GREEDY), "-r " + stop)
    expected = full[:len("Once upon a time") + generated.index(stop) + len(stop)]
    assert cut.rstrip("\n") == expected, f"-r {stop!r}: {cut!r}, expected {expected!r}"
    print(f"ok: -r {stop!r} stops at {cut.strip()!r}; the full run went on to {full.strip()!r}")


def penalized_greedy(logits_of, prompt_ids, steps, penalty, last_n):
    """llama.cpp's repeat penalty (llama_sampler_penalties) before an
    argmax, written from its definition: each distinct token among the last
    `last_n` (prompt included) has its logit divided by the penalty when
    positive, multiplied when not."""
    ids = list(prompt_ids)
    for _ in range(steps):
        logits = logits_of(ids)[-1].astype("float64")
        for token in set(ids[-last_n:]):
            logits[token] = logits[token] / penalty if logits[token] > 0 else logits[token] * penalty
        ids.append(int(logits.argmax()))
    return ids


@testlib.case
def repeat_penalty():
    import numpy as np

    prompt = ["-p", "Once upon a time", "-n", "24"]
    plain = ids_of(run(*prompt, *GREEDY, "--ids"), "no penalty")
    penalized = ids_of(run(*prompt, *GREEDY, "--ids", "--repeat-penalty", "1.5",
                           "--repeat-last-n", "16"), "--repeat-penalty 1.5")
    assert penalized != plain, "--repeat-penalty 1.5 changed nothing"
    prompt_ids = ids_of(run("-p", "Once upon a time", "--tokenize"), "--tokenize")
    scratch = testlib.work_dir("e2e-llamacpp-flags")

    def logits_of(ids):
        # The logits of a sequence of ids: tfm-run --logits of their text
        # would tokenize again, so the ids go through a tokenizer-free path:
        # tfm-logits takes ids.
        out = os.path.join(scratch, "penalty-logits.npy")
        testlib.check_run([testlib.bin("tfm-logits"), "--model", aidreams.model_dir(), "--weights",
                           aidreams.checkpoint(), "--tokens", ",".join(map(str, ids)),
                           "--prefill", "0", "--out", out])
        return np.load(out)

    expected = penalized_greedy(logits_of, prompt_ids, len(penalized) - len(prompt_ids), 1.5, 16)
    assert penalized == expected, f"tfm-run: {penalized}\nllama.cpp's rule: {expected}"
    print(f"ok: --repeat-penalty 1.5 --repeat-last-n 16 gives llama.cpp's {len(expected)} ids, "
          f"unlike no penalty")


@testlib.case
def interactive():
    typed = "Tim saw a dog.\nThe dog\n"
    result = run("-p", "Once upon a time", "-n", "6", "-i", "--ids", *GREEDY, input=typed)
    out = text_of(result, "-i")
    assert out.count("\n> ") == 3, f"expected a '> ' before each of 2 lines and at the end: {out!r}"
    ids = json.loads(out.rstrip("\n").rpartition("\n")[2])
    for line in typed.splitlines(keepends=True):
        line_ids = ids_of(run("-p", line, "--tokenize"), "--tokenize")[1:]  # after BOS
        assert any(ids[i:i + len(line_ids)] == line_ids for i in range(len(ids))), \
            f"the typed {line!r} ({line_ids}) is not in the sequence {ids}"
    print(f"ok: -i answers {len(typed.splitlines())} typed lines in one sequence of {len(ids)} ids")
    # A typed line of 3 MiB, past any context: read in bounded pieces, and
    # the conversation ends saying the context is full.
    code, _, err = run("-n", "2", "-i", *GREEDY, input="x" * (3 << 20) + "\n")
    assert code == 0 and "positions is full" in err, f"exit {testlib.describe_exit(code)}: {err}"


@testlib.case
def color():
    plain = text_of(run("-p", "Once upon a time", "-n", "4", *GREEDY), "no --color")
    colored = text_of(run("-p", "Once upon a time", "-n", "4", "--color", *GREEDY), "--color")
    assert "\x1b[" not in plain, plain
    assert colored == "\x1b[32mOnce upon a time\x1b[0m" + plain[len("Once upon a time"):], colored
    print("ok: --color puts the prompt in green, the model's text plain")


@testlib.case
def escapes():
    written = ids_of(run("-p", "Once\\nupon", "--tokenize"), "no -e")
    escaped = ids_of(run("-p", "Once\\nupon", "-e", "--tokenize"), "-e")
    newline = ids_of(run("-p", "Once\nupon", "--tokenize"), "a real newline")
    assert escaped == newline and written != newline, (written, escaped, newline)
    print("ok: -e reads \\n as a newline; without it the backslash stays")


@testlib.case
def help_lists_own_options_with_defaults():
    out = text_of(testlib.run([testlib.bin("tfm-run"), "--help"]), "--help")
    options = re.findall(r"^  (--?[\w-]+)", out, re.M)
    assert "-c" in options and "(--ctx-size)" in out, "--help does not show -c/--ctx-size"
    foreign = [o for o in options if o.startswith(("--llvm", "--x86", "--amdgpu", "--print-"))]
    assert len(options) < 60 and not foreign, f"--help lists options not tfm-run's: {foreign}"
    for option, default in (("--temp", "0.8"), ("--top-p", "0.95"), ("--repeat-penalty", "1"),
                            ("--repeat-last-n", "64")):
        line = next(l for l in out.splitlines() if l.startswith("  " + option + "="))
        assert f"(default {default})" in line, f"{option}: {line!r}"
    for short in ("-m", "-t", "-s", "-r", "-i", "-e"):
        assert f"({short}" in out, f"--help does not say what {short} is"
    print(f"ok: --help lists {len(options)} options of tfm-run's own, with their defaults")


if __name__ == "__main__":
    testlib.run_case(__doc__)
