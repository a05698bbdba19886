#!/usr/bin/env python3
"""depth_study_torch.py — the depth study's runs again in PyTorch, on the same data and settings.

    python3 depth_study_torch.py DIR [--threads N]

DIR holds what export_for_torch() wrote (torch_twin.hpp): setup.json, the train tokens, the
validation batches and, per seed, the window starts of every step's batch. Each run (depth,
placement, lr, seed) builds the model after torch.manual_seed(seed) and trains it on exactly
those batches; DIR/torch_results.csv gets a row per run, DIR/torch_losses.csv every step's loss.
When DIR/init_<placement>_L<depth>_seed<seed>.safetensors exists (export_initial_weights), the
run starts from tapegrad's weights instead of torch's draws: the losses then agree step by step.

The model is nn::TransformerLM in plain torch, with tapegrad's parameter names (state dicts map
one to one): h0 = tok_emb[x] + pos_emb[0..T-1], the blocks, final_norm for pre only, logits =
h·Eᵀ (tied) or lm_head(h); Attn: causal, fused qkv (rows [q; k; v]), out_proj; FFN: fc2(gelu_tanh(
fc1(h))), d_ff = 4·d_model; N1, N2: LayerNorm(eps 1e-5). The blocks (nn/placement/*.cpp, α = 1):
    none  h = N1(Attn(x));      y = N2(FFN(h))
    post  h = N1(x + Attn(x));  y = N2(h + FFN(h))
    pre   h = x + Attn(N1(x));  y = h + FFN(N2(h))
    b2t   h = N1(x + Attn(x));  y = N2(h + FFN(h) + x)
The training is the study's train() (depth_study/runs.cpp): AdamW, the schedule of
training::make_schedule, clipping at a global L2 norm, mean cross-entropy, its status rules.
"""
import argparse
import json
import math
import os
import struct
import sys
import time

# One thread by default, as each of tapegrad's worker processes. PyTorch 1.13's CPU matmuls go
# through OpenBLAS, and its other ops through OpenMP, which start their own threads: keep them
# to --threads as well (read when the libraries load, so before `import torch`), whatever the
# environment says: the caller's --threads is the count its timings compare on.
THREADS = argparse.ArgumentParser(add_help=False)
THREADS.add_argument("--threads", type=int, default=1)
for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = str(THREADS.parse_known_args()[0].threads)

import torch  # noqa: E402  (after the environment is set)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


# ---------------------------------------------------------------- the model
class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv, self.out_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)

    def forward(self, x):
        B, T, C = x.shape
        D = C // self.heads
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, D).permute(2, 0, 3, 1, 4)  # each (B, H, T, D)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(D)  # (B, H, T, T)
        hidden = torch.ones(T, T, dtype=torch.bool).triu(1)  # key j > query i is not seen
        probs = scores.masked_fill(hidden, float("-inf")).softmax(-1)
        return self.out_proj((probs @ v).transpose(1, 2).reshape(B, T, C))


class FeedForward(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, h):
        return self.fc2(F.gelu(self.fc1(h), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, d, heads, placement):
        super().__init__()
        assert placement in ("none", "post", "pre", "b2t"), f"no PyTorch twin of placement {placement}"
        self.placement = placement
        self.attn, self.ffn = Attention(d, heads), FeedForward(d)
        # tapegrad keeps each sublayer's norm in a Residual module: attn_residual.norm.weight, ...
        self.attn_residual = nn.ModuleDict({"norm": nn.LayerNorm(d, eps=1e-5)})
        self.ffn_residual = nn.ModuleDict({"norm": nn.LayerNorm(d, eps=1e-5)})

    def forward(self, x):
        attn, ffn, N1, N2 = self.attn, self.ffn, self.attn_residual["norm"], self.ffn_residual["norm"]
        if self.placement == "none":
            return N2(ffn(N1(attn(x))))
        if self.placement == "pre":
            h = x + attn(N1(x))
            return h + ffn(N2(h))
        h = N1(x + attn(x))  # post and b2t
        return N2(h + ffn(h)) if self.placement == "post" else N2(h + ffn(h) + x)


class LM(nn.Module):
    def __init__(self, s, placement, depth):
        super().__init__()
        d, V = s["d_model"], s["vocab_size"]
        self.tok_emb, self.pos_emb = nn.Embedding(V, d), nn.Embedding(s["seq_len"], d)
        self.blocks = nn.ModuleList(Block(d, s["heads"], placement) for _ in range(depth))
        self.final_norm = nn.LayerNorm(d, eps=1e-5) if placement == "pre" else None  # the registry's final_norm
        self.lm_head = None if s["tie_head"] else nn.Linear(d, V, bias=False)

    def forward(self, x):
        h = self.tok_emb(x) + self.pos_emb(torch.arange(x.shape[1]))
        for block in self.blocks:
            h = block(h)
        if self.final_norm is not None:
            h = self.final_norm(h)
        return F.linear(h, self.tok_emb.weight) if self.lm_head is None else self.lm_head(h)


def init_weights(model, scheme):
    """nn/model_init.cpp. pytorch: every module keeps torch's default, which is tapegrad's
    (Linear weights and biases U(±1/√in), Embedding N(0, 1)); the others redraw the blocks'
    Linear weights, zero their biases, and redraw the embeddings. Norms stay (1, 0)."""
    if scheme == "pytorch":
        return
    L = len(model.blocks)
    residual_std = 0.02 / math.sqrt(2 * max(L, 1)) if scheme == "gpt2" else 0.02  # out_proj, fc2
    for block in model.blocks:
        for linear, std in ((block.attn.qkv, 0.02), (block.attn.out_proj, residual_std),
                            (block.ffn.fc1, 0.02), (block.ffn.fc2, residual_std)):
            if scheme == "xavier":
                nn.init.xavier_uniform_(linear.weight)
            else:
                nn.init.normal_(linear.weight, 0.0, std)
            nn.init.zeros_(linear.bias)
    emb_std = 0.02 if scheme != "xavier" else 1 / math.sqrt(model.tok_emb.embedding_dim)
    for emb in (model.tok_emb, model.pos_emb):
        nn.init.normal_(emb.weight, 0.0, emb_std)
    if model.lm_head is not None and scheme != "xavier":  # xavier keeps the untied head's default
        nn.init.normal_(model.lm_head.weight, 0.0, 0.02)


def read_safetensors(path):
    """{name: tensor} of an F32 safetensors file (the format: io/safetensors.hpp)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    data = raw[8 + n:]
    tensors = {}
    for name, info in header.items():
        assert info["dtype"] == "F32", f"{path}: {name} is {info['dtype']}, expected F32"
        begin, end = info["data_offsets"]
        tensors[name] = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.float32).reshape(info["shape"])
    return tensors


# ---------------------------------------------------------------- the training
def lr_factor(s, step):
    """training::make_schedule's factor for the update with 0-based index step (optim/lr_schedule.cpp)."""
    N = max(s["steps"], 1)
    W = s["steps"] // 10 if s["warmup"] >= s["steps"] else s["warmup"]  # training::warmup_steps
    if s["schedule"] == "noam":
        W = max(W, 1)
    t = step + 1
    if t < W:
        return t / W
    if s["schedule"] == "constant":
        return 1.0
    if s["schedule"] == "noam":
        return math.sqrt(W / t)
    p = min(1.0, max(0.0, (t - W) / (N - W)))
    f = s["min_lr_ratio"]
    return f + (1 - f) * (0.5 * (1 + math.cos(math.pi * p)) if s["schedule"] == "cosine" else 1 - p)


def make_optimizer(s, model, lr):
    """AdamW over optim::weight_decay_groups' two groups: matrices that are not embeddings decay."""
    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    decays = [p.dim() >= 2 and id(p) not in embeddings for p in model.parameters()]
    groups = [{"params": [p for p, d in zip(model.parameters(), decays) if d], "weight_decay": s["weight_decay"]},
              {"params": [p for p, d in zip(model.parameters(), decays) if not d], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(s["beta1"], s["beta2"]), eps=1e-8)


def mean_ce(model, x, y, reduction="mean"):
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction=reduction)


def train(s, data, model, lr, starts):
    """The study's train(): the losses of each step, and its status rules."""
    params = list(model.parameters())
    opt = make_optimizer(s, model, lr)
    B, T = s["batch"], s["seq_len"]
    window = torch.arange(T + 1)
    losses, status = [], "ok"
    for step in range(s["steps"]):
        for group in opt.param_groups:
            group["lr"] = lr * lr_factor(s, step)
        tokens = data["train"][starts[step * B:(step + 1) * B, None] + window]  # (B, T + 1)
        loss = mean_ce(model, tokens[:, :-1], tokens[:, 1:])
        losses.append(loss.item())
        opt.zero_grad(set_to_none=True)
        if not math.isfinite(losses[-1]):
            status = "non-finite"  # no step is taken
            break
        loss.backward()
        # training::update: clip at the global norm (max_norm inf: measure only; a NaN or Inf
        # gradient makes the norm non-finite) and skip the step when it is not finite.
        norm = nn.utils.clip_grad_norm_(params, s["clip"] if s["clip"] > 0 else math.inf)
        if not math.isfinite(norm.item()):
            status = "non-finite"
            break
        opt.step()
    initial, final, val = losses[0], math.nan, math.nan
    if status == "ok":
        final = sum(losses[-max(1, len(losses) // 10):]) / max(1, len(losses) // 10)
        with torch.no_grad():  # mean cross-entropy over every validation token
            total = sum(mean_ce(model, x, y, "sum").item() for x, y in data["validation"])
        val = total / sum(y.numel() for _, y in data["validation"])
        if not math.isfinite(val):
            status = "non-finite"
        elif not final < initial:
            status = "no progress"
    return losses, status, initial, final, val


# ---------------------------------------------------------------- the export, the runs, the files
def load(dir):
    assert sys.byteorder == "little", "the export is little-endian"
    with open(os.path.join(dir, "setup.json")) as f:
        s = json.load(f)

    def ints(name, dtype):
        with open(os.path.join(dir, name), "rb") as f:
            return torch.frombuffer(bytearray(f.read()), dtype=dtype).long()

    T, v = s["seq_len"], s["validation"]
    inputs, targets = ints(v["inputs"], torch.int64).view(-1, T), ints(v["targets"], torch.int64).view(-1, T)
    data = {"train": ints(s["train_tokens"], torch.int32),
            "validation": list(zip(inputs.split(v["batch_sizes"]), targets.split(v["batch_sizes"]))),
            "starts": {int(seed): ints(name, torch.int64) for seed, name in s["batch_starts"].items()}}
    return s, data


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], parents=[THREADS])
    p.add_argument("dir", help="the folder export_for_torch() wrote")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    # The seconds of a run compare with tapegrad's only on as many threads: refuse to run on others.
    if torch.get_num_threads() != args.threads:
        sys.exit(f"torch runs on {torch.get_num_threads()} threads after set_num_threads({args.threads})")
    s, data = load(args.dir)
    runs = [(L, pl, lr, seed) for L in s["depths"] for pl in s["placements"] for lr in s["lrs"] for seed in s["seeds"]]
    results = ["placement,depth,lr,seed,status,initial_loss,final_loss,val_loss,seconds"]
    curves = ["placement,depth,lr,seed,step,loss"]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s): {len(runs)} runs of {s['steps']} steps", flush=True)
    for i, (L, placement, lr, seed) in enumerate(runs):
        start = time.perf_counter()
        torch.manual_seed(seed)
        model = LM(s, placement, L)
        init_weights(model, s["init"])
        weights = os.path.join(args.dir, f"init_{placement}_L{L}_seed{seed}.safetensors")
        shared = os.path.exists(weights)
        if shared:
            model.load_state_dict(read_safetensors(weights), strict=True)
        losses, status, initial, final, val = train(s, data, model, lr, data["starts"][seed])
        seconds = time.perf_counter() - start
        key = f"{placement},{L},{lr!r},{seed}"
        results.append(f"{key},{status},{initial!r},{final!r},{val!r},{seconds:.3f}")
        curves += [f"{key},{step + 1},{loss!r}" for step, loss in enumerate(losses)]
        print(f"torch run {i + 1}/{len(runs)} {placement} L={L} lr {lr:g} seed {seed}"
              f"{' (tapegrad init)' if shared else ''}: loss {initial:.4f} -> {final:.4f}, val {val:.4f} ({status}), "
              f"{seconds:.1f} s", flush=True)
    for name, lines in (("torch_results.csv", results), ("torch_losses.csv", curves)):
        with open(os.path.join(args.dir, name), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
