#!/usr/bin/env python3
"""Writes tests/reference/hf_llama_tiny/{config.json,model.safetensors} and
tests/reference/hf_llama_tiny_reference.txt: a tiny LLaMA in Hugging Face's layout (the names
and config.json of transformers' LlamaForCausalLM) and the logits of its forward pass for a
fixed input.

Regenerate (from the repository root, with Debian's python3-torch):

    /usr/bin/python3 tests/reference/make_hf_llama_tiny.py

and commit the three files with this script; tests/io/test_hf_llama.cpp reads them.

The forward pass is transformers/models/llama/modeling_llama.py written out (Debian has no
`transformers`): RMSNorm (input_layernorm) -> q/k/v_proj, rotary embeddings in Hugging Face's
rotate_half layout (its q/k rows are permuted from Meta's for it), grouped-query attention
(repeat_kv), o_proj, residual; post_attention_layernorm -> down(silu(gate(x)) * up(x)),
residual; model.norm, then an untied lm_head. Weights are float32; the forward runs in float64.
Files are laid out as tapegrad's export writes them (see make_hf_gpt2_tiny.py).
"""

import math
import os

import torch

from make_safetensors_reference import write_hf_folder
from reference_format import write_reference

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "hf_llama_tiny")
OUT_REFERENCE = os.path.join(HERE, "hf_llama_tiny_reference.txt")

VOCAB, POSITIONS, LAYERS, C, HEADS, KV_HEADS, HIDDEN, T = 64, 32, 2, 32, 4, 2, 96, 16
D = C // HEADS
EPS, THETA = 1e-6, 10000.0

torch.manual_seed(20261203)


def parameters():
    """Hugging Face names and shapes, in the order tapegrad's export writes them."""
    r = lambda *shape, s=0.3: (torch.randn(*shape) * s).float()
    p = {"model.embed_tokens.weight": r(VOCAB, C, s=1.0)}
    for l in range(LAYERS):
        h = f"model.layers.{l}."
        p[h + "input_layernorm.weight"] = 1 + r(C, s=0.2)
        p[h + "self_attn.q_proj.weight"] = r(C, C)
        p[h + "self_attn.k_proj.weight"] = r(KV_HEADS * D, C)
        p[h + "self_attn.v_proj.weight"] = r(KV_HEADS * D, C)
        p[h + "self_attn.o_proj.weight"] = r(C, C)
        p[h + "post_attention_layernorm.weight"] = 1 + r(C, s=0.2)
        p[h + "mlp.gate_proj.weight"] = r(HIDDEN, C)
        p[h + "mlp.up_proj.weight"] = r(HIDDEN, C)
        p[h + "mlp.down_proj.weight"] = r(C, HIDDEN, s=0.2)
    p["model.norm.weight"] = 1 + r(C, s=0.2)
    p["lm_head.weight"] = r(VOCAB, C)
    return p


def rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def rotate_half(x):
    return torch.cat((-x[..., D // 2 :], x[..., : D // 2]), dim=-1)


def rope(x):
    """x: (heads, T, D); LlamaRotaryEmbedding + apply_rotary_pos_emb."""
    inv_freq = 1.0 / (THETA ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
    freqs = torch.outer(torch.arange(x.shape[1], dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def llama(tokens, p):
    p = {k: v.double() for k, v in p.items()}
    Tn = tokens.shape[0]
    h = p["model.embed_tokens.weight"][tokens]
    mask = torch.ones(Tn, Tn, dtype=torch.bool).triu(1)
    for l in range(LAYERS):
        n = f"model.layers.{l}."
        x = rms_norm(h, p[n + "input_layernorm.weight"])
        q = (x @ p[n + "self_attn.q_proj.weight"].T).view(Tn, HEADS, D).transpose(0, 1)
        k = (x @ p[n + "self_attn.k_proj.weight"].T).view(Tn, KV_HEADS, D).transpose(0, 1)
        v = (x @ p[n + "self_attn.v_proj.weight"].T).view(Tn, KV_HEADS, D).transpose(0, 1)
        q, k = rope(q), rope(k)
        k, v = (t.repeat_interleave(HEADS // KV_HEADS, dim=0) for t in (k, v))  # repeat_kv
        scores = q @ k.transpose(-1, -2) / math.sqrt(D)
        att = (torch.softmax(scores.masked_fill(mask, -math.inf), dim=-1) @ v).transpose(0, 1).reshape(Tn, C)
        h = h + att @ p[n + "self_attn.o_proj.weight"].T
        x = rms_norm(h, p[n + "post_attention_layernorm.weight"])
        gate = torch.nn.functional.silu(x @ p[n + "mlp.gate_proj.weight"].T) * (x @ p[n + "mlp.up_proj.weight"].T)
        h = h + gate @ p[n + "mlp.down_proj.weight"].T
    return rms_norm(h, p["model.norm.weight"]) @ p["lm_head.weight"].T


def main():
    p = parameters()
    tokens = torch.randint(0, VOCAB, (T,))
    logits = llama(tokens, p)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "hidden_act": "silu",
        "hidden_size": C,
        "intermediate_size": HIDDEN,
        "max_position_embeddings": POSITIONS,
        "model_type": "llama",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": KV_HEADS,
        "rms_norm_eps": EPS,
        "rope_theta": THETA,
        "tie_word_embeddings": False,
        "vocab_size": VOCAB,
    }
    write_hf_folder(OUT_DIR, config, list(p.items()))
    write_reference(OUT_REFERENCE, [("tokens", tokens), ("logits", logits)], "make_hf_llama_tiny.py")


if __name__ == "__main__":
    main()
