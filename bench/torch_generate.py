#!/usr/bin/env python3
"""torch_generate.py — bench/generate.cpp's model and greedy generation in PyTorch, with a KV cache.

A GPT-2-style LM of random weights (learned positions, tied head, GELU-tanh MLP 4x, Pre-LN,
LayerNorm eps 1e-5, causal self-attention written out: PyTorch 1.13 has no fused attention),
batch 1, under torch.inference_mode(). The cache is what a plain PyTorch loop keeps: per layer
k and v preallocated to the whole length, (1, H, T_max, D), written in place at each step; the
new token's query attends over the stored keys (no mask needed: they are all in its past).
The same printout as generate (tokens/s of the cached loop, and of recomputation unless
--skip-recompute). Run with Debian's python3-torch:

    /usr/bin/python3 bench/torch_generate.py --threads 1
    /usr/bin/python3 bench/torch_generate.py --tokens 16 --d-model 32 --layers 2   # a smoke run
"""
import argparse
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--prompt", type=int, default=4)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-recompute", action="store_true")
    return p.parse_args()


def main():
    args = parse_args()
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    L, d, H, V, N, P = args.layers, args.d_model, args.heads, args.vocab, args.tokens, args.prompt
    D, T_max = d // H, P + N

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-5), nn.LayerNorm(d, eps=1e-5)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def attn(self, x, cache, start):
            B, T, _ = x.shape
            q, k, v = self.qkv(x).view(B, T, 3, H, D).permute(2, 0, 3, 1, 4)  # each (B, H, T, D)
            if cache is not None:  # store the new keys and values, attend over all stored ones
                ck, cv = cache
                ck[:, :, start:start + T] = k
                cv[:, :, start:start + T] = v
                k, v = ck[:, :, :start + T], cv[:, :, :start + T]
            s = (q @ k.transpose(-2, -1)) * D ** -0.5  # (B, H, T, start + T)
            if T > 1:  # bottom-right causal: query i sees keys j <= i + start
                hidden = torch.ones(T, start + T, dtype=torch.bool).triu(start + 1)
                s = s.masked_fill(hidden, float("-inf"))
            return self.proj((s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, d))

        def forward(self, x, cache=None, start=0):
            x = x + self.attn(self.ln1(x), cache, start)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, d), nn.Embedding(T_max, d)
            self.blocks = nn.ModuleList(Block() for _ in range(L))
            self.ln_f = nn.LayerNorm(d, eps=1e-5)
            for p in self.parameters():  # GPT-2's N(0, 0.02)
                if p.dim() >= 2:
                    nn.init.normal_(p, std=0.02)

        def forward(self, idx, caches=None, start=0):
            T = idx.shape[1]
            x = self.tok(idx) + self.pos(torch.arange(start, start + T))
            for l, block in enumerate(self.blocks):
                x = block(x, caches[l] if caches is not None else None, start)
            return self.ln_f(x[:, -1]) @ self.tok.weight.t()  # the last position's logits (B, V)

    model = LM().eval()
    gen = torch.Generator().manual_seed(args.seed + 1)
    prompt = torch.randint(0, V, (1, P), generator=gen)

    def generate_cached(n):
        caches = [(torch.empty(1, H, T_max, D), torch.empty(1, H, T_max, D)) for _ in range(L)]
        logits = model(prompt, caches, 0)
        out = prompt[0].tolist()
        for step in range(n):
            nxt = int(logits.argmax(-1))
            out.append(nxt)
            if step + 1 < n:
                logits = model(torch.tensor([[nxt]]), caches, P + step)
        return out

    def generate_recompute(n):
        seq = prompt[0].tolist()
        for _ in range(n):
            seq.append(int(model(torch.tensor([seq])).argmax(-1)))
        return seq

    print(f"pytorch {torch.__version__}: {N} generated tokens after a prompt of {P}, d_model {d}, {L} layers, "
          f"{H} heads, vocab {V}, learned positions, batch 1, {args.threads} thread(s)")
    with torch.inference_mode():
        generate_cached(min(N, 8))  # warm-up
        t0 = time.perf_counter()
        cached = generate_cached(N)
        cached_s = time.perf_counter() - t0
        print(f"  kv cache:    {cached_s:8.3f} s  {N / cached_s:10.1f} tokens/s")
        if args.skip_recompute:
            return 0
        t0 = time.perf_counter()
        recomputed = generate_recompute(N)
        recompute_s = time.perf_counter() - t0
    print(f"  recompute:   {recompute_s:8.3f} s  {N / recompute_s:10.1f} tokens/s")
    same = "yes" if cached == recomputed else "NO"
    print(f"  kv cache / recompute: {recompute_s / cached_s:.1f}x; tokens identical: {same}")
    return 0 if cached == recomputed else 1


if __name__ == "__main__":
    sys.exit(main())
