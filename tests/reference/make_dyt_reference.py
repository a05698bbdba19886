#!/usr/bin/env python3
"""Writes tests/reference/dyt_reference.txt: 2-layer Pre-LN language models whose norms are DyT
and Derf, written in plain PyTorch, and 20 AdamW steps of each.

Regenerate (from the repository root, with Debian's python3-torch):

    /usr/bin/python3 tests/reference/make_dyt_reference.py

and commit the result with this script; tests/nn/test_dyt_vs_torch.cpp reads it. Everything is
float64 with a fixed seed.

The model is make_nn_reference.py's 2-layer TransformerLM (vocab 11, d_model 8, 2 heads,
d_ff 16, exact GELU, learned positions, tied head; its attention, feed-forward, embeddings and
block weights are imported from there), Pre-LN, with every LayerNorm replaced by

    dyt   N(x) = g * tanh(alpha * x) + b          (Zhu et al. 2025, arXiv 2503.10622)
    derf  N(x) = g * erf(alpha * x + s) + b       (Chen et al. 2025, arXiv 2512.10938)

as the papers' reference code writes them (jiachenzhu/DyT dynamic_tanh.py, zlab-princeton/Derf
model_derf.patch). alpha starts at the value for the norm's role, ALPHA0 below (the config's
norm_alpha0_attn, _ffn, _final: the C++ test builds its model with them and checks that they
come out where they should), s at 0; g and b are drawn at random so that their gradients are
not special.

Each case (prefix dyt. or derf.) holds:
  <case>.tokens, <case>.targets   int64 (B, T) = (2, 6)
  <case>.param.<name>             every parameter at the start, named as tapegrad names them
  <case>.logits, <case>.loss      of the start
  <case>.grad.<name>              the gradient of the loss at the start
  <case>.adamw.losses             the losses of 20 AdamW steps on the same batch (lr 1e-2,
                                  betas (0.9, 0.95), eps 1e-8, weight decay 0.1 on everything:
                                  make_llama_reference's adamw_losses)
  <case>.final.<name>             every parameter after the 20 steps
"""

import os

import torch

from lm_case import lm_case
from make_nn_reference import LM_LAYERS, attention, embed, feed_forward, lm_parameters
from reference_format import write_reference

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dyt_reference.txt")

ALPHA0 = {"attn_residual": 0.8, "ffn_residual": 0.4, "final_norm": 0.6}  # attention, ffn, final

torch.manual_seed(20261211)
torch.set_default_dtype(torch.float64)


def norm(kind, x, p, name):
    """The point-wise norm called name (e.g. blocks.0.attn_residual.norm)."""
    if kind == "dyt":
        return p[name + ".weight"] * torch.tanh(p[name + ".alpha"] * x) + p[name + ".bias"]
    return p[name + ".weight"] * torch.erf(p[name + ".alpha"] * x + p[name + ".shift"]) + p[name + ".bias"]


def lm(kind, tokens, p):
    """Pre-LN: h = x + Attn(N1(x)); y = h + FFN(N2(h)); the final norm; the tied head."""
    h = embed(tokens, p)
    for l in range(LM_LAYERS):
        b = f"blocks.{l}."
        h = h + attention(norm(kind, h, p, b + "attn_residual.norm"), p, b)
        h = h + feed_forward(norm(kind, h, p, b + "ffn_residual.norm"), p, b)
    return norm(kind, h, p, "final_norm") @ p["tok_emb.weight"].t()


def parameters(kind):
    """make_nn_reference's Pre-LN LM weights, each norm given its alpha (and s)."""
    p = lm_parameters("pre")
    for name in [n[: -len(".weight")] for n in p if n.endswith("norm.weight")]:
        role = "final_norm" if name == "final_norm" else name.split(".")[2]
        p[name + ".alpha"] = torch.tensor([ALPHA0[role]])
        if kind == "derf":
            p[name + ".shift"] = torch.zeros(1)
    return {n: t.requires_grad_() for n, t in p.items()}


def case(kind, entries):
    lm_case(kind, entries, parameters(kind), lambda tokens, p: lm(kind, tokens, p))


def main():
    entries = []
    for kind in ("dyt", "derf"):
        case(kind, entries)
    write_reference(OUT, entries, "make_dyt_reference.py")


if __name__ == "__main__":
    main()
