#!/usr/bin/env python3
"""Writes tests/reference/gpas_reference.txt: a 2-layer Pre-LN language model with GPAS after
each sublayer's residual add, written in plain PyTorch, and 20 AdamW steps of it.

Regenerate (from the repository root, with Debian's python3-torch):

    /usr/bin/python3 tests/reference/make_gpas_reference.py

and commit the result with this script; tests/nn/test_gpas.cpp reads it. Everything is float64
with a fixed seed.

The model is make_nn_reference.py's 2-layer TransformerLM (vocab 11, d_model 8, 2 heads, d_ff
16, exact GELU, learned positions, tied head; its attention, feed-forward, embeddings and block
weights are imported from there), Pre-LN with LayerNorm, and after each residual add

    G(u) = u - silu(beta) * u.detach()      (Chen et al. 2025, arXiv 2506.22049)

with one beta per block shared by its two sublayers, as dandingsky/GPAS's GPASBlock (its
pre_gpas layer) applies it. The paper starts beta at 0; here it is drawn at random so that the
stop-gradient is not inert and the gradients are not special.

The case (prefix gpas.) holds lm_case.py's entries: tokens, targets, every parameter, the
logits, loss and gradients at the start, the losses of 20 AdamW steps and the parameters after.
"""

import os

import torch
import torch.nn.functional as F

from lm_case import lm_case
from make_nn_reference import LM_LAYERS, attention, embed, feed_forward, layer_norm, lm_parameters
from reference_format import write_reference

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpas_reference.txt")

torch.manual_seed(20261208)
torch.set_default_dtype(torch.float64)


def norm(x, p, name):
    return layer_norm(x, p[name + ".weight"], p[name + ".bias"])


def gpas(u, beta):
    return u - F.silu(beta) * u.detach()


def lm(tokens, p):
    """h = G(x + Attn(N1(x))); y = G(h + FFN(N2(h))); the final norm; the tied head."""
    h = embed(tokens, p)
    for l in range(LM_LAYERS):
        b = f"blocks.{l}."
        h = gpas(h + attention(norm(h, p, b + "attn_residual.norm"), p, b), p[b + "gate"])
        h = gpas(h + feed_forward(norm(h, p, b + "ffn_residual.norm"), p, b), p[b + "gate"])
    return norm(h, p, "final_norm") @ p["tok_emb.weight"].t()


def parameters():
    p = lm_parameters("pre")
    for l in range(LM_LAYERS):
        p[f"blocks.{l}.gate"] = 0.5 * torch.randn(())
    return {n: t.requires_grad_() for n, t in p.items()}


def main():
    entries = []
    lm_case("gpas", entries, parameters(), lm)
    write_reference(OUT, entries, "make_gpas_reference.py")


if __name__ == "__main__":
    main()
