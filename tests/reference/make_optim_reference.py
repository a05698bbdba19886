#!/usr/bin/env python3
"""Writes tests/reference/optim_reference.txt: torch.optim's trajectories for tapegrad's optimizers.

Regenerate (from the repository root, with an interpreter that has torch, e.g. Debian's
python3-torch):

    /usr/bin/python3 tests/reference/make_optim_reference.py

and commit the result with this script. tests/optim/test_optim_vs_torch.cpp reads the file through
tests/support/reference.hpp and needs no Python. Everything is float64 with a fixed seed, so the
file only changes when this script does. The format is make_reference.py's (a text file of named
tensors, see there).

The optimizer cases feed fixed random gradients (not the gradient of a loss): the test then checks
the optimizer's arithmetic alone. Every case has the same three parameters w (3, 4), b (3), g (4),
runs STEPS updates, and some cases leave a parameter without a gradient on some steps (PyTorch
skips it then: no update, and its Adam step count does not advance).

  <case>.steps                      int64, the number of updates
  <case>.group<k>.params            int64 indices into (w, b, g) of group k's parameters
  <case>.group<k>.<hyper-parameter> the group's settings as torch.optim filled them in (defaults
                                    included), named as tapegrad names them: lr, momentum,
                                    dampening, weight_decay, nesterov (0/1) for SGD; lr, beta1,
                                    beta2, eps, weight_decay, amsgrad (0/1) for Adam and AdamW
  <case>.<p>.init                   the parameter before the first step
  <case>.<p>.grad.<t>               its gradient for step t (absent: no gradient on that step)
  <case>.<p>.after.<t>              the parameter after step t
  <case>.<p>.state.<key>            the optimizer state after the last step: step, exp_avg,
                                    exp_avg_sq, max_exp_avg_sq, momentum_buffer

The clip cases (clip_<name>) hold three gradients <case>.grad<i>, the settings max_norm and
norm_type (inf for the max norm), the returned total_norm and the clipped gradients
<case>.clipped<i> of torch.nn.utils.clip_grad_norm_.
"""

import math
import os
import sys

import torch

from reference_format import write_reference

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optim_reference.txt")

torch.manual_seed(20240620)
torch.set_default_dtype(torch.float64)

entries = []  # (name, tensor)


def put(name, t):
    assert " " not in name
    entries.append((name, t.detach().clone()))


PARAMS = (("w", (3, 4)), ("b", (3,)), ("g", (4,)))
STEPS = 6
ALL = [0, 1, 2]

# name, torch optimizer, groups [(parameter indices, settings)], steps without a gradient {(param, t)}
CASES = [
    ("sgd_plain", "SGD", [(ALL, dict(lr=0.1))], set()),
    ("sgd_momentum", "SGD", [(ALL, dict(lr=0.05, momentum=0.9))], set()),
    ("sgd_dampening_wd", "SGD", [(ALL, dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01))], set()),
    ("sgd_nesterov_wd", "SGD", [(ALL, dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.05))], set()),
    ("sgd_two_groups", "SGD",
     [([0], dict(lr=0.1, momentum=0.9, weight_decay=0.01)), ([1, 2], dict(lr=0.01, momentum=0.5))], set()),
    ("sgd_missing_grads", "SGD", [(ALL, dict(lr=0.05, momentum=0.9))], {("b", 2), ("g", 0), ("g", 1)}),
    ("adam", "Adam", [(ALL, dict(lr=1e-2))], set()),
    ("adam_wd_amsgrad", "Adam",
     [(ALL, dict(lr=2e-2, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1, amsgrad=True))], set()),
    ("adamw", "AdamW", [(ALL, dict(lr=1e-2, weight_decay=0.1))], set()),
    ("adamw_amsgrad", "AdamW", [(ALL, dict(lr=1e-2, betas=(0.9, 0.99), weight_decay=0.05, amsgrad=True))], set()),
    ("adamw_two_groups", "AdamW",
     [([0], dict(lr=3e-2, weight_decay=0.1)), ([1, 2], dict(lr=1e-2, weight_decay=0.0))], set()),
    ("adam_missing_grads", "Adam", [(ALL, dict(lr=1e-2, weight_decay=0.01))], {("b", 2), ("g", 0), ("g", 1)}),
]


def hyper_parameters(kind, group):
    """A torch param group's settings under tapegrad's names."""
    if kind == "SGD":
        return [("lr", group["lr"]), ("momentum", group["momentum"]), ("dampening", group["dampening"]),
                ("weight_decay", group["weight_decay"]), ("nesterov", float(group["nesterov"]))]
    beta1, beta2 = group["betas"]
    return [("lr", group["lr"]), ("beta1", beta1), ("beta2", beta2), ("eps", group["eps"]),
            ("weight_decay", group["weight_decay"]), ("amsgrad", float(group["amsgrad"]))]


for case, kind, groups, missing in CASES:
    params = [torch.randn(shape).requires_grad_() for _, shape in PARAMS]
    for (name, _), p in zip(PARAMS, params):
        put(f"{case}.{name}.init", p)
    torch_groups = [dict(params=[params[i] for i in indices], **settings) for indices, settings in groups]
    opt = getattr(torch.optim, kind)(torch_groups)
    put(f"{case}.steps", torch.tensor(STEPS, dtype=torch.int64))
    for k, (indices, _) in enumerate(groups):
        put(f"{case}.group{k}.params", torch.tensor(indices, dtype=torch.int64))
        for hp, value in hyper_parameters(kind, opt.param_groups[k]):
            put(f"{case}.group{k}.{hp}", torch.tensor(float(value)))
    for t in range(STEPS):
        # Large gradients first, then small ones: the second moment shrinks, so amsgrad's
        # running maximum differs from exp_avg_sq.
        scale = 2.0 if t < 2 else 0.3
        for (name, shape), p in zip(PARAMS, params):
            if (name, t) in missing:
                p.grad = None
            else:
                p.grad = torch.randn(shape) * scale
                put(f"{case}.{name}.grad.{t}", p.grad)
        opt.step()
        for (name, _), p in zip(PARAMS, params):
            put(f"{case}.{name}.after.{t}", p)
    for (name, _), p in zip(PARAMS, params):
        for key, value in opt.state[p].items():
            if value is None:
                continue
            put(f"{case}.{name}.state.{key}", torch.as_tensor(value, dtype=torch.float64).reshape(value.shape))

# ---- clip_grad_norm_
CLIP_CASES = [
    ("clip_l2", 1.0, 2.0),          # clips: the norm is well above 1
    ("clip_l2_no_clip", 100.0, 2.0),  # leaves the gradients alone
    ("clip_inf", 0.5, math.inf),
    ("clip_l1", 2.0, 1.0),
]
for case, max_norm, norm_type in CLIP_CASES:
    params = [torch.randn(shape).requires_grad_() for _, shape in PARAMS]
    for i, (_, shape) in enumerate(PARAMS):
        params[i].grad = torch.randn(shape) * 1.5
        put(f"{case}.grad{i}", params[i].grad)
    total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
    put(f"{case}.max_norm", torch.tensor(max_norm))
    put(f"{case}.norm_type", torch.tensor(norm_type))
    put(f"{case}.total_norm", total)
    for i, p in enumerate(params):
        put(f"{case}.clipped{i}", p.grad)


write_reference(OUT, entries, "make_optim_reference.py")
