#!/usr/bin/env python3
"""Writes tests/reference/nn_reference.txt: PyTorch's answers for whole tapegrad modules.

Regenerate (from the repository root, with an interpreter that has torch, e.g. Debian's
python3-torch):

    /usr/bin/python3 tests/reference/make_nn_reference.py

and commit the result with this script. tests/nn/test_nn_vs_torch.cpp reads the file through
tests/support/reference.hpp and needs no Python. Everything is float64 with a fixed seed, so
the file only changes when this script does. The format is make_reference.py's (a text file of
named tensors, see there).

The modules are re-implemented here in plain torch from tapegrad's own formulas (nn/*.hpp):

  MultiHeadAttention  qkv = x·W_qkvᵀ + b (3C outputs) viewed as (B, T, 3, H, D); per head
                      softmax(q·kᵀ/√D + causal mask)·v (query i sees keys j <= i); the heads
                      joined back to (B, T, C); out_proj.
  FeedForward         fc2(gelu(fc1(x))), exact GELU x·Φ(x).
  LayerNorm           (x - mean)/sqrt(var + 1e-5)·weight + bias, biased variance.
  TransformerBlock    post  h = N1(x + Attn(x));  y = N2(h + FFN(h))
                      pre   h = x + Attn(N1(x));  y = h + FFN(N2(h))
                      b2t   h = N1(x + Attn(x));  y = N2(h + FFN(h) + x)
                      (N1 = attn_residual.norm, N2 = ffn_residual.norm)
  TransformerLM       h = tok_emb[tokens] + pos_emb[0..T-1]; the blocks (causal); final_norm
                      for pre only; logits = h·Eᵀ with E = tok_emb.weight (tied head).

Each piece is checked inside this script against torch's own modules before anything is
written: F.layer_norm, F.gelu, F.multi_head_attention_forward (torch 1.13 has no
scaled_dot_product_attention; its fused in_proj has the same [q; k; v] row layout as qkv),
nn.TransformerEncoderLayer (post and pre, outputs and every parameter gradient) and
F.cross_entropy.

Cases (prefix of every name in the file):

  block_post, block_pre, block_b2t   one block, B=2, T=5, d_model=8, heads=2, d_ff=16, causal.
      <case>.param.<name>  every parameter, named as tapegrad's named_parameters()
      <case>.grad.<name>   its gradient
      <case>.x, <case>.dx  the input (B, T, C) and its gradient
      <case>.R             the fixed weights of the loss = sum(y * R)
      <case>.y, <case>.loss
  lm_pre, lm_post                     a 2-layer TransformerLM, vocab 11, max_seq_len 8,
      d_model 8, heads 2, d_ff 16; B=2, T=6 (pos_emb rows 6 and 7 are unused: zero gradient).
      <case>.param.<name>, <case>.grad.<name>
      <case>.tokens, <case>.targets   int64 (B, T)
      <case>.logits                   (B, T, V)
      <case>.loss                     mean cross-entropy of logits against targets
  penalty_pre, penalty_post, penalty_b2t   the same LM (b2t: no final norm) with the
      gradient-penalty loss L = f + ‖∂f/∂h‖², f the mean cross-entropy, h = tok_emb[tokens] +
      pos_emb (B, T, C): its parameter gradients need second derivatives of every op. Checked
      here against a central difference of L along a random direction.
      <case>.param.<name>, <case>.grad.<name> (of L)
      <case>.tokens, <case>.targets, <case>.f, <case>.penalty, <case>.loss
"""

import math
import os
import sys

import torch
import torch.nn.functional as F

from reference_format import write_reference

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn_reference.txt")

torch.manual_seed(20240615)
torch.set_default_dtype(torch.float64)

B, T, C, H, D_FF = 2, 5, 8, 2, 16
D = C // H
EPS = 1e-5
VOCAB, MAX_SEQ_LEN, LM_LAYERS, LM_T = 11, 8, 2, 6

entries = []  # (name, tensor)


def put(name, t):
    assert " " not in name
    assert name not in (n for n, _ in entries), name
    entries.append((name, t.detach().clone()))


def assert_close(what, a, b, tol=1e-12):
    diff = (a - b).abs().max().item()
    scale = max(b.abs().max().item(), 1.0)
    assert diff <= tol * scale, f"{what}: torch's own module differs by {diff}"


# ---------------------------------------------------------------- parameters
def block_parameters(prefix=""):
    """The parameters of one TransformerBlock (layernorm, no cross-attention), in the order of
    tapegrad's named_parameters(). Linear weights ~ N(0, 1/in) keep activations O(1); norm gains
    and biases are random too, so that their gradients are not special."""
    p = {}

    def linear(name, n_in, n_out):
        p[prefix + name + ".weight"] = torch.randn(n_out, n_in) / math.sqrt(n_in)
        p[prefix + name + ".bias"] = torch.randn(n_out) * 0.1

    def norm(name):
        p[prefix + name + ".weight"] = 1.0 + 0.2 * torch.randn(C)
        p[prefix + name + ".bias"] = 0.1 * torch.randn(C)

    linear("attn.qkv", C, 3 * C)
    linear("attn.out_proj", C, C)
    linear("ffn.fc1", C, D_FF)
    linear("ffn.fc2", D_FF, C)
    norm("attn_residual.norm")
    norm("ffn_residual.norm")
    return p


def lm_parameters(placement):
    p = {"tok_emb.weight": torch.randn(VOCAB, C), "pos_emb.weight": torch.randn(MAX_SEQ_LEN, C)}
    for l in range(LM_LAYERS):
        p.update(block_parameters(f"blocks.{l}."))
    if placement == "pre":
        p["final_norm.weight"] = 1.0 + 0.2 * torch.randn(C)
        p["final_norm.bias"] = 0.1 * torch.randn(C)
    return p


# ---------------------------------------------------------------- tapegrad's modules, in torch
def layer_norm(x, weight, bias):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # biased, as tapegrad and PyTorch
    return (x - mean) / torch.sqrt(var + EPS) * weight + bias


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def linear(x, p, name):
    return x @ p[name + ".weight"].t() + p[name + ".bias"]


def attention(x, p, prefix):
    Bx, Tx, _ = x.shape
    qkv = linear(x, p, prefix + "attn.qkv")  # (B, T, 3C)
    q, k, v = qkv.reshape(Bx, Tx, 3, H, D).permute(2, 0, 3, 1, 4)  # each (B, H, T, D)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)  # (B, H, T, T)
    hidden = torch.ones(Tx, Tx, dtype=torch.bool).triu(1)  # top-left causal: key j > query i
    probs = torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)
    heads = probs @ v  # (B, H, T, D)
    return linear(heads.transpose(1, 2).reshape(Bx, Tx, C), p, prefix + "attn.out_proj")


def feed_forward(x, p, prefix):
    return linear(gelu(linear(x, p, prefix + "ffn.fc1")), p, prefix + "ffn.fc2")


def block(x, p, placement, prefix=""):
    def n1(h):
        return layer_norm(h, p[prefix + "attn_residual.norm.weight"], p[prefix + "attn_residual.norm.bias"])

    def n2(h):
        return layer_norm(h, p[prefix + "ffn_residual.norm.weight"], p[prefix + "ffn_residual.norm.bias"])

    if placement == "pre":
        h = x + attention(n1(x), p, prefix)
        return h + feed_forward(n2(h), p, prefix)
    h = n1(x + attention(x, p, prefix))
    if placement == "post":
        return n2(h + feed_forward(h, p, prefix))
    assert placement == "b2t"
    return n2(h + feed_forward(h, p, prefix) + x)


def embed(tokens, p):
    return p["tok_emb.weight"][tokens] + p["pos_emb.weight"][: tokens.shape[1]]


def lm(tokens, p, placement):
    return lm_from_embeddings(embed(tokens, p), p, placement)


def lm_from_embeddings(h, p, placement):
    """The LM after its embeddings h (B, T, C): the blocks, final_norm for pre, the tied head."""
    for l in range(LM_LAYERS):
        h = block(h, p, placement, f"blocks.{l}.")
    if placement == "pre":
        h = layer_norm(h, p["final_norm.weight"], p["final_norm.bias"])
    return h @ p["tok_emb.weight"].t()


# ---------------------------------------------------------------- cross-checks against torch
def cross_check_pieces(p, x):
    with torch.no_grad():
        w, b = p["attn_residual.norm.weight"], p["attn_residual.norm.bias"]
        assert_close("layer_norm", layer_norm(x, w, b), F.layer_norm(x, (C,), w, b, EPS))
        z = torch.linspace(-6, 6, 101)
        assert_close("gelu", gelu(z), F.gelu(z, approximate="none"))
        hidden = torch.ones(T, T, dtype=torch.bool).triu(1)
        # F.multi_head_attention_forward is (T, B, C) and uses the same fused [q; k; v] rows
        xt = x.transpose(0, 1)
        theirs, _ = F.multi_head_attention_forward(
            xt, xt, xt, C, H, p["attn.qkv.weight"], p["attn.qkv.bias"], None, None, False, 0.0,
            p["attn.out_proj.weight"], p["attn.out_proj.bias"], training=False, attn_mask=hidden,
            need_weights=False)
        assert_close("attention", attention(x, p, ""), theirs.transpose(0, 1))


def cross_check_encoder_layer(p, x, R, placement, y, grads):
    """nn.TransformerEncoderLayer is post (norm_first=False) or pre (norm_first=True)."""
    layer = torch.nn.TransformerEncoderLayer(C, H, D_FF, dropout=0.0, activation="gelu", batch_first=True,
                                             norm_first=(placement == "pre"))
    ours_to_theirs = {
        "attn.qkv.weight": "self_attn.in_proj_weight", "attn.qkv.bias": "self_attn.in_proj_bias",
        "attn.out_proj.weight": "self_attn.out_proj.weight", "attn.out_proj.bias": "self_attn.out_proj.bias",
        "ffn.fc1.weight": "linear1.weight", "ffn.fc1.bias": "linear1.bias",
        "ffn.fc2.weight": "linear2.weight", "ffn.fc2.bias": "linear2.bias",
        "attn_residual.norm.weight": "norm1.weight", "attn_residual.norm.bias": "norm1.bias",
        "ffn_residual.norm.weight": "norm2.weight", "ffn_residual.norm.bias": "norm2.bias",
    }
    assert sorted(ours_to_theirs) == sorted(p)
    theirs = dict(layer.named_parameters())
    assert sorted(ours_to_theirs.values()) == sorted(theirs)
    with torch.no_grad():
        for ours, name in ours_to_theirs.items():
            theirs[name].copy_(p[ours])
    layer.train()  # the slow path: the fast path has no autograd
    xl = x.detach().clone().requires_grad_()
    out = layer(xl, src_mask=torch.ones(T, T, dtype=torch.bool).triu(1))
    (out * R).sum().backward()
    assert_close(f"TransformerEncoderLayer {placement}: y", y, out)
    assert_close(f"TransformerEncoderLayer {placement}: dx", grads["x"], xl.grad)
    for ours, name in ours_to_theirs.items():
        assert_close(f"TransformerEncoderLayer {placement}: d{ours}", grads[ours], theirs[name].grad)


# ---------------------------------------------------------------- the cases
def block_case(placement):
    case = f"block_{placement}"
    p = {n: t.requires_grad_() for n, t in block_parameters().items()}
    x = torch.randn(B, T, C).requires_grad_()
    R = torch.randn(B, T, C)
    y = block(x, p, placement)
    loss = (y * R).sum()
    names = list(p)
    got = torch.autograd.grad(loss, [p[n] for n in names] + [x])
    grads = dict(zip(names + ["x"], got))

    if placement == "post":
        cross_check_pieces(p, x)
    if placement in ("post", "pre"):
        cross_check_encoder_layer(p, x, R, placement, y, grads)
    if placement == "b2t":  # b2t = post plus the block input before the last norm
        with torch.no_grad():
            n2w, n2b = p["ffn_residual.norm.weight"], p["ffn_residual.norm.bias"]
            h = layer_norm(x + attention(x, p, ""), p["attn_residual.norm.weight"], p["attn_residual.norm.bias"])
            assert_close("b2t", y, F.layer_norm(h + feed_forward(h, p, "") + x, (C,), n2w, n2b, EPS))

    for n in names:
        put(f"{case}.param.{n}", p[n])
    put(f"{case}.x", x)
    put(f"{case}.R", R)
    put(f"{case}.y", y)
    put(f"{case}.loss", loss)
    for n in names:
        put(f"{case}.grad.{n}", grads[n])
    put(f"{case}.dx", grads["x"])


def lm_case(placement):
    case = f"lm_{placement}"
    p = {n: t.requires_grad_() for n, t in lm_parameters(placement).items()}
    tokens = torch.randint(0, VOCAB, (B, LM_T))
    targets = torch.randint(0, VOCAB, (B, LM_T))
    logits = lm(tokens, p, placement)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    with torch.no_grad():  # cross-entropy written out: mean of logsumexp - logit[target]
        picked = logits.reshape(-1, VOCAB).gather(1, targets.reshape(-1, 1)).squeeze(1)
        assert_close("cross_entropy", loss, (torch.logsumexp(logits.reshape(-1, VOCAB), 1) - picked).mean())
    names = list(p)
    got = torch.autograd.grad(loss, [p[n] for n in names])
    assert got[names.index("pos_emb.weight")][LM_T:].abs().max().item() == 0.0

    for n in names:
        put(f"{case}.param.{n}", p[n])
    put(f"{case}.tokens", tokens)
    put(f"{case}.targets", targets)
    put(f"{case}.logits", logits)
    put(f"{case}.loss", loss)
    for n, g in zip(names, got):
        put(f"{case}.grad.{n}", g)


def penalty_case(placement):
    """A gradient penalty: second derivatives through the whole LM (create_graph)."""
    case = f"penalty_{placement}"
    p = {n: t.requires_grad_() for n, t in lm_parameters(placement).items()}
    tokens = torch.randint(0, VOCAB, (B, LM_T))
    targets = torch.randint(0, VOCAB, (B, LM_T))

    def penalized(p):
        h = embed(tokens, p)
        f = F.cross_entropy(lm_from_embeddings(h, p, placement).reshape(-1, VOCAB), targets.reshape(-1))
        (dh,) = torch.autograd.grad(f, h, create_graph=True)
        return f, (dh * dh).sum()

    f, penalty = penalized(p)
    loss = f + penalty
    names = list(p)
    got = torch.autograd.grad(loss, [p[n] for n in names])
    # Cross-check the second derivatives with a central difference of the loss along a random
    # direction u: d/dε L(p + εu) at 0 must equal Σ grad·u.
    u = {n: torch.randn_like(p[n]) for n in names}
    with torch.enable_grad():
        def along(eps):
            f_, pen_ = penalized({n: (p[n] + eps * u[n]).detach().requires_grad_() for n in names})
            return (f_ + pen_).item()
        eps = 1e-5
        numeric = (along(eps) - along(-eps)) / (2 * eps)
    analytic = sum((g * u[n]).sum().item() for n, g in zip(names, got))
    assert abs(numeric - analytic) <= 1e-6 * max(1.0, abs(analytic)), f"{case}: {numeric} vs {analytic}"

    for n in names:
        put(f"{case}.param.{n}", p[n])
    put(f"{case}.tokens", tokens)
    put(f"{case}.targets", targets)
    put(f"{case}.f", f)
    put(f"{case}.penalty", penalty)
    put(f"{case}.loss", loss)
    for n, g in zip(names, got):
        put(f"{case}.grad.{n}", g)


if __name__ == "__main__":
    for placement in ("post", "pre", "b2t"):
        block_case(placement)
    for placement in ("pre", "post"):
        lm_case(placement)
    for placement in ("pre", "post", "b2t"):
        penalty_case(placement)
    write_reference(OUT, entries, "make_nn_reference.py")
