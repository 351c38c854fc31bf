#!/usr/bin/env python3
"""The PyTorch side of `npm run bench -- torch` (test/bench/torch.bench.ts).

Trains a zoo model (mlp, cnn, gpt) of a proofswarm task in PyTorch, the way a
PyTorch user would write it, on the same data in the same order: the batch
rows of every step come from the bench (the task's data order, as uint32 in
--order), images from the Fashion-MNIST IDX files, text from the task's token
stream (--tokens, uint8 token ids). Adam with the task's hyper-parameters.
Prints one JSON line: samples/s over the training loop (batch assembly
included, as in proofswarm's figure), seconds, last loss.
"""
import argparse
import gzip
import json
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def idx(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rb') as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], 'big') for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def idx_part(directory, name):
    for p in (os.path.join(directory, name), os.path.join(directory, name + '.gz')):
        if os.path.exists(p):
            return idx(p)
    raise SystemExit(f'{name}(.gz) not found in {directory}')


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.view(x.shape[0], -1))))


class Cnn(nn.Module):
    """Conv 3x3x8 relu, max-pool 2, conv 3x3x16 relu, max-pool 2, dense 10 (valid padding), as the zoo's cnn."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 8, 3)
        self.c2 = nn.Conv2d(8, 16, 3)
        self.fc = nn.Linear(16 * 5 * 5, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x.view(x.shape[0], 1, 28, 28))), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.fc(x.flatten(1))


class Block(nn.Module):
    def __init__(self, d, heads, mlp, eps):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d, eps=eps)
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d, eps=eps)
        self.fc = nn.Linear(d, mlp)
        self.fc_out = nn.Linear(mlp, d)

    def attention(self, a, mask):
        B, T, d = a.shape
        H = self.heads
        split = lambda t: t.view(B, T, H, d // H).transpose(1, 2)
        q, k, v = split(self.q(a)), split(self.k(a)), split(self.v(a))
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // H))
        s = s.masked_fill(mask, float('-inf'))
        o = F.softmax(s, dim=-1) @ v
        return o.transpose(1, 2).reshape(B, T, d)

    def forward(self, h, mask):
        h = h + self.proj(self.attention(self.ln1(h), mask))
        return h + self.fc_out(F.gelu(self.fc(self.ln2(h)), approximate='tanh'))


class Gpt(nn.Module):
    """Token + position embeddings, pre-norm blocks (causal multi-head attention, GELU MLP), final layer norm, untied head."""
    def __init__(self, V, T, layers, d, heads, mlp, eps):
        super().__init__()
        self.wte = nn.Embedding(V, d)
        self.wpe = nn.Parameter(torch.empty(T, d))
        for p in (self.wte.weight, self.wpe):
            nn.init.uniform_(p, -0.05, 0.05)
        self.blocks = nn.ModuleList(Block(d, heads, mlp, eps) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d, eps=eps)
        self.head = nn.Linear(d, V)
        self.register_buffer('mask', torch.triu(torch.ones(T, T, dtype=torch.bool), 1))

    def forward(self, x):
        h = self.wte(x) + self.wpe
        for b in self.blocks:
            h = b(h, self.mask)
        return self.head(self.ln_f(h))


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--model', choices=['mlp', 'cnn', 'gpt'], required=True)
    p.add_argument('--threads', type=int, default=1)
    p.add_argument('--steps', type=int, required=True)
    p.add_argument('--batch', type=int, required=True)
    p.add_argument('--order', required=True, help='uint32 rows of every step, steps x batch')
    p.add_argument('--data', help='Fashion-MNIST IDX directory (mlp, cnn)')
    p.add_argument('--tokens', help='uint8 token ids of the training text (gpt)')
    p.add_argument('--vocab', type=int)
    p.add_argument('--context', type=int)
    p.add_argument('--layers', type=int)
    p.add_argument('--d-model', type=int)
    p.add_argument('--heads', type=int)
    p.add_argument('--mlp', type=int)
    p.add_argument('--epsilon', type=float, default=1e-5)
    p.add_argument('--lr', type=float, required=True)
    p.add_argument('--beta1', type=float, default=0.9)
    p.add_argument('--beta2', type=float, default=0.999)
    p.add_argument('--adam-epsilon', type=float, default=1e-7)
    p.add_argument('--seed', type=int, default=1)
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    order = torch.from_numpy(np.fromfile(a.order, dtype=np.uint32).astype(np.int64)).view(a.steps, a.batch)

    if a.model == 'gpt':
        tokens = torch.from_numpy(np.fromfile(a.tokens, dtype=np.uint8).astype(np.int64))
        T = a.context
        model = Gpt(a.vocab, T, a.layers, a.d_model, a.heads, a.mlp, a.epsilon)
        offsets = torch.arange(T)

        def batch(rows):
            at = rows[:, None] * T + offsets
            return tokens[at], tokens[at + 1]

        def loss_of(x, y):
            return F.cross_entropy(model(x).view(-1, a.vocab), y.view(-1))
    else:
        images = torch.from_numpy(idx_part(a.data, 'train-images-idx3-ubyte').reshape(-1, 784).copy())
        labels = torch.from_numpy(idx_part(a.data, 'train-labels-idx1-ubyte').astype(np.int64))
        model = Mlp() if a.model == 'mlp' else Cnn()

        def batch(rows):
            return images[rows].float().div_(255), labels[rows]

        def loss_of(x, y):
            return F.cross_entropy(model(x), y)

    opt = torch.optim.Adam(model.parameters(), lr=a.lr, betas=(a.beta1, a.beta2), eps=a.adam_epsilon)
    loss = float('nan')
    t0 = time.perf_counter()
    c0 = time.process_time()
    for s in range(a.steps):
        x, y = batch(order[s])
        opt.zero_grad(set_to_none=True)
        l = loss_of(x, y)
        l.backward()
        opt.step()
        loss = l.item()
    seconds = time.perf_counter() - t0
    cpu_seconds = time.process_time() - c0
    print(json.dumps({'samplesPerSec': a.steps * a.batch / seconds, 'seconds': seconds, 'cpuSeconds': cpu_seconds, 'loss': loss,
                      'torch': torch.__version__, 'threads': torch.get_num_threads()}))


if __name__ == '__main__':
    main()
