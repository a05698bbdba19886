#!/usr/bin/env python3
"""torch_train_step.py — bench/train_step.cpp's model and step in PyTorch, for comparison.

A GPT-2-style LM: learned positions, tied head, GELU-tanh MLP 4x, LayerNorm eps 1e-5, causal
self-attention (PyTorch 1.13 has no fused attention, so: matmul, masked_fill, softmax, matmul),
AdamW (lr 3e-4, weight decay 0.1 on matrices), cross-entropy; Pre-LN or Post-LN. Same configs
and printout as train_step (--csv gives the same columns), plus the first and last step's loss.
bench/libtorch_train_step.cpp is this script in C++ (same weights, data and losses). Run with
Debian's python3-torch:

    /usr/bin/python3 bench/torch_train_step.py --config S --threads 1
    /usr/bin/python3 bench/torch_train_step.py --config S --threads 1 --blas-threads 2

--blas-threads sets OPENBLAS_NUM_THREADS before torch loads (PyTorch's own threads stay
--threads).
"""
import argparse
import os
import resource
import statistics
import sys
import time

CONFIGS = {  # layers, d_model, heads, seq_len, batch, vocab — as in train_step.cpp
    "S": (4, 128, 4, 64, 8, 256),
    "M": (6, 384, 6, 256, 8, 256),
    "G": (12, 768, 12, 64, 4, 50257),
    "L": (6, 384, 6, 2048, 1, 256),
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="S", choices=sorted(CONFIGS))
    p.add_argument("--placement", default="pre", choices=["pre", "post"])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--blas-threads", type=int, default=0, help="OPENBLAS_NUM_THREADS (0: leave as is)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--csv", action="store_true")
    return p.parse_args()


def step_flops(layers, d, heads, T, B, V):
    """Matmul FLOPs of one training step, counted as train_step.cpp counts them."""
    tokens = B * T
    per_layer = 2 * tokens * 12 * d * d + 2 * 2 * B * T * T * d
    return 3 * (layers * per_layer + 2 * tokens * d * V)


def main():
    args = parse_args()
    if args.blas_threads > 0:
        os.environ["OPENBLAS_NUM_THREADS"] = str(args.blas_threads)
    import torch  # after the environment is set: OpenBLAS reads it when it loads
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    L, d, H, T, B, V = CONFIGS[args.config]
    pre = args.placement == "pre"

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-5), nn.LayerNorm(d, eps=1e-5)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.register_buffer("causal", torch.ones(T, T, dtype=torch.bool).triu(1))

        def attn(self, x):
            q, k, v = self.qkv(x).view(B, T, 3, H, d // H).permute(2, 0, 3, 1, 4)
            s = (q @ k.transpose(-2, -1)) * (d // H) ** -0.5
            p = s.masked_fill(self.causal, float("-inf")).softmax(-1)
            return self.proj((p @ v).transpose(1, 2).reshape(B, T, d))

        def mlp(self, x):
            return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))

        def forward(self, x):
            if pre:
                x = x + self.attn(self.ln1(x))
                return x + self.mlp(self.ln2(x))
            x = self.ln1(x + self.attn(x))
            return self.ln2(x + self.mlp(x))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, d), nn.Embedding(T, d)
            self.blocks = nn.ModuleList(Block() for _ in range(L))
            self.ln_f = nn.LayerNorm(d, eps=1e-5) if pre else nn.Identity()
            for p in self.parameters():  # GPT-2's N(0, 0.02)
                if p.dim() >= 2:
                    nn.init.normal_(p, std=0.02)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(T))
            for block in self.blocks:
                x = block(x)
            return self.ln_f(x) @ self.tok.weight.t()  # tied head

    model = LM()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "tok" not in n and "pos" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "tok" not in n and "pos" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=3e-4)
    gen = torch.Generator().manual_seed(args.seed + 1)
    tokens = torch.randint(0, V, (B, T + 1), generator=gen)
    inputs, targets = tokens[:, :T].contiguous(), tokens[:, 1:].reshape(-1)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(inputs).view(B * T, V), targets)
        loss.backward()
        opt.step()
        return loss.item()

    losses = [step() for _ in range(args.warmup)]
    ms = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        losses.append(step())
        ms.append((time.perf_counter() - t0) * 1000)
    median = statistics.median_low(ms)
    tokens_per_s = B * T / (median / 1000)
    gflops = step_flops(L, d, H, T, B, V) / (median / 1000) / 1e9
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.csv:
        print(f"{args.config},{args.placement},{args.threads},{median:.2f},{min(ms):.2f},{max(ms):.2f},"
              f"{tokens_per_s:.0f},{gflops:.1f},{rss:.0f}")
    else:
        print(f"pytorch {torch.__version__} {args.config} (L {L}, d {d}, T {T}, B {B}, vocab {V}), {args.placement}, "
              f"{args.threads} thread(s), OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
        print(f"  {median:.2f} ms/step median (min {min(ms):.2f}, max {max(ms):.2f} over {args.steps} steps), "
              f"{tokens_per_s:.0f} tokens/s, {gflops:.1f} GFLOP/s, peak RSS {rss:.0f} MiB")
        print(f"  loss {losses[0]:.6f} at the first step, {losses[-1]:.6f} at the last")


if __name__ == "__main__":
    sys.exit(main())
