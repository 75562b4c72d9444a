#!/usr/bin/env python3
"""Writes the binary seed files of fuzz/corpus (GGUF and safetensors): small valid files and a
few near misses, so the fuzzers start from the formats' shapes. The text seeds are hand-written."""
import json
import struct
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"

# GGUF value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
F32_TENSOR, F16_TENSOR, Q4_0_TENSOR = 0, 1, 2


def gguf_string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf_value(kind: int, value) -> bytes:
    if kind == STRING:
        return gguf_string(value)
    if kind == ARRAY:
        element_kind, items = value
        body = b"".join(gguf_value(element_kind, item) for item in items)
        return struct.pack("<IQ", element_kind, len(items)) + body
    formats = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?",
               U64: "Q", I64: "q", F64: "d"}
    return struct.pack("<" + formats[kind], value)


def gguf(metadata, tensors, version=3, alignment=32) -> bytes:
    """metadata: [(key, kind, value)], tensors: [(name, dims, type, data bytes)]."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(metadata))
    for key, kind, value in metadata:
        out += gguf_string(key) + struct.pack("<I", kind) + gguf_value(kind, value)
    offset = 0
    for name, dims, kind, data in tensors:
        out += gguf_string(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", kind, offset)
        offset += -(-len(data) // alignment) * alignment
    out += b"\0" * (-len(out) % alignment)
    for _, _, _, data in tensors:
        out += data + b"\0" * (-len(data) % alignment)
    return out


def write_gguf_seeds():
    folder = CORPUS / "gguf"
    folder.mkdir(parents=True, exist_ok=True)
    metadata = [
        ("general.architecture", STRING, "llama"),
        ("general.alignment", U32, 32),
        ("llama.block_count", U32, 1),
        ("llama.rope.freq_base", F32, 10000.0),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, ["a", "b", "ab"])),
        ("tokenizer.ggml.token_type", ARRAY, (I32, [1, 1, 1])),
        ("tokenizer.ggml.add_bos_token", BOOL, True),
        ("nested", ARRAY, (ARRAY, [(U8, [1, 2]), (I64, [-1])])),
    ]
    tensors = [
        ("token_embd.weight", [4, 2], F32_TENSOR, struct.pack("<8f", *range(8))),
        ("blk.0.attn_q.weight", [32, 1], Q4_0_TENSOR, b"\x00\x3c" + bytes(range(16))),
        ("output_norm.weight", [4], F16_TENSOR, b"\x00\x3c" * 4),
    ]
    full = gguf(metadata, tensors)
    (folder / "model-v3").write_bytes(full)
    (folder / "model-v2").write_bytes(gguf(metadata[:3], tensors[:1], version=2))
    (folder / "empty-v3").write_bytes(gguf([], []))
    (folder / "truncated").write_bytes(full[: len(full) // 2])


def safetensors(header: dict, data: bytes) -> bytes:
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + data


def write_safetensors_seeds():
    folder = CORPUS / "safetensors"
    folder.mkdir(parents=True, exist_ok=True)
    header = {
        "__metadata__": {"format": "pt"},
        "embeddings.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
        "encoder.bias": {"dtype": "F16", "shape": [2], "data_offsets": [16, 20]},
        "pooler.dense": {"dtype": "BF16", "shape": [1, 2], "data_offsets": [20, 24]},
        "position_ids": {"dtype": "I64", "shape": [1], "data_offsets": [24, 32]},
    }
    data = struct.pack("<4f", 1, 2, 3, 4) + b"\x00\x3c" * 2 + b"\x80\x3f" * 2 + struct.pack("<q", 7)
    (folder / "tensors").write_bytes(safetensors(header, data))
    (folder / "scalar").write_bytes(
        safetensors({"x": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}}, b"\0\0\x80\x3f"))
    (folder / "empty").write_bytes(safetensors({}, b""))
    bad = dict(header, **{"encoder.bias": {"dtype": "F16", "shape": [3], "data_offsets": [16, 20]}})
    (folder / "shape-mismatch").write_bytes(safetensors(bad, data))


if __name__ == "__main__":
    write_gguf_seeds()
    write_safetensors_seeds()
