#!/usr/bin/env python3
"""Writes tests/reference/hf_gpt2_tiny/{config.json,model.safetensors} and
tests/reference/hf_gpt2_tiny_reference.txt: a tiny GPT-2 in Hugging Face's layout (the names,
Conv1D (in, out) weights and config.json of transformers' GPT2LMHeadModel) and the logits its
forward pass gives for a fixed input.

Regenerate (from the repository root, with Debian's python3-torch):

    /usr/bin/python3 tests/reference/make_hf_gpt2_tiny.py

and commit the three files with this script; tests/io/test_hf_gpt2.cpp reads them.

Debian has no `transformers`, so the forward pass is written out here from
transformers/models/gpt2/modeling_gpt2.py: wte + wpe, blocks of ln_1 -> causal attention
(c_attn Conv1D, q | k | v on the out axis, 1/sqrt(D) scaling) -> c_proj, residual,
ln_2 -> c_fc -> gelu_new -> c_proj, residual, then ln_f and logits = h @ wte.T (tied head).
Weights are float32 (the file's F32); the forward runs in float64 from them, so the reference
is exact to float64 and the test's 1e-5 measures tapegrad's float32 arithmetic.

config.json is written as PretrainedConfig.to_json_file writes it (json.dumps, indent=2,
sorted keys) and the safetensors file in tapegrad's layout (make_safetensors_reference.py),
with save_pretrained's {"format": "pt"} metadata, so tapegrad's export of the imported model
must give both files back byte for byte.
"""

import math
import os

import torch

from make_safetensors_reference import write_hf_folder
from reference_format import write_reference

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "hf_gpt2_tiny")
OUT_REFERENCE = os.path.join(HERE, "hf_gpt2_tiny_reference.txt")

VOCAB, POSITIONS, LAYERS, C, HEADS, T = 64, 16, 2, 32, 4, 16
EPS = 1e-5

torch.manual_seed(20261202)


def parameters():
    """Hugging Face names and shapes, in the order tapegrad's export writes them."""
    r = lambda *shape, s=0.3: (torch.randn(*shape) * s).float()
    p = {"wte.weight": r(VOCAB, C), "wpe.weight": r(POSITIONS, C, s=0.1)}
    for l in range(LAYERS):
        h = f"h.{l}."
        p[h + "ln_1.weight"] = 1 + r(C, s=0.2)
        p[h + "ln_1.bias"] = r(C, s=0.1)
        p[h + "attn.c_attn.weight"] = r(C, 3 * C)  # Conv1D: (in, out)
        p[h + "attn.c_attn.bias"] = r(3 * C, s=0.1)
        p[h + "attn.c_proj.weight"] = r(C, C)
        p[h + "attn.c_proj.bias"] = r(C, s=0.1)
        p[h + "ln_2.weight"] = 1 + r(C, s=0.2)
        p[h + "ln_2.bias"] = r(C, s=0.1)
        p[h + "mlp.c_fc.weight"] = r(C, 4 * C)
        p[h + "mlp.c_fc.bias"] = r(4 * C, s=0.1)
        p[h + "mlp.c_proj.weight"] = r(4 * C, C, s=0.15)
        p[h + "mlp.c_proj.bias"] = r(C, s=0.1)
    p["ln_f.weight"] = 1 + r(C, s=0.2)
    p["ln_f.bias"] = r(C, s=0.1)
    return p


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (C,), w, b, EPS)


def conv1d(x, w, b):
    return x @ w + b  # Conv1D: y = x·W + b with W (in, out)


def gpt2(tokens, p):
    p = {k: v.double() for k, v in p.items()}
    Tn = tokens.shape[0]
    D = C // HEADS
    h = p["wte.weight"][tokens] + p["wpe.weight"][:Tn]
    mask = torch.ones(Tn, Tn, dtype=torch.bool).triu(1)
    for l in range(LAYERS):
        n = f"h.{l}."
        x = layer_norm(h, p[n + "ln_1.weight"], p[n + "ln_1.bias"])
        q, k, v = conv1d(x, p[n + "attn.c_attn.weight"], p[n + "attn.c_attn.bias"]).split(C, dim=-1)
        q, k, v = (t.view(Tn, HEADS, D).transpose(0, 1) for t in (q, k, v))  # (H, T, D)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(D)
        att = torch.softmax(scores.masked_fill(mask, -math.inf), dim=-1) @ v
        att = att.transpose(0, 1).reshape(Tn, C)
        h = h + conv1d(att, p[n + "attn.c_proj.weight"], p[n + "attn.c_proj.bias"])
        x = layer_norm(h, p[n + "ln_2.weight"], p[n + "ln_2.bias"])
        x = gelu_new(conv1d(x, p[n + "mlp.c_fc.weight"], p[n + "mlp.c_fc.bias"]))
        h = h + conv1d(x, p[n + "mlp.c_proj.weight"], p[n + "mlp.c_proj.bias"])
    h = layer_norm(h, p["ln_f.weight"], p["ln_f.bias"])
    return h @ p["wte.weight"].T


def main():
    p = parameters()
    tokens = torch.randint(0, VOCAB, (T,))
    logits = gpt2(tokens, p)
    config = {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "layer_norm_epsilon": EPS,
        "model_type": "gpt2",
        "n_embd": C,
        "n_head": HEADS,
        "n_layer": LAYERS,
        "n_positions": POSITIONS,
        "tie_word_embeddings": True,
        "vocab_size": VOCAB,
    }
    write_hf_folder(OUT_DIR, config, list(p.items()))
    write_reference(OUT_REFERENCE, [("tokens", tokens), ("logits", logits)], "make_hf_gpt2_tiny.py")


if __name__ == "__main__":
    main()
