#!/usr/bin/env python3
"""Record a model's reference fixtures with llama.cpp (llama-cpp-python).

Cocktail has its own GGUF reader, BPE tokenizer and Llama decoder. To test them against an
independent implementation, this script runs the same GGUF file through llama.cpp and writes
what llama.cpp computes to small JSON files that the C++ tests read. --model names the model,
as scripts/fetch-models does: smollm2 (SmolLM2-135M-Instruct, Q4_1) or qwen2.5-coder-1.5b
(Qwen2.5-Coder-1.5B-Instruct, Q4_K_M).

  tokens.json  token ids for a varied set of texts (spaces, tabs, newlines, contractions,
               numbers, code, URLs, many scripts, emoji with ZWJ sequences, chat special tokens
               written literally, the empty string), each tokenized twice with add_bos=False:
               once with special=False (special tokens are plain text) and once with
               special=True (special tokens are parsed).
  logits.json  three ChatML prompts (the model's own chat template, rendered by hand and
               checked against the template stored in the GGUF), one of them long (over 1000
               tokens for SmolLM2, 2000 for Qwen) built from apps/cocktail/sample_context.txt. For each prompt: its token ids, the
               top-5 token ids and raw logits at positions spread over the prompt (the last one
               always included), and a greedy (temperature 0, argmax) continuation of 16 tokens
               with the top-5 logits at each generated step (it does not stop at <|im_end|>).
  logits_f32.json  the same, with every tensor of the model dequantized to F32 (gguf-py)
               before llama.cpp loads it. On a quantized file llama.cpp rounds the activations
               of its matmuls to 8 bits (Q8_1, Q8_K), which moves SmolLM2's logits by up to 0.75
               from the exact forward of those weights; on the same weights in F32 it multiplies
               in float, so this file tells an implementation's errors from llama.cpp's
               rounding. (For Qwen the F32 copy takes about 7 GB of disk and memory.)

All files also record the llama-cpp-python version, the model file name and its SHA-256.
Floats are rounded to 6 significant digits and the JSON layout is fixed, so running the script
twice gives identical files.

This is a developer tool; CI does not run it. It needs llama-cpp-python (which builds llama.cpp
from source; bench/peers/README.md shows how to install it) and gguf-py (pip install gguf).

    scripts/make-fixtures.py                 # writes tests/fixtures/smollm2/*.json
    scripts/make-fixtures.py --model qwen2.5-coder-1.5b   # tests/fixtures/qwen2.5-coder-1.5b/
    scripts/make-fixtures.py --out /tmp/fx   # somewhere else

The model is found in $COCKTAIL_MODEL_DIR (default ~/.cache/cocktail/models), or --gguf names
the file.
"""

import argparse
import math
import os
import pathlib
import sys
import tempfile

from peer_tools import (MODEL_NAME, default_model, expand_to_f32, file_sha256,
                        import_llama_cpp, require_model)

REPO = pathlib.Path(__file__).resolve().parent.parent


class Model:
    """What the fixtures of one model depend on: its file, its chat template's default system
    prompt, the long prompt's least length, and texts for tokens.json beyond the common ones."""

    def __init__(self, file, system, long_min_tokens, extra_texts=()):
        self.file, self.system = file, system
        self.long_min_tokens, self.extra_texts = long_min_tokens, list(extra_texts)


# Texts of Qwen's own special tokens, and code as a coder model sees it.
QWEN_TEXTS = [
    ("tool_call", "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>"),
    ("fim", "<|fim_prefix|>def add(a, b):\n<|fim_suffix|>\n    return c<|fim_middle|>"),
    ("python_nested",
     "class A:\n"
     "    def f(self):\n"
     "        if self.x:\n"
     "            return [i ** 2 for i in range(10)]\n"
     "\n"
     "\n"
     "        return None  # 'none'\n"),
    ("digits_and_code", "x = 3.14159265358979; y = 1_000_000; z = 0xDEADBEEF // 255"),
    # Qwen's contractions match in either case, and end the word they start.
    ("contractions_any_case", "'Sup? I'Mma go, Y'ALLdone, DON'Tcha, it'Sfine, WE'LLsee"),
]

MODELS = {
    "smollm2": Model(MODEL_NAME, "You are a helpful AI assistant named SmolLM, trained by Hugging "
                     "Face", 1000),
    "qwen2.5-coder-1.5b": Model("Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf",
                                "You are Qwen, created by Alibaba Cloud. You are a helpful "
                                "assistant.", 2000, QWEN_TEXTS),
}


# The texts for tokens.json of every model, as (name, text); names are stable ids for the
# tests. chat_full, None here, is a whole chat with the model's default system prompt.
COMMON_TEXTS = [
    ("plain", "The quick brown fox jumps over the lazy dog."),
    ("hello", "Hello world"),
    ("mixed_case", "HELLO World hELLo wOrLd"),
    ("leading_space", " leading space"),
    ("trailing_space", "trailing space "),
    ("multiple_spaces", "multiple   spaces    between  words     end"),
    ("only_spaces", "    "),
    ("tabs", "tab\tseparated\t\tvalues\t"),
    ("newline", "line one\nline two"),
    ("double_newline", "para one\n\npara two\n\n\n"),
    ("crlf", "windows\r\nline endings\r\n\r\n"),
    ("indent", "    indented line\n\tand a tab\n  \n"),
    ("contractions", "It's what they're saying: we'll see, I'M sure you'VE heard he'd go."),
    ("contractions2", "don't can't won't shouldn't y'all 'quoted' rock'n'roll"),
    ("numbers", "1234567 and 3.14159 on 2026-11-22"),
    ("long_numbers", "0 00 000 1000000000000 -42 +7 1e-9 0x1F 12,345,678.90"),
    ("punctuation", "Wait... what?!?! ---- *** (!!!) ;;; ''' \"\" ~~ @#$%^&*"),
    ("cpp",
     "#include <vector>\n"
     "int main() {\n"
     "    std::vector<int> v{1, 2, 3};\n"
     "    for (auto& x : v) x *= 2;\n"
     "    return v[0] == 2 ? 0 : 1; // done\n"
     "}\n"),
    ("python",
     "def f(x: int) -> int:\n"
     "    \"\"\"Double x.\"\"\"\n"
     "    return x * 2  # comment\n"
     "\n"
     "print([f(i) for i in range(3)], {'a': 1})\n"),
    ("url", "See https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct?tab=files#readme "
            "or mailto:someone@example.com."),
    ("accented", "Café naïve résumé à la crème brûlée, Ångström, Zoë, façade, Straße, ÆØÅ"),
    ("greek", "Καλημέρα κόσμε! Η γλώσσα μου έδωσαν ελληνική."),
    ("cyrillic", "Привет, мир! Съешь же ещё этих мягких французских булок."),
    ("chinese", "你好，世界。今天天气很好。"),
    ("japanese", "日本語のテキスト、カタカナとひらがな。"),
    ("korean", "안녕하세요 세계"),
    ("arabic", "مرحبا بالعالم، كيف حالك؟"),
    ("devanagari", "नमस्ते दुनिया"),
    ("math_symbols", "∑ x² ≤ ∞, α→β, ½ + ¾ ≠ 1"),
    ("unicode_spaces", "non\u00a0breaking\u00a0space and zero\u200bwidth"),
    ("emoji", "I love pizza 🍕🍕 and parties 🎉!"),
    ("emoji_zwj", "Family: 👨‍👩‍👧‍👦, flag: 🏳️‍🌈, thumbs: 👍🏽, heart: ❤️"),
    ("repeated_chars", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
    ("single_char", "a"),
    ("single_space", " "),
    ("single_newline", "\n"),
    ("chat_literal", "<|im_start|>user\nHi<|im_end|>"),
    ("chat_full", None),
    ("special_endoftext", "end<|endoftext|>start"),
    ("special_partial", "<|im_start <|im_end|>x <|im_end"),
    ("empty", ""),
]

# The prompts for logits.json: (name, user message). The long one is filled in from the sample
# document at run time.
SHORT_PROMPTS = [
    ("short_fact", "What is the capital of France? Answer in one sentence."),
    ("medium_code", "Write a Python function that reverses a string."),
]
LONG_QUESTION = ("Using only the text above, describe what is kept on each floor of the "
                 "Harbour Street Archive.")


def render_chatml(user, system):
    """The model's ChatML template with its default system prompt, one user message and
    add_generation_prompt=True."""
    return ("<|im_start|>system\n" + system + "<|im_end|>\n"
            "<|im_start|>user\n" + user + "<|im_end|>\n"
            "<|im_start|>assistant\n")


def texts_of(model):
    """tokens.json's texts for `model`: the common ones, then the model's own."""
    chat = render_chatml("What is 2+2?", model.system)
    return ([(name, chat if text is None else text) for name, text in COMMON_TEXTS]
            + model.extra_texts)


def check_template(template, rendered, user, system):
    """Render the GGUF's own template with jinja2 (a llama-cpp-python dependency) and compare."""
    if not template:
        sys.exit("the GGUF has no tokenizer.chat_template")
    if system not in template:
        sys.exit("the GGUF template does not contain the expected default system prompt")
    try:
        import jinja2
    except ImportError:
        print("warning: jinja2 missing, the chat template was not rendered", file=sys.stderr)
        return
    # As transformers and llama-cpp-python render chat templates (no trailing newline kept).
    env = jinja2.Environment(loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True)
    out = env.from_string(template).render(messages=[{"role": "user", "content": user}],
                                           add_generation_prompt=True,
                                           bos_token="<|im_start|>", eos_token="<|im_end|>")
    if out != rendered:
        sys.exit("hand-rendered ChatML differs from the GGUF template:\n%r\n%r" % (out, rendered))


# --- stable JSON -------------------------------------------------------------------------------

def fmt_float(x):
    x = float(x)
    if not math.isfinite(x):
        raise ValueError("non-finite float %r" % x)
    s = "%.6g" % x
    # Keep a float-looking literal so readers can tell floats from ints.
    if "." not in s and "e" not in s and "n" not in s:
        s += ".0"
    return s


def dump(obj, indent=0):
    """JSON with 2-space indent where lists of scalars stay on one line."""
    import json
    pad = "  " * indent
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [pad + "  " + json.dumps(str(k), ensure_ascii=False) + ": " + dump(v, indent + 1)
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, (list, tuple)):
        if all(not isinstance(v, (dict, list, tuple)) for v in obj):
            return "[" + ", ".join(dump(v, indent + 1) for v in obj) + "]"
        items = [pad + "  " + dump(v, indent + 1) for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    if isinstance(obj, bool) or obj is None:
        return json.dumps(obj)
    if isinstance(obj, int):
        return str(int(obj))
    if isinstance(obj, float):
        return fmt_float(obj)
    if isinstance(obj, str):
        return json.dumps(obj, ensure_ascii=False)
    # numpy scalars
    if hasattr(obj, "dtype"):
        return dump(obj.item(), indent)
    raise TypeError("cannot dump %r" % type(obj))


def write_json(path, obj):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(dump(obj) + "\n")


# --- logits ------------------------------------------------------------------------------------

def top_k(np, row, k):
    """Top-k ids by logit, ties broken by the lower id (stable)."""
    order = np.lexsort((np.arange(row.shape[0]), -row.astype(np.float64)))[:k]
    return [int(i) for i in order], [float(row[i]) for i in order]


def logsumexp(np, row):
    r = row.astype(np.float64)
    m = r.max()
    return float(m + np.log(np.exp(r - m).sum()))


def spread_positions(n, count):
    """count positions spread over [0, n), always with 0 and n-1, sorted and unique."""
    if n <= count:
        return list(range(n))
    return sorted({round(i * (n - 1) / (count - 1)) for i in range(count)})


def long_user_message(llm, context_file, min_tokens, system):
    """The document, then its paragraphs again in order until the prompt has min_tokens."""
    doc = pathlib.Path(context_file).read_text(encoding="utf-8").strip()
    paragraphs = [p.strip() for p in doc.split("\n\n") if p.strip()]
    parts = list(paragraphs)
    while True:
        user = "\n\n".join(parts) + "\n\n" + LONG_QUESTION
        n = len(llm.tokenize(render_chatml(user, system).encode(), add_bos=False, special=True))
        if n >= min_tokens:
            return user, len(parts) - len(paragraphs)
        parts.append(paragraphs[(len(parts) - len(paragraphs)) % len(paragraphs)])


def record_prompt(np, llm, name, user, system, positions, k, gen_tokens, eog_ids):
    text = render_chatml(user, system)
    ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
    llm.reset()
    llm.eval(ids)
    n = len(ids)
    scores = llm.scores
    pos_records = []
    for p in spread_positions(n, positions):
        tid, tl = top_k(np, scores[p], k)
        pos_records.append({"pos": p, "top_ids": tid, "top_logits": tl,
                            "logsumexp": logsumexp(np, scores[p])})
    # Greedy continuation: argmax of the last logits, fed back one token at a time.
    # End-of-generation tokens do not stop it: there are always gen_tokens ids.
    gen, steps = [], []
    row = np.array(scores[n - 1], copy=True)
    first_eog = None
    for i in range(gen_tokens):
        tid, tl = top_k(np, row, k)
        nxt = tid[0]
        gen.append(nxt)
        steps.append({"top_ids": tid, "top_logits": tl})
        if nxt in eog_ids and first_eog is None:
            first_eog = i
        if i + 1 == gen_tokens:
            break
        llm.eval([nxt])
        row = np.array(llm.scores[llm.n_tokens - 1], copy=True)
    gen_text = llm.detokenize(gen, special=True).decode("utf-8", errors="replace")
    return {
        "name": name,
        "user": user,
        "prompt": text,
        "n_tokens": n,
        "ids": ids,
        "positions": pos_records,
        "greedy": {
            "n_tokens": len(gen),
            "ids": gen,
            "text": gen_text,
            "first_eog_index": first_eog,
            "steps": steps,
        },
    }


N_CTX = 4096


def open_model(llama_cpp, path, args):
    return llama_cpp.Llama(model_path=path, n_ctx=N_CTX, n_batch=2048, n_ubatch=512,
                           n_threads=args.threads, n_threads_batch=args.threads,
                           logits_all=True, seed=args.seed, verbose=False)


def record_logits(np, llm, eog_ids, prompts_in, extra, source, args):
    """logits.json's content for one model file: every prompt's positions and greedy steps."""
    prompts = []
    for name, user in prompts_in:
        rec = record_prompt(np, llm, name, user, args.system, args.positions, args.top_k,
                            args.gen_tokens, eog_ids)
        if rec["n_tokens"] + args.gen_tokens > N_CTX:
            sys.exit("prompt %s does not fit n_ctx" % name)
        prompts.append(rec)
    logits = dict(source)
    logits.update({
        "settings": {
            "n_ctx": N_CTX, "n_batch": 2048, "n_ubatch": 512, "n_threads": args.threads,
            "type_k": "f16", "type_v": "f16", "flash_attn": False, "seed": args.seed,
            "add_bos": False, "special": True,
        },
        "chat_template": "ChatML as in tokenizer.chat_template with the default system prompt, "
                         "one user message, add_generation_prompt=true",
        "long_context": {
            "source": os.path.relpath(args.context_file, REPO)
            if pathlib.Path(args.context_file).resolve().is_relative_to(REPO)
            else os.path.basename(args.context_file),
            "extra_paragraphs": extra,
            "note": "the document, then its paragraphs again from the first, until the prompt "
                    "has at least %d tokens" % args.long_min_tokens,
        },
        "note": "positions[].pos is a 0-based prompt position; its logits predict token pos+1. "
                "top_logits are raw logits, logsumexp is over the whole vocabulary. greedy: "
                "argmax (ties to the lower id) from the last prompt position, then one token at "
                "a time through the KV cache; steps[i] holds the logits that chose ids[i]. "
                "End-of-generation tokens do not stop it; first_eog_index is the first such "
                "step or null.",
        "prompts": prompts,
    })
    return logits


def print_greedy(label, logits):
    for p in logits["prompts"]:
        margin = min(s["top_logits"][0] - s["top_logits"][1] for s in p["greedy"]["steps"])
        print("%-8s %-13s %5d prompt tokens, smallest greedy margin %.3f, greedy: %r"
              % (label, p["name"], p["n_tokens"], margin, p["greedy"]["text"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=sorted(MODELS), default="smollm2",
                    help="the model, as scripts/fetch-models names it (default: %(default)s)")
    ap.add_argument("--gguf", help="its GGUF file (default: where scripts/fetch-models puts it)")
    ap.add_argument("--out", help="output folder (default: tests/fixtures/<model>)")
    ap.add_argument("--context-file", default=str(REPO / "apps" / "cocktail" / "sample_context.txt"),
                    help="document for the long prompt (default: %(default)s)")
    ap.add_argument("--long-min-tokens", type=int,
                    help="the long prompt is at least this many tokens; the document is repeated "
                         "if it is shorter (default: 1000 for smollm2, 2000 for Qwen)")
    ap.add_argument("--positions", type=int, default=24,
                    help="logit positions per prompt (default: %(default)s)")
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--gen-tokens", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    if args.positions < 16:
        ap.error("--positions must be at least 16")
    model = MODELS[args.model]
    args.system = model.system
    args.gguf = args.gguf or default_model(model.file)
    args.out = args.out or str(REPO / "tests" / "fixtures" / args.model)
    args.long_min_tokens = args.long_min_tokens or model.long_min_tokens

    np, llama_cpp = import_llama_cpp()
    require_model(args.gguf)

    digest = file_sha256(args.gguf)
    llm = open_model(llama_cpp, args.gguf, args)
    meta = llm.metadata
    template = meta.get("tokenizer.chat_template", "")
    user = SHORT_PROMPTS[0][1]
    check_template(template, render_chatml(user, args.system), user, args.system)

    eog_ids = {i for i in range(llm.n_vocab())
               if llama_cpp.llama_vocab_is_eog(llm._model.vocab, i)}

    source = {
        "generator": "scripts/make-fixtures.py",
        "llama_cpp_python": llama_cpp.__version__,
        "model_file": os.path.basename(args.gguf),
        "model_sha256": digest,
    }

    # tokens.json
    texts = texts_of(model)
    names = [n for n, _ in texts]
    assert len(set(names)) == len(names)
    cases = []
    for name, text in texts:
        raw = text.encode("utf-8")
        cases.append({
            "name": name,
            "text": text,
            "ids": llm.tokenize(raw, add_bos=False, special=False),
            "ids_special": llm.tokenize(raw, add_bos=False, special=True),
        })
    vocab = llm._model.vocab
    tokens = dict(source)
    tokens.update({
        "n_vocab": llm.n_vocab(),
        "add_bos_token": bool(llama_cpp.llama_vocab_get_add_bos(vocab)),
        "bos_id": int(llama_cpp.llama_vocab_bos(vocab)),
        "eos_id": int(llama_cpp.llama_vocab_eos(vocab)),
        "note": "ids: add_bos=False, special=False (special tokens are plain text); "
                "ids_special: add_bos=False, special=True (special tokens are parsed)",
        "cases": cases,
    })

    # logits.json: the model file as it is, so llama.cpp rounds activations to 8 bits.
    prompts_in = list(SHORT_PROMPTS)
    long_user, extra = long_user_message(llm, args.context_file, args.long_min_tokens,
                                         args.system)
    prompts_in.append(("long_context", long_user))
    logits = record_logits(np, llm, eog_ids, prompts_in, extra, source, args)
    del llm

    # logits_f32.json: the same weights dequantized to F32, so llama.cpp multiplies in float.
    with tempfile.TemporaryDirectory() as tmp:
        expanded = os.path.join(tmp, "f32.gguf")
        gguf_version = expand_to_f32(args.gguf, expanded)
        f32_source = dict(source)
        f32_source["weights"] = ("every tensor of model_file dequantized to F32 by gguf-py %s "
                                 "(scripts/peer_tools.py expand_to_f32) before llama.cpp loads "
                                 "it" % gguf_version)
        llm = open_model(llama_cpp, expanded, args)
        logits_f32 = record_logits(np, llm, eog_ids, prompts_in, extra, f32_source, args)
        del llm

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = {"tokens.json": tokens, "logits.json": logits, "logits_f32.json": logits_f32}
    for name, content in files.items():
        write_json(out / name, content)
        print("wrote %s (%d bytes)" % (out / name, (out / name).stat().st_size))
    print_greedy("model", logits)
    print_greedy("f32", logits_f32)


if __name__ == "__main__":
    main()
