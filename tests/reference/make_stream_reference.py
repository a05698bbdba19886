#!/usr/bin/env python3
"""Writes tests/reference/stream_reference.txt: 2-layer Pre-LN language models whose blocks are
joined across the depth by DenseFormer's depth-weighted averages and by value residual
learning, written in plain PyTorch, and 20 AdamW steps of each.

Regenerate (from the repository root, with Debian's python3-torch):

    /usr/bin/python3 tests/reference/make_stream_reference.py

and commit the result with this script; tests/nn/test_stream_vs_torch.cpp reads it. Everything
is float64 with a fixed seed.

The model is make_nn_reference.py's 2-layer TransformerLM (vocab 11, d_model 8, 2 heads, d_ff
16, exact GELU, learned positions, tied head), Pre-LN with LayerNorm, and

    denseformer     after block l: x = sum_j alpha_l[j] * X_j over X_0 (the embedding) and
                    the block outputs X_1..X_l (Pagliardini et al. 2024, arXiv 2402.02622,
                    as epfml/DenseFormer's DWAModules with dilation 1 and period 1)
    value_residual  the values of block n >= 2: V_n <- lambda1 * V_1 + lambda2 * V_n, V_1 the
                    first block's (Zhou et al. 2024, arXiv 2410.17897, as
                    Zcchill/Value-Residual-Learning's ResFormer, lambdas learned)

The averages' weights and the lambdas are drawn near
their initial values (1 for the newest output and 0 for the others; 0.5 and 0.5) so that their
gradients are not special.

Each case (prefix denseformer. or value_residual.) holds:
  <case>.tokens, <case>.targets   int64 (B, T) = (2, 6)
  <case>.param.<name>             every parameter at the start, named as tapegrad names them
  <case>.logits, <case>.loss      of the start
  <case>.grad.<name>              the gradient of the loss at the start
  <case>.adamw.losses             the losses of 20 AdamW steps on the same batch
                                  (make_llama_reference's adamw_losses)
  <case>.final.<name>             every parameter after the 20 steps
"""

import os

import torch
import torch.nn.functional as F

from lm_case import lm_case, stream_lm_parameters
from make_nn_reference import C, EPS, H, LM_LAYERS, embed, feed_forward, linear
from reference_format import write_reference

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stream_reference.txt")

torch.manual_seed(20261207)
torch.set_default_dtype(torch.float64)


def norm(x, p, name):
    return F.layer_norm(x, (C,), p[name + ".weight"], p[name + ".bias"], EPS)


def attention(x, p, prefix, mix_values):
    """Causal self-attention whose values pass through mix_values first (value residual)."""
    qkv = linear(x, p, prefix + "attn.qkv")  # (B, T, 3C): [q | k | v]
    q, k, v = qkv[..., :C], qkv[..., C : 2 * C], mix_values(qkv[..., 2 * C :])
    q, k, v = [t.reshape(*t.shape[:2], H, C // H).transpose(1, 2) for t in (q, k, v)]  # (B, H, T, D)
    T = x.shape[1]
    future = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # key j > query i
    out = torch.softmax(q @ k.transpose(-2, -1) * (C // H) ** -0.5 + future, dim=-1) @ v
    return linear(out.transpose(1, 2).reshape(x.shape), p, prefix + "attn.out_proj")


def lm(kind, tokens, p):
    x = embed(tokens, p)
    outputs, first_values = [x], []

    def mix_values(v):
        if not first_values:  # block 1: keep V_1
            first_values.append(v)
            return v
        n = len(outputs) - 2  # block n + 2: lambda index n
        return p["stream.lambda1"][n] * first_values[0] + p["stream.lambda2"][n] * v

    for l in range(LM_LAYERS):
        b = f"blocks.{l}."
        mix = mix_values if kind == "value_residual" else (lambda v: v)
        h = x + attention(norm(x, p, b + "attn_residual.norm"), p, b, mix)
        x = h + feed_forward(norm(h, p, b + "ffn_residual.norm"), p, b)
        outputs.append(x)
        if kind == "denseformer":
            alpha = p[f"stream.alphas.{l}.weight"]
            x = sum(alpha[j] * outputs[j] for j in range(len(outputs)))
    return norm(x, p, "final_norm") @ p["tok_emb.weight"].t()


def stream_parameters(kind):
    """The stream's own parameters, by tapegrad's names."""
    s = {}
    if kind == "denseformer":
        for l in range(LM_LAYERS):
            w = 0.2 * torch.randn(l + 2)
            w[-1] += 1.0
            s[f"stream.alphas.{l}.weight"] = w
    else:
        s["stream.lambda1"] = 0.5 + 0.2 * torch.randn(LM_LAYERS - 1)
        s["stream.lambda2"] = 0.5 + 0.2 * torch.randn(LM_LAYERS - 1)
    return s


def case(kind, entries):
    params = stream_lm_parameters(lambda: stream_parameters(kind))
    lm_case(kind, entries, params, lambda tokens, p: lm(kind, tokens, p))


def main():
    entries = []
    for kind in ("denseformer", "value_residual"):
        case(kind, entries)
    write_reference(OUT, entries, "make_stream_reference.py")


if __name__ == "__main__":
    main()
