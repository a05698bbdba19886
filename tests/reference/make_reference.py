#!/usr/bin/env python3
"""Writes tests/reference/ops_reference.txt: PyTorch's answers for the fused ops of tapegrad.

Regenerate (from the repository root, with an interpreter that has torch, e.g. Debian's
python3-torch):

    /usr/bin/python3 tests/reference/make_reference.py

and commit the result with this script. The C++ tests read the file through
tests/support/reference.hpp and need no Python. Everything is float64 with fixed seeds, so
the file only changes when this script does.

Format (text, one tensor per two lines):

    tapegrad-reference 1
    <name> <dtype> <ndim> <d0> <d1> ...
    <values in row-major order, separated by spaces>

dtype is float64 or int64; floats are written with repr(), which round-trips exactly
(up to 17 significant digits). Lines starting with '#' are comments. Each case stores its
inputs (x, weight, targets, ...), the upstream gradient `dout` it was differentiated with,
the output `y` (or `loss`) and the input gradients (`dx`, `dweight`, `dbias`).
"""

import math
import os
import sys

import torch
import torch.nn.functional as F

from reference_format import write_reference

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops_reference.txt")

torch.manual_seed(20240601)
torch.set_default_dtype(torch.float64)

entries = []  # (name, tensor)


def put(name, t):
    assert " " not in name
    entries.append((name, t.detach().clone()))


def randn(*shape, scale=1.0, shift=0.0):
    return torch.randn(shape) * scale + shift


def grads(y, dout, *inputs):
    """Input gradients of y for the upstream gradient dout (None for inputs that are None)."""
    leaves = [t for t in inputs if t is not None]
    got = iter(torch.autograd.grad(y, leaves, dout))
    return [next(got) if t is not None else None for t in inputs]


# ---- softmax / log_softmax, on the last dim and on inner dims
for fn_name, fn in (("softmax", F.softmax), ("log_softmax", F.log_softmax)):
    for case, shape, dim in (("last", (3, 5), -1), ("dim1", (2, 3, 4), 1), ("dim0", (2, 3, 4), 0)):
        x = randn(*shape, scale=2.0).requires_grad_()
        dout = randn(*shape)
        y = fn(x, dim=dim)
        (dx,) = grads(y, dout, x)
        p = f"{fn_name}.{case}."
        put(p + "x", x)
        put(p + "dim", torch.tensor(dim, dtype=torch.int64))
        put(p + "dout", dout)
        put(p + "y", y)
        put(p + "dx", dx)

# ---- gelu, exact and tanh forms
for approximate in ("none", "tanh"):
    x = randn(24, scale=2.5).requires_grad_()
    dout = randn(24)
    y = F.gelu(x, approximate=approximate)
    (dx,) = grads(y, dout, x)
    p = f"gelu_{approximate}."
    put(p + "x", x)
    put(p + "dout", dout)
    put(p + "y", y)
    put(p + "dx", dx)


# ---- layer_norm and rms_norm
def rms_norm(x, normalized_shape, weight, eps):
    # torch 1.13 has no rms_norm: its formula, in float64
    dims = tuple(range(-len(normalized_shape), 0))
    y = x * torch.rsqrt(x.pow(2).mean(dim=dims, keepdim=True) + eps)
    return y * weight if weight is not None else y


norm_cases = (
    # name, input shape, normalized_shape, affine, shift of x (tests the two-pass variance)
    ("2d", (4, 6), (6,), True, 3.0),
    ("3d", (2, 3, 4), (4,), True, 0.0),
    ("3d_ns2", (2, 3, 4), (3, 4), True, -1.0),
    ("noaffine", (3, 5), (5,), False, 0.0),
)
for case, shape, normalized_shape, affine, shift in norm_cases:
    for op in ("layer_norm", "rms_norm"):
        x = randn(*shape, scale=2.0, shift=shift).requires_grad_()
        weight = randn(*normalized_shape, shift=1.0).requires_grad_() if affine else None
        bias = randn(*normalized_shape).requires_grad_() if affine and op == "layer_norm" else None
        dout = randn(*shape)
        if op == "layer_norm":
            eps = 1e-5
            y = F.layer_norm(x, normalized_shape, weight, bias, eps)
        else:
            eps = 1e-6
            y = rms_norm(x, normalized_shape, weight, eps)
        dx, dweight, dbias = grads(y, dout, x, weight, bias)
        p = f"{op}.{case}."
        put(p + "x", x)
        put(p + "normalized_shape", torch.tensor(normalized_shape, dtype=torch.int64))
        put(p + "eps", torch.tensor(eps))
        put(p + "dout", dout)
        put(p + "y", y)
        put(p + "dx", dx)
        if weight is not None:
            put(p + "weight", weight)
            put(p + "dweight", dweight)
        if bias is not None:
            put(p + "bias", bias)
            put(p + "dbias", dbias)


# ---- cross_entropy
def cross_entropy_case(name, logits_shape, targets, reduction, ignore_index, label_smoothing):
    logits = randn(*logits_shape, scale=2.0).requires_grad_()
    loss = F.cross_entropy(logits, targets, reduction=reduction, ignore_index=ignore_index,
                           label_smoothing=label_smoothing)
    dout = randn(*loss.shape)
    (dlogits,) = grads(loss, dout, logits)
    p = f"cross_entropy.{name}."
    put(p + "logits", logits)
    put(p + "targets", targets)
    put(p + "ignore_index", torch.tensor(ignore_index, dtype=torch.int64))
    put(p + "label_smoothing", torch.tensor(label_smoothing))
    put(p + "dout", dout)
    put(p + "loss", loss)
    put(p + "dlogits", dlogits)


targets_nc = torch.tensor([3, -100, 0, 4, -100, 1], dtype=torch.int64)
for reduction in ("mean", "sum", "none"):
    for label_smoothing in (0.0, 0.1):
        case = f"{reduction}_ls{label_smoothing:g}"
        cross_entropy_case(case, (6, 5), targets_nc, reduction, -100, label_smoothing)
# (N, C, d): class dim 1, and an ignore_index that is also a valid class
targets_ncd = torch.tensor([[0, 1, 3], [1, 2, 2]], dtype=torch.int64)
for reduction in ("mean", "none"):
    cross_entropy_case(f"ncd_{reduction}", (2, 4, 3), targets_ncd, reduction, 1, 0.2)
# one unbatched row: logits (C), a 0-d target
cross_entropy_case("single", (7,), torch.tensor(5, dtype=torch.int64), "mean", -100, 0.05)
# every target ignored: the mean is 0/0 = NaN, the gradient zero
cross_entropy_case("all_ignored", (3, 4), torch.tensor([-100, -100, -100]), "mean", -100, 0.1)



# ---- rotary position embedding (RoFormer), x: (B, T, heads, D), positions offset..offset+T-1
def rope_angles(T, D, offset, theta):
    """(T, D/2): position p times the frequency θ^(−2i/D) of pair i."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
    return torch.outer(torch.arange(offset, offset + T, dtype=torch.float64), inv_freq)


def rope_half_split(x, offset, theta):
    """Hugging Face LLaMA: pairs (x_i, x_{i+D/2}), written with rotate_half."""
    D = x.shape[-1]
    angles = torch.cat((rope_angles(x.shape[1], D, offset, theta),) * 2, dim=-1)  # (T, D)
    cos, sin = angles.cos()[None, :, None, :], angles.sin()[None, :, None, :]
    rotate_half = torch.cat((-x[..., D // 2:], x[..., : D // 2]), dim=-1)
    return x * cos + rotate_half * sin


def rope_interleaved(x, offset, theta):
    """Meta's LLaMA code: pairs (x_{2i}, x_{2i+1}) as complex numbers, times e^{i·angle}."""
    B, T, H, D = x.shape
    turn = torch.polar(torch.ones(T, D // 2), rope_angles(T, D, offset, theta))
    pairs = torch.view_as_complex(x.reshape(B, T, H, D // 2, 2).contiguous())
    return torch.view_as_real(pairs * turn[None, :, None, :]).reshape(B, T, H, D)


for name, fn, offset, theta in (("half", rope_half_split, 3, 10000.0), ("interleaved", rope_interleaved, 0, 500.0)):
    x = randn(2, 5, 3, 8).requires_grad_()
    y = fn(x, offset, theta)
    dout = randn(*y.shape)
    (dx,) = grads(y, dout, x)
    p = f"rotary.{name}."
    put(p + "x", x)
    put(p + "offset", torch.tensor(offset, dtype=torch.int64))
    put(p + "theta", torch.tensor(theta))
    put(p + "dout", dout)
    put(p + "y", y)
    put(p + "dx", dx)


# ---- grouped-query attention: each kv head repeated for its G query heads (as Hugging Face's
# repeat_kv), then plain causal softmax attention
def gqa_attention(q, k, v):
    G = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(G, dim=1), v.repeat_interleave(G, dim=1)
    Tq, Tk = q.shape[2], k.shape[2]
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    hidden = torch.ones(Tq, Tk, dtype=torch.bool).triu(1)
    return torch.softmax(scores.masked_fill(hidden, -math.inf), dim=-1) @ v


for name, H, Hkv in (("gqa", 4, 2), ("mqa", 3, 1)):
    q, k, v = randn(2, H, 5, 4).requires_grad_(), randn(2, Hkv, 5, 4).requires_grad_(), randn(2, Hkv, 5, 3).requires_grad_()
    y = gqa_attention(q, k, v)
    dout = randn(*y.shape)
    dq, dk, dv = grads(y, dout, q, k, v)
    p = f"attention.{name}."
    for n, t in (("q", q), ("k", k), ("v", v), ("dout", dout), ("y", y), ("dq", dq), ("dk", dk), ("dv", dv)):
        put(p + n, t)

# ---- erf (Derf's nonlinearity); last, so the draws of the cases above stay what they were
x = randn(24, scale=2.0).requires_grad_()
dout = randn(24)
y = torch.erf(x)
(dx,) = grads(y, dout, x)
for n, t in (("x", x), ("dout", dout), ("y", y), ("dx", dx)):
    put("erf." + n, t)

write_reference(OUT, entries, "make_reference.py")
