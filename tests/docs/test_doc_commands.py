"""Runs the commands of one Markdown file (README.md or docs/*.md), so that
none can go stale.

Every fenced block whose info string starts with `sh` is run with bash -euo
pipefail, in order, from the repository root, each block after the one
before it (a page reads as a session: a later block uses what an earlier
one made). Three path prefixes are moved out of the user's way: `~/` is a
scratch home, `generated/` a scratch folder, and `../shared/` the shared
data (TFM_SHARED_DIR). The info string may add:

  exit=N          the block must exit with status N (a refusal shown on
                  purpose) rather than 0, and not by a signal;
  needs=llama.cpp the block runs only where llama.cpp is built (PEERS, as
                  tools/bench_vs_llamacpp.py finds it); elsewhere it is
                  reported as not run.

A `<!-- COMMAND -->` line right before a fenced block says the block is
COMMAND's output: the command is run and its output must be the block.

The one command not run is tools/run-tests.sh: it is this suite (.ci/run
runs it).

usage: test_doc_commands.py FILE.md
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib  # noqa: E402

RUN_ELSEWHERE = {"tools/run-tests.sh": ".ci/run runs it: the suite cannot run itself"}
BLOCK_TIMEOUT_S = 1200
FENCE = re.compile(r"^```(\S*)(.*)$")
OUTPUT_OF = re.compile(r"^<!-- (.+) -->$")


class Block:
    def __init__(self, path, line, lang, options, text, output_of):
        self.where = f"{os.path.relpath(path, testlib.source_path('.'))}:{line}"
        self.lang = lang
        self.options = dict(o.split("=", 1) for o in options.split() if "=" in o)
        self.text = text
        self.output_of = output_of


def blocks_of(path):
    """The fenced blocks of a Markdown file, with the comment line before each."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start = i
        previous = lines[i - 1] if i else ""
        i += 1
        body = []
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise SystemExit(f"{path}:{start + 1}: a fenced block with no closing ```")
        i += 1
        output_of = OUTPUT_OF.match(previous)
        found.append(Block(path, start + 1, fence.group(1), fence.group(2), "\n".join(body),
                           output_of.group(1) if output_of else None))
    return found


def moved_paths(text, home, work, shared):
    """The block with its user paths moved to the scratch home and folder
    and to the shared data."""
    text = re.sub(r"(?<![\w./~-])~/", home + "/", text)
    text = re.sub(r"(?<![\w./-])generated/", work + "/generated/", text)
    return re.sub(r"(?<![\w./-])\.\./shared/", shared + "/", text)


def shared_data_used(text):
    """Every path under ../shared/ the block names: a missing one skips the
    page (fails it under CI), as every data test does."""
    for rel in re.findall(r"\.\./shared/([^\s\"';|)]+)", text):
        testlib.shared_path(rel)


def llama_cpp_built():
    peers = os.environ.get("PEERS", "/tmp/peers")
    return os.path.exists(os.path.join(peers, "llama.cpp", "build", "bin", "llama-bench"))


def without_run_elsewhere(block):
    lines = []
    for line in block.text.split("\n"):
        command = line.split("#")[0].split()
        if command and command[0] in RUN_ELSEWHERE:
            print(f"{block.where}: not run here: {command[0]}: {RUN_ELSEWHERE[command[0]]}")
            continue
        lines.append(line)
    return "\n".join(lines)


def run(script, env, where):
    print(f"--- {where}\n{script}", flush=True)
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=testlib.source_path("."),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=BLOCK_TIMEOUT_S)
    tail = result.stdout[-3000:]
    return result.returncode, result.stdout, tail


def check_block(block, env, paths):
    if block.output_of is not None:
        code, output, tail = run(moved_paths(block.output_of, *paths), env, block.where)
        if code != 0:
            return f"{block.where}: `{block.output_of}` exited {code}:\n{tail}"
        if output.rstrip("\n") != block.text.rstrip("\n"):
            return (f"{block.where}: the block is not what `{block.output_of}` prints now; "
                    f"it prints:\n{output}")
        return None
    if not block.lang.startswith("sh"):
        return None
    if block.options.get("needs") == "llama.cpp" and not llama_cpp_built():
        print(f"{block.where}: not run: llama.cpp is not built (../shared/peers/build.sh, PEERS)")
        return None
    shared_data_used(block.text)
    expected = int(block.options.get("exit", "0"))
    code, _, tail = run(moved_paths(without_run_elsewhere(block), *paths), env, block.where)
    if code != expected:
        return f"{block.where}: exited {code}, expected {expected}:\n{tail}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("markdown")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="tfm-doc-")
    try:
        home, work = os.path.join(scratch, "home"), os.path.join(scratch, "work")
        os.makedirs(os.path.join(home, "models"))
        os.makedirs(os.path.join(work, "generated"))
        shared = os.environ.get("TFM_SHARED_DIR", testlib.source_path("../shared"))
        env = dict(os.environ, HOME=home, TFM_CACHE_DIR=os.path.join(scratch, "cache"),
                   TFM_SHARED_DIR=shared)
        # The build's compiler cache stays where it was.
        env.setdefault("CCACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "ccache"))
        blocks = blocks_of(args.markdown)
        for block in blocks:
            failure = check_block(block, env, (home, work, shared))
            if failure:
                print(f"FAIL: {failure}", flush=True)
                return 1
        print(f"ok: {sum(b.lang.startswith('sh') or b.output_of is not None for b in blocks)} "
              f"blocks of {args.markdown}")
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
