#!/usr/bin/env python3
"""Writes tests/reference/hc_reference.txt: 2-layer Pre-LN language models whose stream is
widened to n = 3 copies by Hyper-Connections (dynamic, DHC) and by DeepSeek's mHC, written in
plain PyTorch, and 20 AdamW steps of each.

Regenerate (from the repository root, with Debian's python3-torch):

    /usr/bin/python3 tests/reference/make_hc_reference.py

and commit the result with this script; tests/nn/test_hc_vs_torch.cpp reads it. Everything is
float64 with a fixed seed.

The model is make_nn_reference.py's 2-layer TransformerLM (vocab 11, d_model 8, 2 heads, d_ff
16, exact GELU, learned positions, tied head), Pre-LN with LayerNorm, on a stream of n copies
(B, T, n, C): n copies of the embedding at the start, their sum into the final norm at the end.
Each sublayer k (attention 2l, FFN 2l + 1) mixes the copies as lucidrains/hyper-connections
does, written with einsum over the stream axis:

    hyper_connections  (Zhu et al. 2024, arXiv 2409.19606; lucidrains' HyperConnections with a
                       LayerNorm, the paper's, where lucidrains has an RMSNorm)
        normed = LayerNorm(x) per copy
        alpha  = static_alpha + tanh(normed @ dynamic_alpha_fn) * dynamic_alpha_scale  (.., n, 1 + n)
        beta   = static_beta + tanh(normed @ dynamic_beta_fn) * dynamic_beta_scale     (.., n)
        mix    = einsum('...st,...sd->...td', alpha, x);  h_in, residuals = mix[0], mix[1:]
        x      = residuals + beta[..., None] * F(N(h_in))[..., None, :]
    mhc                (Xie et al. 2025, arXiv 2512.24880, section 4.1)
        v      = RMSNorm(x flattened to n*C)
        pre    = sigmoid(b_pre + alpha_pre * (v @ phi)[:n])
        post   = 2 * sigmoid(b_post + alpha_post * (v @ phi)[n:2n])
        res    = Sinkhorn-Knopp(b_res + alpha_res * (v @ phi)[2n:] as (n, n)), 20 iterations of
                 a column then a row normalization after exp
        x      = einsum('...ij,...jd->...id', res, x) + post[..., None] * F(N(sum_j pre_j x_j))[..., None, :]

The connections' parameters are drawn near their initial values (HC's one-hot, identity and
ones; the small scales) with dynamic weights far from their zero init, so that every term and
every gradient is not special.

Each case (prefix hyper_connections. or mhc.) holds:
  <case>.tokens, <case>.targets   int64 (B, T) = (2, 6)
  <case>.param.<name>             every parameter at the start, named as tapegrad names them
  <case>.logits, <case>.loss      of the start
  <case>.grad.<name>              the gradient of the loss at the start
  <case>.adamw.losses             the losses of 20 AdamW steps on the same batch
  <case>.final.<name>             every parameter after the 20 steps
"""

import os

import torch
import torch.nn.functional as F

from lm_case import lm_case, stream_lm_parameters
from make_nn_reference import C, EPS, LM_LAYERS, embed, feed_forward
from make_stream_reference import attention, norm
from reference_format import write_reference

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hc_reference.txt")
N = 3  # the expansion rate
SINKHORN_ITERATIONS = 20

torch.manual_seed(20261208)
torch.set_default_dtype(torch.float64)


def sinkhorn(logits, iterations):
    m = torch.exp(logits - logits.amax(dim=(-2, -1), keepdim=True).detach())
    for _ in range(iterations):
        m = m / m.sum(dim=-2, keepdim=True)  # columns
        m = m / m.sum(dim=-1, keepdim=True)  # rows
    return m


def hc_connect(x, p, k, branch):
    s = f"stream.connections.{k}."
    normed = F.layer_norm(x, (C,), p[s + "norm.weight"], p[s + "norm.bias"], EPS)
    alpha = p[s + "static_alpha"] + torch.tanh(normed @ p[s + "dynamic_alpha_fn"]) * p[s + "dynamic_alpha_scale"]
    beta = p[s + "static_beta"] + torch.tanh(normed @ p[s + "dynamic_beta_fn"]) * p[s + "dynamic_beta_scale"]
    mix = torch.einsum("...st,...sd->...td", alpha, x)
    branch_input, residuals = mix[..., 0, :], mix[..., 1:, :]
    return residuals + torch.einsum("...d,...s->...sd", branch(branch_input), beta)


def mhc_connect(x, p, k, branch):
    s = f"stream.connections.{k}."
    v = x.reshape(*x.shape[:-2], N * C)
    v = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + EPS) * p[s + "norm.weight"]
    proj = v @ p[s + "phi"]
    pre = torch.sigmoid(p[s + "b_pre"] + p[s + "alpha_pre"] * proj[..., :N])
    post = 2 * torch.sigmoid(p[s + "b_post"] + p[s + "alpha_post"] * proj[..., N : 2 * N])
    res_logits = p[s + "b_res"] + p[s + "alpha_res"] * proj[..., 2 * N :].reshape(*proj.shape[:-1], N, N)
    res = sinkhorn(res_logits, SINKHORN_ITERATIONS)
    y = branch(torch.einsum("...j,...jd->...d", pre, x))
    return torch.einsum("...ij,...jd->...id", res, x) + post[..., None] * y[..., None, :]


def lm(kind, tokens, p):
    h0 = embed(tokens, p)
    x = h0.unsqueeze(-2).expand(*h0.shape[:-1], N, C)  # n copies
    connect = hc_connect if kind == "hyper_connections" else mhc_connect
    for l in range(LM_LAYERS):
        b = f"blocks.{l}."
        x = connect(x, p, 2 * l, lambda h: attention(norm(h, p, b + "attn_residual.norm"), p, b, lambda v: v))
        x = connect(x, p, 2 * l + 1, lambda h: feed_forward(norm(h, p, b + "ffn_residual.norm"), p, b))
    return norm(x.sum(-2), p, "final_norm") @ p["tok_emb.weight"].t()


def near(t, scale=0.2):
    return t + scale * torch.randn(t.shape)


def stream_parameters(kind):
    """The connections' parameters near their init, by tapegrad's names."""
    p = {}
    for k in range(2 * LM_LAYERS):
        s = f"stream.connections.{k}."
        one_hot = torch.zeros(N)
        one_hot[k % N] = 1.0
        if kind == "hyper_connections":
            p[s + "static_alpha"] = near(torch.cat((one_hot[:, None], torch.eye(N)), dim=1))
            p[s + "static_beta"] = near(torch.ones(N))
            p[s + "dynamic_alpha_fn"] = 0.5 * torch.randn(C, 1 + N)
            p[s + "dynamic_alpha_scale"] = near(torch.tensor(0.3), 0.05)
            p[s + "dynamic_beta_fn"] = 0.5 * torch.randn(C)
            p[s + "dynamic_beta_scale"] = near(torch.tensor(0.3), 0.05)
            p[s + "norm.weight"] = near(torch.ones(C))
            p[s + "norm.bias"] = near(torch.zeros(C))
        else:
            p[s + "b_pre"] = near(one_hot)
            p[s + "b_post"] = near(torch.ones(N))
            p[s + "b_res"] = near(torch.eye(N))
            p[s + "phi"] = 0.3 * torch.randn(N * C, 2 * N + N * N)
            for name in ("alpha_pre", "alpha_post", "alpha_res"):
                p[s + name] = near(torch.tensor(0.3), 0.05)
            p[s + "norm.weight"] = near(torch.ones(N * C))
    return p


def case(kind, entries):
    params = stream_lm_parameters(lambda: stream_parameters(kind))
    lm_case(kind, entries, params, lambda tokens, p: lm(kind, tokens, p))


def main():
    entries = []
    for kind in ("hyper_connections", "mhc"):
        case(kind, entries)
    write_reference(OUT, entries, "make_hc_reference.py")


if __name__ == "__main__":
    main()
