"""PyTorch's layer_norm over the last dim and its three gradients, for exercise 7.

Rerun from the repository's root with Debian's python3-torch:
    /usr/bin/python3 learn/07_layer_norm/make_reference.py
It writes learn/07_layer_norm/reference.inc, which test.cpp includes.
"""
import os
import sys

import torch

sys.dont_write_bytecode = True  # no __pycache__ in the sources
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grading"))
from reference import arrays, header, write  # noqa: E402

gen = torch.Generator().manual_seed(7)
# x of shape (2, 3, 5): dγ and dβ sum over both leading dims; one row far from 0 and wide
x = torch.randn(2, 3, 5, generator=gen, dtype=torch.float64)
x[1, 2] = x[1, 2] * 40.0 + 100.0
x.requires_grad_()
gamma = (torch.randn(5, generator=gen, dtype=torch.float64) + 1.0).requires_grad_()
beta = torch.randn(5, generator=gen, dtype=torch.float64).requires_grad_()
g = torch.randn(2, 3, 5, generator=gen, dtype=torch.float64)  # dL/dy: L = Σ g ⊙ y

y = torch.nn.functional.layer_norm(x, (5,), gamma, beta, eps=1e-5)
dx, dgamma, dbeta = torch.autograd.grad((g * y).sum(), (x, gamma, beta))

write(__file__, header(__file__, "exercise 7 (layer_norm's backward)") + arrays({
    "x": x.detach(), "gamma": gamma.detach(), "beta": beta.detach(), "g": g, "y": y.detach(),
    "dx": dx, "dgamma": dgamma, "dbeta": dbeta,
}))
