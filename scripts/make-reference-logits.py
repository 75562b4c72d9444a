#!/usr/bin/env python3
"""Float64 reference logits of SmolLM2-135M-Instruct for the prompts of logits.json.

An independent forward pass in NumPy (float64) over the GGUF weights as the `gguf` package
dequantizes them: RMSNorm, RoPE on adjacent pairs, GQA attention with K and V rounded to FP16 as
an FP16 cache stores them, SwiGLU, tied output. No activation is quantized, unlike llama.cpp,
which quantizes activations to 8 bits for its Q4_1 and Q8_0 matmuls; the difference between the
two shows how much of a gap to llama.cpp is llama.cpp's own rounding.

Writes tests/fixtures/smollm2/reference_logits.json: for each prompt and recorded position, the
reference logits of llama.cpp's top-5 ids, and the reference's own top-5 ids and logits.
Not run by CI. Needs: pip install numpy gguf.

    scripts/make-reference-logits.py [--model PATH]
"""
import argparse
import json
import pathlib

import numpy as np
from gguf import GGUFReader

from peer_tools import default_model, dequantized, require_model

REPO = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "smollm2"


def weights(reader):
    tensors = {t.name: t for t in reader.tensors}

    def get(name):
        return dequantized(tensors[name], np.float64)

    return get


def field(reader, key):
    f = reader.fields[key]
    return f.parts[f.data[0]][0]


def forward(reader, ids):
    get = weights(reader)
    n_layers = int(field(reader, "llama.block_count"))
    n_heads = int(field(reader, "llama.attention.head_count"))
    n_kv = int(field(reader, "llama.attention.head_count_kv"))
    base = float(field(reader, "llama.rope.freq_base"))
    eps = float(field(reader, "llama.attention.layer_norm_rms_epsilon"))
    embd = get("token_embd.weight")
    d = embd.shape[1] // n_heads
    n = len(ids)

    def rms(x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w

    angle = np.arange(n)[:, None] * base ** (-np.arange(0, d, 2) / d)[None, :]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]

    def rope(v, heads):
        v = v.reshape(n, heads, d // 2, 2)
        a, b = v[..., 0], v[..., 1]
        return np.stack([a * cos - b * sin, a * sin + b * cos], -1).reshape(n, heads * d)

    def fp16(v):
        return v.astype(np.float16).astype(np.float64)

    causal = np.triu(np.full((n, n), -np.inf), 1)
    x = embd[ids].copy()
    for layer in range(n_layers):
        p = "blk.%d." % layer
        h = rms(x, get(p + "attn_norm.weight"))
        q = rope(h @ get(p + "attn_q.weight").T, n_heads)
        k = fp16(rope(h @ get(p + "attn_k.weight").T, n_kv))
        v = fp16(h @ get(p + "attn_v.weight").T)
        out = np.zeros_like(q)
        for head in range(n_heads):
            g = head // (n_heads // n_kv)
            s = q[:, head * d:(head + 1) * d] @ k[:, g * d:(g + 1) * d].T / np.sqrt(d) + causal
            s = np.exp(s - s.max(-1, keepdims=True))
            out[:, head * d:(head + 1) * d] = (s / s.sum(-1, keepdims=True)) @ v[:, g * d:(g + 1) * d]
        x = x + out @ get(p + "attn_output.weight").T
        h = rms(x, get(p + "ffn_norm.weight"))
        gate = h @ get(p + "ffn_gate.weight").T
        x = x + (gate / (1 + np.exp(-gate)) * (h @ get(p + "ffn_up.weight").T)) @ get(
            p + "ffn_down.weight").T
    return rms(x, get("output_norm.weight")) @ embd.T


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=default_model())
    args = ap.parse_args()
    require_model(args.model)
    reader = GGUFReader(args.model)
    fixture = json.loads((FIXTURES / "logits.json").read_text())
    prompts = []
    for prompt in fixture["prompts"]:
        logits = forward(reader, prompt["ids"])
        positions = []
        for rec in prompt["positions"]:
            row = logits[rec["pos"]]
            top = np.argsort(-row, kind="stable")[:5]
            positions.append({
                "pos": rec["pos"],
                "llama_cpp_top_ids": rec["top_ids"],
                "logits_of_llama_cpp_top_ids": [round(float(row[i]), 5) for i in rec["top_ids"]],
                "top_ids": [int(i) for i in top],
                "top_logits": [round(float(row[i]), 5) for i in top],
            })
        gap = max(abs(a - b) for r, f in zip(positions, prompt["positions"])
                  for a, b in zip(r["logits_of_llama_cpp_top_ids"], f["top_logits"]))
        agree = sum(r["top_ids"][0] == f["top_ids"][0] for r, f in zip(positions, prompt["positions"]))
        print("%-13s top-1 agrees with llama.cpp at %d of %d positions; largest logit gap %.3f"
              % (prompt["name"], agree, len(positions), gap))
        prompts.append({"name": prompt["name"], "positions": positions})
    out = {"model_sha256": fixture["model_sha256"],
           "note": "float64 NumPy forward (scripts/make-reference-logits.py), K and V rounded "
                   "to FP16, no activation quantization",
           "prompts": prompts}
    (FIXTURES / "reference_logits.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
