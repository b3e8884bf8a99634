"""Generated libraries in other people's C programs, with nothing of tfmc's
runtime: a program linking two models' libraries gets each its own model
(tfm_model_get_<name>), and a library checks its CPU itself before its
first call: one compiled for AMX tiles, called by a program that never
asked Linux for them, runs where the CPU has AMX and refuses with a
readable error where it does not (TFM_ERR_CPU, last_error naming AMX). A
library whose caches slide (a sliding window) takes a sequence back within
the window, or to position 0, and refuses a call that needs positions it
has dropped (TFM_ERR_CONTEXT, last_error naming them).

One case per script argument."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib  # noqa: E402

# Llama 15M's rows are whole q8_0 blocks, as 8-bit activations need.
LLAMA_15M = "configs/llama-15m.json"
GQA = "tests/reference/configs/gqa-hd64-tied.json"
# A window of 16 keys over 128 positions: 2 layers, keys and values of 2
# heads of 32.
MISTRAL = "tests/reference/configs/mistral-sliding-window.json"
AMX_TARGET = ("x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake-avx512_cannonlake-"
              "avx512_sapphirerapids-amx_int8")

TWO_MODELS = r"""
#include <stdio.h>
#include "llama_15m.h"
#include "ref_gqa_hd64_tied.h"
int main(void) {
  const tfm_model *a = tfm_model_get_llama_15m(), *b = tfm_model_get_ref_gqa_hd64_tied();
  printf("%s %u\n%s %u\n", a->name, a->vocab_size, b->name, b->vocab_size);
  return a == b;
}
"""


def zero_weights_program(model, body):
    """A C program that calls the library of `model` (its config's name:
    the header and tfm_model_get_<model>) with every weight zero (valid in
    any type), argv[1] bytes of them: `body` runs with m, w, kv, arena and
    logits set up."""
    return f"""
#include <stdio.h>
#include <stdlib.h>
#include "{model}.h"
int main(int argc, char **argv) {{
  const tfm_model *m = tfm_model_get_{model}();
  void *zeros = calloc(1, strtoull(argv[1], NULL, 10));
  const void **w = calloc(m->n_weights, sizeof *w);
  for (uint32_t i = 0; i < m->n_weights; ++i)
    w[i] = zeros;
  void *kv = calloc(1, m->kv_cache_bytes);
  void *arena = aligned_alloc(64, (m->arena_bytes + 63) / 64 * 64);
  float *logits = calloc(m->vocab_size, sizeof *logits);
{body}
  return 0;
}}
"""


# Calls prefill on three tokens and prints its return code and last_error,
# or the first logit.
ONE_CALL = zero_weights_program("llama_15m", r"""
  int32_t tokens[3] = {1, 2, 3};
  int rc = m->prefill(w, kv, arena, tokens, 3, 0, logits);
  printf("rc %d\n", rc);
  if (rc)
    printf("error %s\n", m->last_error());
  else
    printf("logit %g\n", logits[0]);
""")

# Prefill calls on one sequence, "POS:COUNT" each, printing each call's
# return code (and last_error when it fails).
SLIDING_CALLS = zero_weights_program("ref_mistral_sliding_window", r"""
  int32_t tokens[64] = {0};
  printf("kv_cache_bytes %llu\n", (unsigned long long)m->kv_cache_bytes);
  for (int i = 2; i < argc; ++i) {
    int pos, count;
    sscanf(argv[i], "%d:%d", &pos, &count);
    int rc = m->prefill(w, kv, arena, tokens, count, pos, logits);
    printf("%d:%d rc %d%s%s\n", pos, count, rc, rc ? " " : "", rc ? m->last_error() : "");
  }
""")


def build_program(name, source, model_dirs):
    work = testlib.work_dir("e2e-library-in-c")
    path = os.path.join(work, name + ".c")
    with open(path, "w") as f:
        f.write(source)
    program = os.path.join(work, name)
    libs = []
    for d in model_dirs:
        with open(os.path.join(d, "manifest.json")) as f:
            libs.append("-l" + json.load(f)["name"])
    command = ["cc", path, "-o", program]
    for d in model_dirs:
        command += ["-I", d, "-L", d, "-Wl,-rpath," + d]
    testlib.check_run(command + libs)
    return program


def compiled(config, name, *options):
    out = os.path.join(testlib.work_dir("e2e-library-in-c"), name)
    return testlib.compile_model(testlib.source_path(config), out, options)


@testlib.case
def two_models_linked():
    a = compiled(LLAMA_15M, "llama-15m")
    b = compiled(GQA, "gqa")
    out = testlib.check_run([build_program("two_models", TWO_MODELS, [a, b])])
    assert out.splitlines() == ["llama_15m 32000", "ref_gqa_hd64_tied 512"], out
    print("ok: " + " / ".join(out.splitlines()))


def largest_tensor_bytes(model_dir):
    """An upper bound of every weight's bytes: its values as f32."""
    with open(os.path.join(model_dir, "manifest.json")) as f:
        tensors = json.load(f)["tensors"]
    largest = 1
    for t in tensors:
        count = 1
        for n in t["shape"]:
            count *= n
        largest = max(largest, 4 * count)
    return largest


@testlib.case
def amx_library_without_permission():
    lib = compiled(LLAMA_15M, "llama-15m-amx", "--target", AMX_TARGET, "--activations", "int8",
                   "--dtype", "q8_0")
    program = build_program("one_call", ONE_CALL, [lib])
    code, out, err = testlib.run([program, str(largest_tensor_bytes(lib))])
    assert code == 0, f"exit {testlib.describe_exit(code)}: {out}{err}"
    if "amx_tile" in testlib.cpu_flags():
        assert out.startswith("rc 0\nlogit "), out
        print("ok: this CPU has AMX; the library asked Linux itself and ran: " + out.split("\n")[1])
    else:
        assert out.startswith("rc -1002\nerror "), out  # TFM_ERR_CPU
        assert "uses AMX tiles, and Linux refused this process their use" in out, out
        print("ok: no AMX here; the library refused by name: " + out.split("\n")[1][:160])


@testlib.case
def sliding_window_goes_back_within_it():
    # Prefill chunks of 8: each cache holds 16 - 1 + 8 = 23 rows, not 128.
    lib = compiled(MISTRAL, "mistral-sliding", "--prefill-chunk", "8")
    program = build_program("sliding_calls", SLIDING_CALLS, [lib])
    # 40 tokens leave positions 17..39 held (the last chunk, at 32, moved
    # the window of its first row, from 17, to the front). Back to 33 needs
    # 18 on: held. Back to 30 needs 15 on: dropped. Position 0 starts again.
    out = testlib.check_run([program, str(largest_tensor_bytes(lib)), "0:40", "33:4", "30:4",
                             "0:3", "2:1"])
    lines = out.splitlines()
    four_caches = 4 * 23 * 64 * 4
    assert lines[0] == f"kv_cache_bytes {four_caches + 64}", lines[0]  # and the bases' line
    assert lines[1:3] == ["0:40 rc 0", "33:4 rc 0"], out
    assert lines[3] == ("30:4 rc -1000 a call at position 30 needs cache rows from position 15, "
                        "but the sliding window caches hold positions from 17 on: a sequence "
                        "goes back no further than its window (or starts again at position 0)"), out
    assert lines[4:] == ["0:3 rc 0", "2:1 rc 0"], out
    print(f"ok: {lines[0]} (every position's: {4 * 128 * 64 * 4}); " + "; ".join(lines[1:4])[:200])


if __name__ == "__main__":
    testlib.run_case(__doc__)
