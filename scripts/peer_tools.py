"""What the developer scripts that read the model with other implementations share:
scripts/make-fixtures.py and bench/peers/llama_cpp_decode.py (llama.cpp), and
scripts/make-reference-logits.py (gguf-py and NumPy)."""

import hashlib
import os
import sys

MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model():
    """The GGUF that scripts/fetch-models puts in $COCKTAIL_MODEL_DIR."""
    root = os.environ.get("COCKTAIL_MODEL_DIR", os.path.expanduser("~/.cache/cocktail/models"))
    return os.path.join(root, MODEL_NAME)


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
