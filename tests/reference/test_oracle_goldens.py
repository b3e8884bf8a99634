"""The oracle against llama2.c run.c's greedy goldens on the real aidreams260K
checkpoint: from the first position past the prompt on, the oracle's argmax
must be the next golden id. Skips (77) without ../shared, fails under CI.

usage: test_oracle_goldens.py   (environment as in the top-level CMakeLists.txt's TFM_TEST_ENV)
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import testlib  # noqa: E402
from llama_oracle import LlamaOracle, config_from_llama2c, read_llama2c  # noqa: E402


def main():
    model = testlib.shared_path("models/aidreams260k/model.bin")
    goldens = testlib.shared_path("goldens/aidreams260k-greedy.jsonl")
    config = config_from_llama2c(model)
    oracle = LlamaOracle(config, read_llama2c(model, config))
    with open(goldens) as f:
        cases = [json.loads(line) for line in f if line.strip()]
    if not cases:
        print(f"FAIL: {goldens} holds no cases")
        return 1
    failures = 0
    for case in cases:
        ids = case["ids"]
        predicted = oracle.logits(ids[:-1]).argmax(dim=-1).tolist()
        # a prompt of n bytes encodes to at most n + 1 tokens (dummy-prefix space)
        first_generated = len(case["prompt"].encode()) + 1
        wrong = [pos for pos in range(first_generated, len(ids) - 1) if predicted[pos] != ids[pos + 1]]
        checked = len(ids) - 1 - first_generated
        status = "ok" if not wrong else f"FAIL at positions {wrong[:8]}"
        print(f"prompt {case['prompt']!r}: {checked} generated tokens checked: {status}")
        failures += bool(wrong)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
