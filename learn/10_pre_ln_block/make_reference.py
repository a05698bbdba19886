#!/usr/bin/env python3
# make_reference.py — exercise 10's PyTorch reference values: a Pre-LN block written with
# PyTorch's own modules (nn.LayerNorm, nn.MultiheadAttention, nn.Linear and GELU), in float64,
# its output y for one input x and the gradient of L = Σ y² with respect to x, written to
# reference.inc (a C++ fragment test.cpp includes).
#
# Rerun from the repository root, with Debian's python3-torch:
#   /usr/bin/python3 learn/10_pre_ln_block/make_reference.py
#
# The parameters are written out under the exercise's names (ln1, attn.qkv, attn.out_proj, ln2,
# ffn.fc1, ffn.fc2): nn.MultiheadAttention's in_proj is tapegrad's qkv, rows [q | k | v].
import os
import sys

import torch

sys.dont_write_bytecode = True  # no __pycache__ in the sources
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grading"))
from reference import header, values, write  # noqa: E402

torch.manual_seed(10)
B, T, C, HEADS = 2, 3, 8, 2
torch.set_default_dtype(torch.float64)

ln1, ln2 = torch.nn.LayerNorm(C), torch.nn.LayerNorm(C)
attn = torch.nn.MultiheadAttention(C, HEADS, batch_first=True)
fc1, fc2 = torch.nn.Linear(C, 4 * C), torch.nn.Linear(4 * C, C)
with torch.no_grad():  # LayerNorm starts at γ = 1, β = 0: move them, so that a swapped norm shows
    for p in (ln1.weight, ln1.bias, ln2.weight, ln2.bias, attn.in_proj_bias, attn.out_proj.bias):
        p.add_(0.3 * torch.randn(p.shape))


def block(x):
    a = ln1(x)
    h = x + attn(a, a, a, need_weights=False)[0]
    return h + fc2(torch.nn.functional.gelu(fc1(ln2(h))))


x = torch.randn(B, T, C, requires_grad=True)
y = block(x)
(y * y).sum().backward()

parameters = [
    ("ln1.weight", ln1.weight), ("ln1.bias", ln1.bias),
    ("attn.qkv.weight", attn.in_proj_weight), ("attn.qkv.bias", attn.in_proj_bias),
    ("attn.out_proj.weight", attn.out_proj.weight), ("attn.out_proj.bias", attn.out_proj.bias),
    ("ln2.weight", ln2.weight), ("ln2.bias", ln2.bias),
    ("ffn.fc1.weight", fc1.weight), ("ffn.fc1.bias", fc1.bias),
    ("ffn.fc2.weight", fc2.weight), ("ffn.fc2.bias", fc2.bias),
]

lines = []
lines.append("// A Pre-LN block of PyTorch's modules (d_model %d, %d heads, GELU FFN of 4·d_model), float64:" % (C, HEADS))
lines.append("// its parameters under the exercise's names, an input x, y = block(x) and dL/dx of L = Σ y².")
lines.append("namespace reference {")
lines.append("constexpr std::int64_t batch = %d, tokens = %d, d_model = %d, n_heads = %d;" % (B, T, C, HEADS))
lines.append("const std::vector<std::pair<std::string, std::vector<double>>> parameters = {")
lines.append(",\n".join('    {"%s", %s}' % (name, values(p)) for name, p in parameters) + "};")
lines.append("const std::vector<double> x = %s;" % values(x))
lines.append("const std::vector<double> y = %s;" % values(y))
lines.append("const std::vector<double> dL_dx = %s;" % values(x.grad))
lines.append("}  // namespace reference")
write(__file__, header(__file__, "exercise 10 (a Pre-LN block)") + "\n".join(lines) + "\n")
