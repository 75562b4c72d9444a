#!/usr/bin/env python3
"""Decode attention in PyTorch: scaled_dot_product_attention over an FP16 cache.

The peer of `cocktail bench attention` on a GPU: one query token per query head against a cache
of the same shape (KV heads x tokens x head_dim, FP16), GQA through enable_gqa, timed with CUDA
events, the L2 cache flushed before every timed run as our benchmark does. Prints one JSON
object: the median time, the bytes of K and V read, and the GB/s that makes.

    bench/peers/torch_sdpa_decode.py --context-tokens 32768 --kv-heads 8 --head-dim 128 --gqa 1
"""

import argparse
import json
import statistics
import sys


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--context-tokens", type=int, required=True)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--gqa", type=int, default=1, help="query heads per KV head")
    p.add_argument("--repeat", type=int, default=30, help="timed runs; the median is reported")
    p.add_argument("--flush-mib", type=int, default=256,
                   help="MiB written between timed runs to flush the L2 cache (0: none)")
    p.add_argument("--device", default="cuda", help="torch device (cpu only to try the script)")
    return p.parse_args()


class Timer:
    """CUDA events on a GPU; wall-clock time elsewhere, so the script can be tried on a CPU."""

    def __init__(self, torch, device):
        self.torch = torch
        self.cuda = device.startswith("cuda")

    def time(self, work):
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            start.record()
            work()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        import time
        t0 = time.perf_counter()
        work()
        return time.perf_counter() - t0


def main():
    args = parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        sys.exit(f"torch_sdpa_decode.py: PyTorch is not installed here ({e})")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("torch_sdpa_decode.py: PyTorch sees no CUDA device")

    device = torch.device(args.device)
    gen = torch.Generator(device=device).manual_seed(1)
    q_heads = args.kv_heads * args.gqa
    shape_kv = (1, args.kv_heads, args.context_tokens, args.head_dim)
    k = torch.randn(shape_kv, generator=gen, device=device, dtype=torch.float16)
    v = torch.randn(shape_kv, generator=gen, device=device, dtype=torch.float16)
    q = torch.randn((1, q_heads, 1, args.head_dim), generator=gen, device=device,
                    dtype=torch.float16)
    flush = torch.empty(args.flush_mib << 20, dtype=torch.uint8, device=device)

    def attend():
        F.scaled_dot_product_attention(q, k, v, enable_gqa=args.gqa > 1)

    timer = Timer(torch, args.device)
    for _ in range(3):
        attend()
    seconds = []
    for _ in range(args.repeat):
        if args.flush_mib > 0:
            flush.fill_(len(seconds) & 0xFF)
        seconds.append(timer.time(attend))

    kv_bytes = 2 * k.numel() * k.element_size()
    median = statistics.median(seconds)
    print(json.dumps({
        "peer": "torch.nn.functional.scaled_dot_product_attention",
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "context_tokens": args.context_tokens,
        "kv_heads": args.kv_heads,
        "head_dim": args.head_dim,
        "gqa": args.gqa,
        "repeat": args.repeat,
        "flush_mib": args.flush_mib,
        "bytes": kv_bytes,
        "time_s": median,
        "time_min_s": min(seconds),
        "achieved_gbps": kv_bytes / median / 1e9,
    }, indent=2))


if __name__ == "__main__":
    main()
