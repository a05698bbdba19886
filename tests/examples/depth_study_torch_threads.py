#!/usr/bin/env python3
"""depth_study_torch_threads.py SCRIPT — depth_study_torch.py runs torch on one thread by default.

Needs no PyTorch: SCRIPT runs against a stand-in `torch` package (written to a temporary folder
and put first on PYTHONPATH) that logs what the script does with threads, until the script stops
at its missing export. Checks that
  (a) OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS are 1 when torch is imported
      (the libraries read them when they load), even where the environment set them to 5, and
      the script calls torch.set_num_threads(1), with no --threads given and with --threads 1;
  (b) --threads 3 asks torch for 3;
  (c) a torch that keeps other threads than it was asked for stops the script, saying so.
Prints the last line only when all hold.
"""
import json
import os
import subprocess
import sys
import tempfile

STUB = '''
import json, os
LOG = os.environ["STUB_LOG"]
def _log(**entry):
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\\n")
_log(import_env={v: os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
__version__ = "stub"
_threads = 8  # a machine's default: all cores
def set_num_threads(n):
    global _threads
    _log(set_num_threads=n)
    if not os.environ.get("STUB_IGNORES"):
        _threads = n
def get_num_threads():
    return _threads
'''


def run(script, args, ignores=False):
    """Runs the script with the stand-in torch; returns (exit status, output, log entries)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "torch", "nn"))
        with open(os.path.join(tmp, "torch", "__init__.py"), "w") as f:
            f.write(STUB)
        with open(os.path.join(tmp, "torch", "nn", "__init__.py"), "w") as f:
            f.write("class Module:\n    pass\n")
        open(os.path.join(tmp, "torch", "nn", "functional.py"), "w").close()
        # An environment that asks for 5 threads: --threads (or its default) must win.
        env = dict(os.environ, OPENBLAS_NUM_THREADS="5", OMP_NUM_THREADS="5", MKL_NUM_THREADS="5")
        env.update(PYTHONPATH=tmp, STUB_LOG=os.path.join(tmp, "log"))
        if ignores:
            env["STUB_IGNORES"] = "1"
        p = subprocess.run([sys.executable, script, os.path.join(tmp, "no-export")] + args, env=env,
                           capture_output=True, text=True, timeout=60)
        log = []
        if os.path.exists(env["STUB_LOG"]):
            log = [json.loads(line) for line in open(env["STUB_LOG"])]
        return p.returncode, p.stdout + p.stderr, log


def main():
    script = sys.argv[1]
    problems = []
    for args, n in (([], 1), (["--threads", "1"], 1), (["--threads", "3"], 3)):
        status, output, log = run(script, args)
        env = log[0].get("import_env") if log else None
        if env != {v: str(n) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}:
            problems.append(f"{args}: the thread variables at `import torch` were {env}, not {n}")
        if {"set_num_threads": n} not in log:
            problems.append(f"{args}: torch.set_num_threads({n}) was not called (log {log})")
        if "setup.json" not in output:  # it went on, to the missing export
            problems.append(f"{args}: expected to stop at the missing setup.json, got: {output[-300:]}")
    status, output, _ = run(script, [], ignores=True)
    if status == 0 or "torch runs on 8 threads after set_num_threads(1)" not in output:
        problems.append(f"a torch on 8 threads was not refused (status {status}): {output[-300:]}")
    for problem in problems:
        print("problem:", problem)
    if problems:
        return 1
    print("depth_study_torch.py: torch on 1 thread by default (its libraries too, whatever the environment says), "
          "--threads honoured, another thread count refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
