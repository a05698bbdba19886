#!/usr/bin/env python3
# make_reference.py — exercise 9's PyTorch reference values: 5 steps of torch.optim.AdamW on a
# small nn.Linear, in float64, written to reference.inc (a C++ fragment test.cpp includes).
#
# Rerun from the repository root, with Debian's python3-torch:
#   /usr/bin/python3 learn/09_linear_adamw/make_reference.py
#
# The loss is L = Σ (x·Wᵀ + b − target)², the starting W and b, x and target are drawn here and
# written out, so the C++ test starts from the very same numbers (its Generator is not torch's).
import os
import sys

import torch

sys.dont_write_bytecode = True  # no __pycache__ in the sources
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grading"))
from reference import header, values, write  # noqa: E402

torch.manual_seed(9)
IN, OUT, BATCH, STEPS = 3, 2, 4, 5
LR, BETAS, EPS, WEIGHT_DECAY = 0.05, (0.9, 0.999), 1e-8, 0.1

layer = torch.nn.Linear(IN, OUT).double()
x = torch.randn(BATCH, IN, dtype=torch.float64)
target = torch.randn(BATCH, OUT, dtype=torch.float64)

lines = [
    "// torch.optim.AdamW(lr=%r, betas=%r, eps=%r, weight_decay=%r) on one group [weight, bias] of" % (LR, BETAS, EPS, WEIGHT_DECAY),
    "// nn.Linear(%d, %d), float64, loss Σ (x·Wᵀ + b − target)²; the parameters after each step." % (IN, OUT),
    "namespace reference {",
    "constexpr std::int64_t in = %d, out = %d, batch = %d, steps = %d;" % (IN, OUT, BATCH, STEPS),
    "constexpr double lr = %r, beta1 = %r, beta2 = %r, eps = %r, weight_decay = %r;" % (LR, BETAS[0], BETAS[1], EPS, WEIGHT_DECAY),
    "const std::vector<double> weight0 = %s;" % values(layer.weight),
    "const std::vector<double> bias0 = %s;" % values(layer.bias),
    "const std::vector<double> x = %s;" % values(x),
    "const std::vector<double> target = %s;" % values(target),
]
opt = torch.optim.AdamW(layer.parameters(), lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY)
weights, biases = [], []
for _ in range(STEPS):
    opt.zero_grad()
    ((layer(x) - target) ** 2).sum().backward()
    opt.step()
    weights.append(values(layer.weight))
    biases.append(values(layer.bias))
lines.append("const std::vector<std::vector<double>> weight_after = {\n    %s};" % ",\n    ".join(weights))
lines.append("const std::vector<std::vector<double>> bias_after = {\n    %s};" % ",\n    ".join(biases))
lines.append("}  // namespace reference")
write(__file__, header(__file__, "exercise 9 (Linear and AdamW)") + "\n".join(lines) + "\n")
