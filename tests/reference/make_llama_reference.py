#!/usr/bin/env python3
"""Writes tests/reference/llama_model.safetensors and tests/reference/llama_reference.txt: a
2-layer LLaMA-style language model written in plain PyTorch, its weights (tapegrad's parameter
names), and what tapegrad's `llama_config` model must compute from them.

Regenerate (from the repository root, with Debian's python3-torch):

    /usr/bin/python3 tests/reference/make_llama_reference.py

and commit both files with this script; tests/nn/test_llama_vs_torch.cpp reads them.

The model follows Meta's and Hugging Face's LLaMA: Pre-RMSNorm blocks and a final RMSNorm,
rotary position embeddings (the rotate_half layout) on queries and keys, grouped-query
attention (each key/value head repeated for its queries, Hugging Face's repeat_kv), a SwiGLU
FFN of width 2/3·4·d rounded up to a multiple, no biases, an untied LM head. Everything is
float64. The weights are drawn with a larger scale than LLaMA's 0.02 so that every path
carries a gradient worth comparing.

llama_reference.txt (the format of make_reference.py) holds the tokens and targets, the
logits and the loss, every parameter's gradient ("grad.<name>"), and the losses of 20 AdamW
steps from the same start ("adamw.losses").
"""

import math
import os

import torch
import torch.nn.functional as F

from make_safetensors_reference import write_safetensors
from reference_format import write_reference

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_WEIGHTS = os.path.join(HERE, "llama_model.safetensors")
OUT_REFERENCE = os.path.join(HERE, "llama_reference.txt")

# the shape; tests/nn/test_llama_vs_torch.cpp builds the same
VOCAB, T, B, LAYERS, D_MODEL, HEADS, KV_HEADS, FFN_MULTIPLE = 11, 8, 2, 2, 16, 4, 2, 8
HEAD_DIM = D_MODEL // HEADS
EPS, THETA = 1e-6, 10000.0
ADAMW = dict(lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
STEPS = 20

torch.manual_seed(20261201)
torch.set_default_dtype(torch.float64)


def ffn_hidden(d, multiple_of):
    hidden = int(2 * 4 * d / 3)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


HIDDEN = ffn_hidden(D_MODEL, FFN_MULTIPLE)


def parameters():
    """Tapegrad's names and shapes; the fused qkv holds the rows of q, then k, then v."""
    p = {"tok_emb.weight": torch.randn(VOCAB, D_MODEL)}
    c_kv = KV_HEADS * HEAD_DIM
    for l in range(LAYERS):
        b = f"blocks.{l}."
        p[b + "attn.qkv.weight"] = torch.randn(D_MODEL + 2 * c_kv, D_MODEL) * 0.3
        p[b + "attn.out_proj.weight"] = torch.randn(D_MODEL, D_MODEL) * 0.3
        p[b + "ffn.fc1.weight"] = torch.randn(HIDDEN, D_MODEL) * 0.3
        p[b + "ffn.fc_gate.weight"] = torch.randn(HIDDEN, D_MODEL) * 0.3
        p[b + "ffn.fc2.weight"] = torch.randn(D_MODEL, HIDDEN) * 0.2
        p[b + "attn_residual.norm.weight"] = 1 + 0.2 * torch.randn(D_MODEL)
        p[b + "ffn_residual.norm.weight"] = 1 + 0.2 * torch.randn(D_MODEL)
    p["final_norm.weight"] = 1 + 0.2 * torch.randn(D_MODEL)
    p["lm_head.weight"] = torch.randn(VOCAB, D_MODEL) * 0.3
    return {k: v.requires_grad_() for k, v in p.items()}


def rms_norm(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(x):
    """x: (B, heads, T, D), Hugging Face's apply_rotary_pos_emb."""
    inv_freq = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float64) / HEAD_DIM))
    freqs = torch.outer(torch.arange(x.shape[2], dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def attention(x, p, b):
    Bn, Tn, _ = x.shape
    w = p[b + "attn.qkv.weight"]
    c_kv = KV_HEADS * HEAD_DIM
    q = (x @ w[:D_MODEL].T).view(Bn, Tn, HEADS, HEAD_DIM).transpose(1, 2)
    k = (x @ w[D_MODEL : D_MODEL + c_kv].T).view(Bn, Tn, KV_HEADS, HEAD_DIM).transpose(1, 2)
    v = (x @ w[D_MODEL + c_kv :].T).view(Bn, Tn, KV_HEADS, HEAD_DIM).transpose(1, 2)
    q, k = rope(q), rope(k)
    group = HEADS // KV_HEADS
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # repeat_kv
    scores = q @ k.transpose(-1, -2) / math.sqrt(HEAD_DIM)
    hidden = torch.ones(Tn, Tn, dtype=torch.bool).triu(1)
    out = torch.softmax(scores.masked_fill(hidden, -math.inf), dim=-1) @ v
    return out.transpose(1, 2).reshape(Bn, Tn, D_MODEL) @ p[b + "attn.out_proj.weight"].T


def ffn(x, p, b):
    gate = F.silu(x @ p[b + "ffn.fc1.weight"].T) * (x @ p[b + "ffn.fc_gate.weight"].T)
    return gate @ p[b + "ffn.fc2.weight"].T


def llama(tokens, p):
    h = p["tok_emb.weight"][tokens]
    for l in range(LAYERS):
        b = f"blocks.{l}."
        h = h + attention(rms_norm(h, p[b + "attn_residual.norm.weight"]), p, b)
        h = h + ffn(rms_norm(h, p[b + "ffn_residual.norm.weight"]), p, b)
    return rms_norm(h, p["final_norm.weight"]) @ p["lm_head.weight"].T


def adamw_losses(p, loss_of):
    """The losses of STEPS AdamW steps (ADAMW) of the parameters p (a dict) on loss_of(p), from
    where p is now; p ends where the steps leave it. (make_dyt_reference.py uses it too.)"""
    for t in p.values():
        t.grad = None
    opt = torch.optim.AdamW(list(p.values()), **ADAMW)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=True)
        step_loss = loss_of(p)
        step_loss.backward()
        opt.step()
        losses.append(step_loss.item())
    assert losses[-1] < losses[0] - 0.5, losses  # it learns: the comparison is not of a flat line
    return losses


def main():
    p = parameters()
    start = [(name, t.detach().clone()) for name, t in p.items()]
    tokens = torch.randint(0, VOCAB, (B, T))
    targets = torch.randint(0, VOCAB, (B, T))
    entries = [("tokens", tokens), ("targets", targets)]

    logits = llama(tokens, p)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    loss.backward()
    entries += [("logits", logits.detach()), ("loss", loss.detach())]
    entries += [("grad." + name, t.grad.detach().clone()) for name, t in p.items()]

    # 20 AdamW steps on the same batch, from the same start
    losses = adamw_losses(p, lambda p: F.cross_entropy(llama(tokens, p).reshape(-1, VOCAB), targets.reshape(-1)))
    entries.append(("adamw.losses", torch.tensor(losses)))

    write_safetensors(OUT_WEIGHTS, start, {"producer": "make_llama_reference.py"})
    write_reference(OUT_REFERENCE, entries, "make_llama_reference.py")


if __name__ == "__main__":
    main()
