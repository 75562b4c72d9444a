"""What the developer scripts that read the model with other implementations share:
scripts/make-fixtures.py (llama.cpp, and gguf-py to expand the weights to F32),
bench/peers/llama_cpp_decode.py and bench/peers/llama_bench.py (llama.cpp) and
scripts/make-reference-logits.py (gguf-py and NumPy)."""

import argparse
import hashlib
import json
import os
import sys

MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model(name=MODEL_NAME):
    """The GGUF `name` (SmolLM2's by default) where scripts/fetch-models puts it, in
    $COCKTAIL_MODEL_DIR."""
    root = os.environ.get("COCKTAIL_MODEL_DIR", os.path.expanduser("~/.cache/cocktail/models"))
    return os.path.join(root, name)


def require_model(path):
    if not os.path.exists(path):
        sys.exit("model not found: %s (run scripts/fetch-models, set COCKTAIL_MODEL_DIR or pass "
                 "--model)" % path)


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def import_llama_cpp():
    """(numpy, llama_cpp), or exit with how to install them."""
    try:
        import numpy
        import llama_cpp
    except ImportError as e:
        sys.exit("%s\ninstall llama-cpp-python 0.3.36 first, as bench/peers/README.md shows (it "
                 "builds llama.cpp from source; virtual machines whose CPU reports AMX without "
                 "enabling it need the -mno-amx-* flags given there)" % e)
    return numpy, llama_cpp


def dequantized(tensor, dtype):
    """A gguf-py reader tensor's values as a NumPy array of `dtype`, rows first (GGUF lists the
    dimensions innermost first)."""
    from gguf.quants import dequantize
    shape = [int(x) for x in reversed(tensor.shape.tolist())]
    return dequantize(tensor.data, tensor.tensor_type).astype(dtype).reshape(shape)


def expand_to_f32(src, dst):
    """Writes a copy of the GGUF `src` to `dst` with every tensor dequantized to F32 by gguf-py:
    the same weight values, which llama.cpp then multiplies in float instead of rounding the
    activations to 8 bits as it does for quantized weights. Returns the gguf-py version."""
    try:
        import numpy
        from gguf import GGUFReader, GGUFValueType, GGUFWriter
        from importlib.metadata import version
    except ImportError as e:
        sys.exit("%s\ninstall gguf-py first: python3 -m pip install numpy gguf" % e)
    reader = GGUFReader(src)
    writer = GGUFWriter(dst, arch=reader.fields["general.architecture"].contents())
    for key, f in reader.fields.items():
        # GGUF.* are the reader's view of the header; the writer adds the architecture itself.
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        value = 0 if key == "general.file_type" else f.contents()  # 0: all F32
        sub_type = f.types[1] if f.types[0] == GGUFValueType.ARRAY else None
        writer.add_key_value(key, value, f.types[0], sub_type=sub_type)
    for t in reader.tensors:
        writer.add_tensor(t.name, dequantized(t, numpy.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return version("gguf")


def parse_int_list(s):
    try:
        out = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected a comma-separated list of integers: %r" % s)
    if not out or any(x <= 0 for x in out):
        raise argparse.ArgumentTypeError("expected positive integers: %r" % s)
    return out


def load_ours(paths):
    """Reads files of `cocktail bench decode --json` (see bench/peers/README.md): each one's FP16 and
    configured results (those of its median round), keyed by the whole prompt's length."""
    out = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        try:
            n = int(data["configured"]["prompt_tokens"])
            out[n] = {cache: {key: data[cache].get(key) for key in ("prefill_s", "tpot_s",
                                                                     "kv_bytes")}
                      for cache in ("fp16", "configured")}
        except (KeyError, TypeError, ValueError) as e:
            sys.exit("%s: not the JSON of `cocktail bench decode --json` (%s)" % (path, e))
    return out
