#!/usr/bin/env python3
"""Writes tests/reference/ngpt_reference.txt: a 2-layer nGPT language model (Loshchilov, Hsieh,
Sun, Ginsburg 2024, "nGPT: Normalized Transformer with Representation Learning on the
Hypersphere", arXiv 2410.01131) written in plain PyTorch as NVIDIA/ngpt's model.py writes its
Block and GPT with use_nGPT = 1, and 20 AdamW steps, each followed by that repository's
normalize_matrices (every matrix back to unit vectors along d_model).

Regenerate (from the repository root, with Debian's python3-torch):

    /usr/bin/python3 tests/reference/make_ngpt_reference.py

and commit the result with this script; tests/nn/test_ngpt_vs_torch.cpp reads it. Everything
is float64 with a fixed seed.

The model: vocab 11, d_model 8, 2 heads of 4 dims, SwiGLU of width 16, no biases, untied head,
no final norm. Where it departs from NVIDIA/ngpt's code, on purpose (docs/residuals.md says why):
  * RoPE is Hugging Face's rotate_half layout (tapegrad's default), not that repository's
    apply_rotary_position_embeddings;
  * the scaled parametrization's s_init is 1/sqrt(d_model) (the paper's), not 1/sqrt(1024);
  * u is scaled by s_u alone, v by s_v * sqrt(d_model) (the paper's); the repository scales
    both by sqrt(d_model), which Norm(MLP(h)) removes;
  * tapegrad's names: query, key and value are the rows of attn.qkv.weight, c_fc's two halves
    are ffn.fc_gate (u) and ffn.fc1 (v, the one passed through SiLU), mlp_c_proj is ffn.fc2.
The learned vectors are drawn around their initial values (and s_z, the eigen learning rates
larger) so that their gradients are not special and 20 steps learn.

Entries (tapegrad's parameter names):
  tokens, targets        int64 (B, T) = (2, 6)
  param.<name>           every parameter at the start (matrices with unit rows or columns)
  logits, loss           of the start
  grad.<name>            the gradient of the loss at the start
  adamw.losses           the losses of 20 AdamW steps on the same batch (lr 1e-2, betas
                         (0.9, 0.95), eps 1e-8, weight decay 0.1 on every parameter), each
                         step followed by the renormalization
  final.<name>           every parameter after the 20 steps
"""

import math
import os

import torch
import torch.nn.functional as F

from reference_format import write_reference

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ngpt_reference.txt")

VOCAB, C, H, D_FF, LAYERS, B, T = 11, 8, 2, 16, 2, 2, 6
D = C // H
THETA = 10000.0
BASE_SCALE = 1.0 / math.sqrt(C)  # s_init of alpha, s_qk, s_z (NVIDIA/ngpt: 1/sqrt(1024))
ALPHA_INIT, SQK_INIT, SUV_INIT, SUV_SCALE, SZ_INIT = 0.05, 1.0, 1.0, 1.0, 1.0
ADAMW = dict(lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
STEPS = 20

torch.manual_seed(20261207)
torch.set_default_dtype(torch.float64)


def justnorm(x, dim=-1):
    return x / x.norm(p=2, dim=dim, keepdim=True)


def rope(x):
    """x: (B, H, T, D), Hugging Face's rotate_half layout."""
    inv_freq = 1.0 / (THETA ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
    freqs = torch.outer(torch.arange(x.shape[2], dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    x1, x2 = x[..., : D // 2], x[..., D // 2 :]
    return x * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()


def block(h, p, b):
    """NVIDIA/ngpt's Block.forward with use_nGPT = 1."""
    Bn, Tn, _ = h.shape
    w = p[b + "attn.qkv.weight"]  # rows [query | key | value]
    q, k, v = [(h @ w[i * C : (i + 1) * C].t()).view(Bn, Tn, H, D).transpose(1, 2) for i in range(3)]
    q, k = rope(q), rope(k)
    sqk = (p[b + "attn.s_qk"] * (SQK_INIT / BASE_SCALE)).view(1, H, 1, D)
    q, k = sqk * justnorm(q), sqk * justnorm(k)
    future = torch.triu(torch.full((Tn, Tn), float("-inf")), diagonal=1)
    y = torch.softmax(q @ k.transpose(-2, -1) * math.sqrt(D) + future, dim=-1) @ v  # softmax scale sqrt(D)
    h_att = y.transpose(1, 2).reshape(Bn, Tn, C) @ p[b + "attn.out_proj.weight"].t()

    lr = torch.abs(p[b + "attn_residual.eigen_lr"] * (ALPHA_INIT / BASE_SCALE))
    A_norm, B_norm = justnorm(h), justnorm(h_att)
    h = justnorm(A_norm + lr * (B_norm - A_norm))

    u = (h @ p[b + "ffn.fc_gate.weight"].t()) * (p[b + "ffn.s_u"] * (SUV_INIT / SUV_SCALE))
    v = (h @ p[b + "ffn.fc1.weight"].t()) * (p[b + "ffn.s_v"] * (SUV_INIT / SUV_SCALE * math.sqrt(C)))
    h_mlp = (u * F.silu(v)) @ p[b + "ffn.fc2.weight"].t()

    lr = torch.abs(p[b + "ffn_residual.eigen_lr"] * (ALPHA_INIT / BASE_SCALE))
    A_norm, B_norm = justnorm(h), justnorm(h_mlp)
    return justnorm(A_norm + lr * (B_norm - A_norm))


def lm(tokens, p):
    """NVIDIA/ngpt's GPT.forward: no position table, no final norm, logits scaled by s_z."""
    x = p["tok_emb.weight"][tokens]
    for l in range(LAYERS):
        x = block(x, p, f"blocks.{l}.")
    return (p["s_z"] * (SZ_INIT / BASE_SCALE)) * (x @ p["lm_head.weight"].t())


# Which dim of each matrix runs along d_model (NVIDIA/ngpt's normalize_matrices): 1 for the
# rows of what reads the stream, 0 for the columns of what writes it.
def matrix_dims():
    dims = {"tok_emb.weight": 1, "lm_head.weight": 1}
    for l in range(LAYERS):
        b = f"blocks.{l}."
        dims.update({b + "attn.qkv.weight": 1, b + "attn.out_proj.weight": 0, b + "ffn.fc1.weight": 1,
                     b + "ffn.fc_gate.weight": 1, b + "ffn.fc2.weight": 0})
    return dims


def normalize_matrices(p):
    with torch.no_grad():
        for name, dim in matrix_dims().items():
            p[name].copy_(justnorm(p[name], dim))


def parameters():
    """tapegrad's names (its order does not matter: the test loads them by name)."""

    def around(value, n, spread=0.2):
        return value * (1.0 + spread * torch.randn(n))

    p = {"tok_emb.weight": torch.randn(VOCAB, C)}
    for l in range(LAYERS):
        b = f"blocks.{l}."
        p.update({
            b + "attn.qkv.weight": torch.randn(3 * C, C),
            b + "attn.out_proj.weight": torch.randn(C, C),
            b + "attn.s_qk": around(BASE_SCALE, C),
            b + "ffn.fc1.weight": torch.randn(D_FF, C),
            b + "ffn.fc_gate.weight": torch.randn(D_FF, C),
            b + "ffn.fc2.weight": torch.randn(C, D_FF),
            b + "ffn.s_u": around(SUV_SCALE, D_FF),
            b + "ffn.s_v": around(SUV_SCALE, D_FF),
            b + "attn_residual.eigen_lr": around(4 * BASE_SCALE, C),  # alpha about 0.2
            b + "ffn_residual.eigen_lr": around(4 * BASE_SCALE, C),
        })
    p["s_z"] = around(4 * BASE_SCALE, VOCAB)  # s_z about 4: logits that can fit 12 targets
    p["lm_head.weight"] = torch.randn(VOCAB, C)
    normalize_matrices(p)
    return {n: t.requires_grad_() for n, t in p.items()}


def main():
    p = parameters()
    tokens = torch.randint(0, VOCAB, (B, T))
    targets = torch.randint(0, VOCAB, (B, T))
    entries = [("tokens", tokens), ("targets", targets)]
    entries += [(f"param.{n}", t.detach().clone()) for n, t in p.items()]

    def loss_of():
        return F.cross_entropy(lm(tokens, p).reshape(-1, VOCAB), targets.reshape(-1))

    logits = lm(tokens, p)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    loss.backward()
    entries += [("logits", logits.detach()), ("loss", loss.detach())]
    entries += [(f"grad.{n}", t.grad.detach().clone()) for n, t in p.items()]

    for t in p.values():
        t.grad = None
    opt = torch.optim.AdamW(list(p.values()), **ADAMW)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=True)
        step_loss = loss_of()
        step_loss.backward()
        opt.step()
        normalize_matrices(p)  # NVIDIA/ngpt's train.py: after every optimizer step
        losses.append(step_loss.item())
    assert losses[-1] < losses[0] - 0.5, losses  # it learns: the comparison is not of a flat line
    entries.append(("adamw.losses", torch.tensor(losses)))
    entries += [(f"final.{n}", t.detach().clone()) for n, t in p.items()]
    write_reference(OUT, entries, "make_ngpt_reference.py")


if __name__ == "__main__":
    main()
