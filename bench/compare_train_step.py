#!/usr/bin/env python3
"""compare_train_step.py — tapegrad against PyTorch on the same training step, interleaved.

Runs build/bench/train_step and bench/torch_train_step.py alternately (tapegrad, torch,
tapegrad, torch, ...) so that both see the same machine state, then prints the median of the
per-run medians and the ratios. Both get the same OpenBLAS core type (OPENBLAS_CORETYPE, set
here when unset, as scripts/env.sh does) and the same OpenMP wait (GOMP_SPINCOUNT=1000 unless
OMP_WAIT_POLICY or GOMP_SPINCOUNT is set, as scripts/env.sh does; both use GCC's OpenMP).
tapegrad gets 2 MiB pages (TAPEGRAD_HUGE_PAGES=1 unless set, as scripts/env.sh does; PyTorch 1.13
has no such setting).

    /usr/bin/python3 bench/compare_train_step.py --configs S,M --rounds 3
    /usr/bin/python3 bench/compare_train_step.py --configs M --threads 2 --torch-settings 1x2,2x1
    /usr/bin/python3 bench/compare_train_step.py --configs S,M --libtorch build/bench/libtorch_train_step
    /usr/bin/python3 bench/compare_train_step.py --configs S --train-step '' --libtorch build/bench/libtorch_train_step

--torch-settings lists PyTorch thread settings as TORCHxBLAS (torch threads x
OPENBLAS_NUM_THREADS); the best of them is used for the ratio. --libtorch adds
bench/libtorch_train_step (the PyTorch model in C++, --threads as tapegrad's, same environment) to
each round, after PyTorch. --train-step '' leaves tapegrad out (PyTorch against LibTorch only).
"""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = ("S", "M", "G", "L")  # as in train_step.cpp and torch_train_step.py


def run(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    f = out.split(",")
    return {"median": float(f[3]), "min": float(f[4]), "max": float(f[5]), "tokens_s": float(f[6]),
            "gflops": float(f[7]), "rss": float(f[8])}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configs", default="S,M,G")
    p.add_argument("--placement", default="pre")
    p.add_argument("--threads", type=int, default=1, help="tapegrad's thread count")
    p.add_argument("--torch-settings", default="", help="TORCHxBLAS list (default: '<threads>x<threads>')")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=0, help="timed steps per run (default: 20 for S, 4 for L, 8 for M and G)")
    p.add_argument("--train-step", default=os.path.join(HERE, "..", "build", "bench", "train_step"),
                   help="tapegrad's train_step ('': leave tapegrad out)")
    p.add_argument("--libtorch", default="", help="path to libtorch_train_step: also run LibTorch in each round")
    args = p.parse_args()
    for config in args.configs.split(","):
        if config not in CONFIGS:
            p.error(f"unknown config {config!r} (choose from {', '.join(CONFIGS)})")
    if not args.train_step and not args.libtorch:
        p.error("--train-step '' needs --libtorch")

    env = dict(os.environ)
    if "OMP_WAIT_POLICY" not in env and "GOMP_SPINCOUNT" not in env:
        env["GOMP_SPINCOUNT"] = "1000"
    env.setdefault("TAPEGRAD_HUGE_PAGES", "1")  # tapegrad's 2 MiB pages, as scripts/env.sh sets them
    if "OPENBLAS_CORETYPE" not in env:
        flags = open("/proc/cpuinfo").read()
        if " avx512f" in flags:
            env["OPENBLAS_CORETYPE"] = "SkylakeX"
        elif " avx2" in flags:
            env["OPENBLAS_CORETYPE"] = "Haswell"
    settings = [s.split("x") for s in (args.torch_settings or f"{args.threads}x{args.threads}").split(",")]
    print(f"OPENBLAS_CORETYPE={env.get('OPENBLAS_CORETYPE', 'unset')}, tapegrad threads {args.threads}, "
          f"placement {args.placement}, {args.rounds} rounds")
    for config in args.configs.split(","):
        steps = args.steps or {"S": 20, "L": 4}.get(config, 8)
        warmup = {"S": 3, "L": 1}.get(config, 2)
        common = ["--config", config, "--steps", str(steps), "--warmup", str(warmup), "--csv"]
        ours, theirs, lib = [], {f"{t}x{b}": [] for t, b in settings}, []
        for _ in range(args.rounds):
            if args.train_step:
                ours.append(run([args.train_step, "--threads", str(args.threads), "--placement", args.placement] + common, env))
            for t, b in settings:
                theirs[f"{t}x{b}"].append(run([sys.executable, os.path.join(HERE, "torch_train_step.py"), "--threads", t,
                                              "--blas-threads", b, "--placement", args.placement] + common, env))
            if args.libtorch:
                lib.append(run([args.libtorch, "--threads", str(args.threads), "--placement", args.placement] + common, env))
        med = lambda runs, key="median": statistics.median(r[key] for r in runs)
        line = lambda runs: (f"{med(runs):9.2f}  ({min(r['median'] for r in runs):.2f}..{max(r['median'] for r in runs):.2f})"
                             f"  {med(runs, 'gflops'):.1f} GFLOP/s  peak RSS {med(runs, 'rss'):.0f} MiB")
        print(f"\nconfig {config}: ms/step (median of {args.rounds} runs' medians; min..max of the runs' medians)")
        if ours:
            print(f"  tapegrad {args.threads} thread(s): {line(ours)}")
        best = None
        for name, runs in theirs.items():
            print(f"  pytorch {name:>5}:       {line(runs)}")
            best = name if best is None or med(runs) < med(theirs[best]) else best
        if lib:
            print(f"  libtorch {args.threads} thread(s): {line(lib)}")
        if ours:
            print(f"  speedup over pytorch {best} (its best here): {med(theirs[best]) / med(ours):.2f}x")
        if ours and lib:
            print(f"  speedup over libtorch: {med(lib) / med(ours):.2f}x")
        if lib:
            print(f"  libtorch faster than pytorch {best} by {med(theirs[best]) / med(lib):.2f}x")


if __name__ == "__main__":
    main()
