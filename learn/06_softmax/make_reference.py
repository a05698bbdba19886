"""PyTorch's softmax and log_softmax (over the last dim) and their gradients, for exercise 6.

Rerun from the repository's root with Debian's python3-torch:
    /usr/bin/python3 learn/06_softmax/make_reference.py
It writes learn/06_softmax/reference.inc, which test.cpp includes.
"""
import os
import sys

import torch

sys.dont_write_bytecode = True  # no __pycache__ in the sources
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grading"))
from reference import arrays, header, write  # noqa: E402

# rows of every kind: mixed signs, a tie, a row far from 0, a single large entry
x = torch.tensor([[0.5, -1.25, 2.0, 0.0],
                  [3.0, 3.0, -2.0, 1.5],
                  [-30.0, -31.5, -29.0, -30.25],
                  [8.0, 0.1, -0.3, 0.2]], dtype=torch.float64, requires_grad=True)
# the upstream gradient g = dL/dy: the loss is L = Σ g ⊙ y
g = torch.tensor([[1.0, -0.5, 0.25, 2.0],
                  [0.0, 1.5, -1.0, 0.5],
                  [-2.0, 0.75, 1.0, -0.25],
                  [0.3, -0.6, 0.9, -1.2]], dtype=torch.float64)

y = torch.softmax(x, dim=-1)
(dx_softmax,) = torch.autograd.grad((g * y).sum(), x)
z = torch.log_softmax(x, dim=-1)
(dx_log_softmax,) = torch.autograd.grad((g * z).sum(), x)

write(__file__, header(__file__, "exercise 6 (softmax and log-softmax)") + arrays({
    "x": x.detach(), "g": g, "softmax": y.detach(), "log_softmax": z.detach(),
    "softmax_dx": dx_softmax, "log_softmax_dx": dx_log_softmax,
}))
