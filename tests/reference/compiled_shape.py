"""What the comparisons of encoders and encoder-decoders with their oracles
share (compare_embeddings.py, compare_encoder_decoder.py): tfmc's options
they take, --attention, --schedule and --target, and the model folder a
shape is compiled into with them."""

import os

import testlib


def add_arguments(parser):
    parser.add_argument("--attention", help="compile with tfmc --attention ALGORITHM")
    parser.add_argument("--schedule", help="compile with tfmc --schedule NAME")
    parser.add_argument("--target", choices=sorted(testlib.TARGET_CPU_FLAGS),
                        help="compile with tfmc --target TARGET (default: host)")


def compile_shape(args):
    """(work folder, model folder's name, model folder) of args.config
    compiled with the options given; skips where the target cannot run."""
    if args.target:
        testlib.skip_unless_cpu_runs(args.target)
    if args.target == "opencl":
        testlib.require_opencl_platform()
    shape = os.path.splitext(os.path.basename(args.config))[0]
    work = testlib.work_dir(f"reference/{shape}")
    chosen = [(flag, value) for flag, value in (("--attention", args.attention),
                                                 ("--schedule", args.schedule),
                                                 ("--target", args.target)) if value]
    folder = "-".join(["model"] + [value for _, value in chosen])
    model_dir = testlib.compile_model(args.config, os.path.join(work, folder),
                                      [part for pair in chosen for part in pair])
    return work, folder, model_dir
