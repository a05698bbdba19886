"""PyTorch's cross_entropy (mean over the rows) and its gradient, for exercise 8.

Rerun from the repository's root with Debian's python3-torch:
    /usr/bin/python3 learn/08_cross_entropy/make_reference.py
It writes learn/08_cross_entropy/reference.inc, which test.cpp includes.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # no __pycache__ in the sources
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grading"))
from reference import arrays, header, write  # noqa: E402

# 4 rows of 5 classes: a confident right row, a confident wrong one, a flat one, a mixed one
logits = torch.tensor([[0.2, 3.5, -1.0, 0.0, 0.7],
                       [4.0, -2.0, 0.5, 1.0, -0.5],
                       [0.1, 0.1, 0.1, 0.1, 0.1],
                       [-1.5, 2.0, 0.3, -0.8, 1.2]], dtype=torch.float64, requires_grad=True)
targets = torch.tensor([1, 3, 4, 2])
# logits a float64 exp overflows on (exp(1000) = inf) and underflows on (exp(-1000) = 0)
large = torch.tensor([[1000.0, 0.0, -1000.0],
                      [-1000.0, -999.0, -1001.5],
                      [800.0, 803.0, 799.0]], dtype=torch.float64, requires_grad=True)
large_targets = torch.tensor([2, 1, 1])

loss = F.cross_entropy(logits, targets)
(dlogits,) = torch.autograd.grad(loss, logits)
large_loss = F.cross_entropy(large, large_targets)
(large_dlogits,) = torch.autograd.grad(large_loss, large)

write(__file__, header(__file__, "exercise 8 (cross-entropy)") + arrays({
    "logits": logits.detach(), "targets": targets, "loss": loss.detach(), "dlogits": dlogits,
    "large": large.detach(), "large_targets": large_targets, "large_loss": large_loss.detach(),
    "large_dlogits": large_dlogits,
}, ints=("targets", "large_targets")))
