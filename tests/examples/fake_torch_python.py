#!/usr/bin/env python3
"""fake_torch_python.py — stands in for `python3 with torch` when depth_study runs its PyTorch twin
(--python), on machines without PyTorch: it checks the call and writes plausible results, so that
a test sees the twin's wiring into the report (its runs, its thread count, its wall time).

    fake_torch_python.py -c 'import torch; print(torch.__version__)'   # prints a version
    fake_torch_python.py SCRIPT DIR --threads 1                          # writes DIR/torch_*.csv

Exits 1 unless it is asked for exactly one thread, as each of tapegrad's worker processes runs.
It sleeps a second, so that the twin's wall time is at least that.
"""
import json
import math
import os
import sys
import time

if sys.argv[1] == "-c":
    print("0.0-fake")
    sys.exit(0)
script, folder, flag, threads = sys.argv[1:5]
if flag != "--threads" or threads != "1":
    sys.exit(f"fake_torch_python: asked for {flag} {threads}, expected --threads 1")
with open(os.path.join(folder, "setup.json")) as f:
    s = json.load(f)
time.sleep(1.0)
results = ["placement,depth,lr,seed,status,initial_loss,final_loss,val_loss,seconds"]
curves = ["placement,depth,lr,seed,step,loss"]
ln_v = math.log(s["vocab_size"])
for L in s["depths"]:
    for placement in s["placements"]:
        for lr in s["lrs"]:
            for seed in s["seeds"]:
                key = f"{placement},{L},{lr!r},{seed}"
                results.append(f"{key},ok,{ln_v!r},{ln_v - 0.5!r},{ln_v - 0.4!r},0.100")
                curves += [f"{key},{step + 1},{ln_v - 0.5 * step / s['steps']!r}" for step in range(s["steps"])]
for name, lines in (("torch_results.csv", results), ("torch_losses.csv", curves)):
    with open(os.path.join(folder, name), "w") as f:
        f.write("\n".join(lines) + "\n")
print(f"fake torch: {len(results) - 1} runs")
