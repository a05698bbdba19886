#!/usr/bin/env python3
"""Writes tests/reference/attnres_reference.txt: 2-layer language models whose sublayers read
Attention Residuals (Kimi Team 2026, "Attention Residuals", arXiv 2603.15031) instead of the
residual sum, written in plain PyTorch, and 20 AdamW steps of each.

Regenerate (from the repository root, with Debian's python3-torch):

    /usr/bin/python3 tests/reference/make_attnres_reference.py

and commit the result with this script; tests/nn/test_attnres_vs_torch.cpp reads it. Everything
is float64 with a fixed seed.

The official repository (MoonshotAI/Attention-Residuals) publishes the method as PyTorch-style
pseudocode in its README, not as a runnable model; this reference is written from the paper's
equations (its section 3), in the pseudocode's form (the values stacked, RMSNorm of them as
the keys, one einsum for the logits and one for the sum):

    h_k = sum_{i<k} alpha_{i->k} v_i,   alpha_{i->k} = softmax_i(w_k . RMSNorm_k(v_i))

v_0 the embedding and v_i the i-th sublayer's output; every sublayer (attention, then FFN, of
each block) has its own pseudo-query w_k and RMSNorm gain, and one more pair aggregates the
output before the final norm. Block AttnRes sums the outputs of each block of S sublayers and
attends over the block sums (b_0 the embedding) and the current block's partial sum.

The model is make_nn_reference.py's 2-layer TransformerLM (vocab 11, d_model 8, 2 heads, d_ff
16, exact GELU, learned positions, tied head), its sublayers Pre-LN with LayerNorm:
f(LayerNorm(h)). The queries are drawn around 0 (their init) and the gains around 1 so that
their gradients are not special. The RMSNorm's eps is the block's norm eps, 1e-5.

Each case (attnres_full: S = 1; attnres_block2: S = 2, one AttnRes block per transformer
block as in the official pseudocode) holds:
  <case>.tokens, <case>.targets   int64 (B, T) = (2, 6)
  <case>.param.<name>             every parameter at the start, named as tapegrad names them
  <case>.logits, <case>.loss      of the start
  <case>.grad.<name>              the gradient of the loss at the start
  <case>.adamw.losses             the losses of 20 AdamW steps on the same batch
  <case>.final.<name>             every parameter after the 20 steps
"""

import os

import torch

from lm_case import lm_case, stream_lm_parameters
from make_nn_reference import C, EPS, LM_LAYERS, attention, embed, feed_forward, layer_norm
from reference_format import write_reference

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attnres_reference.txt")

torch.manual_seed(20260316)
torch.set_default_dtype(torch.float64)


def rms_norm(x, weight):
    return x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + EPS) * weight


def depth_attention(sources, p, k):
    """The paper's h_k over sources (each (B, T, C)) with query k's w_k and RMSNorm_k."""
    V = torch.stack(sources)  # (N, B, T, C)
    K = rms_norm(V, p[f"stream.depth.{k}.norm.weight"])
    logits = torch.einsum("d,nbtd->nbt", p[f"stream.depth.{k}.query"], K)
    return torch.einsum("nbt,nbtd->btd", logits.softmax(0), V)


def lm(S, tokens, p):
    blocks, partial = [embed(tokens, p)], []

    def read(k):
        return depth_attention(blocks + ([sum(partial)] if partial else []), p, k)

    def write(v, k):
        partial.append(v)
        if (k + 1) % S == 0:
            blocks.append(sum(partial[1:], partial[0]))
            partial.clear()

    for l in range(LM_LAYERS):
        b = f"blocks.{l}."
        n1 = (p[b + "attn_residual.norm.weight"], p[b + "attn_residual.norm.bias"])
        n2 = (p[b + "ffn_residual.norm.weight"], p[b + "ffn_residual.norm.bias"])
        write(attention(layer_norm(read(2 * l), *n1), p, b), 2 * l)
        write(feed_forward(layer_norm(read(2 * l + 1), *n2), p, b), 2 * l + 1)
    h = read(2 * LM_LAYERS)
    return layer_norm(h, p["final_norm.weight"], p["final_norm.bias"]) @ p["tok_emb.weight"].t()


def stream_parameters():
    """The pseudo-queries and RMSNorm gains, by tapegrad's names."""
    p = {}
    for k in range(2 * LM_LAYERS + 1):
        p[f"stream.depth.{k}.query"] = 0.5 * torch.randn(C)
        p[f"stream.depth.{k}.norm.weight"] = 1.0 + 0.2 * torch.randn(C)
    return p


def main():
    entries = []
    for name, S in (("attnres_full", 1), ("attnres_block2", 2)):
        lm_case(name, entries, stream_lm_parameters(stream_parameters), lambda tokens, p, S=S: lm(S, tokens, p))
    write_reference(OUT, entries, "make_attnres_reference.py")


if __name__ == "__main__":
    main()
