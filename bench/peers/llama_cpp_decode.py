#!/usr/bin/env python3
"""llama.cpp peer benchmark: prefill time and time per output token (TPOT) for SmolLM2-135M.

For every context length N and every KV cache type, the script builds a ChatML prompt of
exactly N tokens (system prompt, a user message made of the context text repeated or truncated,
a question at the end, the assistant header), prefills it, then generates --gen-tokens tokens
greedily (argmax; end-of-generation tokens do not stop it). Flash attention is always on: llama.cpp
needs it for a quantized V cache, and it keeps f16 and quantized runs on the same kernel.

Timings come from llama.cpp itself (llama_perf_context, through llama-cpp-python's low-level
ctypes API), not from Python: prefill_s is t_p_eval_ms (all prompt batches), tpot_s is
t_eval_ms / n_eval over the single-token decodes. The first generated token comes from the
prefill's last logits, so the gen-tokens - 1 decodes measured are exactly "every generated
token but the first". Python wall-clock times are reported next to them as a cross-check.

KV bytes: kv_bytes is computed from the model's shape and the cache types for the N context
tokens (layers x kv_heads x head_dim x N x bytes per element, per K and V; block-quantized
types counted with their scales); kv_alloc_bytes is the same formula for the cells llama.cpp
allocated, and kv_alloc_mib_llama is the size llama.cpp itself logs for its cache.

    bench/peers/llama_cpp_decode.py --context-tokens 512,4096,8192 --json out.json
    bench/peers/llama_cpp_decode.py --context-tokens 556,4140 --ours ours-512.json --ours ours-4096.json

--ours reads JSON written by `cocktail bench decode --json` (see bench/peers/README.md for the
fields), each file matched to the context length equal to its prompt length, and prints
ours / llama.cpp ratios side by side.
"""

import argparse
import ctypes
import json
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from peer_tools import (default_model, file_sha256, import_llama_cpp, load_ours,  # noqa: E402
                        parse_int_list, require_model)

SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
QUESTION = "Summarize the text above in three sentences."

# Used when no --context-file is given; repeated as needed.
BUILTIN_TEXT = """\
The lighthouse keeper wrote in the logbook every evening at six. He noted the wind, the height of
the swell, the ships that passed the point and the state of the lamp. In winter the entries grew
short, because the oil froze in the tins and the glass of the lantern room had to be scraped
twice a night. In summer they grew long, and he wrote about the birds that nested on the rocks
below the tower, the seals that came up on the shingle at low tide, and the fishing boats that
stayed out past dark and came home by the beam of his light.

The island had no trees. A wall of grey stone ran around the keeper's cottage to keep the goats
out of the garden, where he grew potatoes, cabbages and a row of beans that rarely ripened. Once
a month a supply boat brought flour, oil, letters and newspapers that were already two weeks old.
He read the newspapers slowly, one page each day, so that they would last until the next boat.

When the lamp was converted to electricity the keeper was told he would no longer be needed.
He stayed one more winter to show the engineers how the tower behaved in a storm: which windows
leaked, which stairs grew slippery, which door had to be wedged shut when the wind came from the
north. In the spring he packed the logbooks into a wooden crate and took them to the harbour
office on the mainland, where they are still kept on a shelf behind the counter.
"""

# Bytes per element of the ggml cache types we accept: (ggml type id, block bytes, block elems).
KV_TYPES = {
    "f32": (0, 4, 1),
    "f16": (1, 2, 1),
    "q4_0": (2, 18, 32),
    "q4_1": (3, 20, 32),
    "q5_0": (6, 22, 32),
    "q5_1": (7, 24, 32),
    "q8_0": (8, 34, 32),
    "iq4_nl": (20, 18, 32),
    "bf16": (30, 2, 1),
}


def parse_kv_types(s):
    out = [x.strip() for x in s.split(",") if x.strip()]
    for t in out:
        if t not in KV_TYPES:
            raise argparse.ArgumentTypeError("unknown KV type %r (known: %s)"
                                             % (t, ", ".join(KV_TYPES)))
    return out


class LogCapture:
    """Replaces llama.cpp's log callback: keeps the lines, prints warnings and errors (all of
    it with --verbose). ggml levels: 1 debug, 2 info, 3 warn, 4 error, 5 continuation."""

    def __init__(self, llama_cpp, verbose):
        self.lines = []
        self.verbose = verbose
        self.printing = False

        @llama_cpp.llama_log_callback
        def callback(level, text, user_data):
            s = text.decode("utf-8", errors="replace") if text else ""
            self.lines.append(s)
            if level != 5:
                self.printing = verbose or level >= 3
            if self.printing:
                sys.stderr.write(s)

        self._callback = callback  # keep the ctypes thunk alive
        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))

    def take(self):
        text = "".join(self.lines)
        self.lines = []
        return text


class Peer:
    """A llama.cpp model plus the helpers to tokenize, decode and read timings."""

    def __init__(self, llama_cpp, np, path, threads):
        self.L = llama_cpp
        self.np = np
        mp = llama_cpp.llama_model_default_params()
        mp.n_gpu_layers = 0
        self.model = llama_cpp.llama_model_load_from_file(path.encode(), mp)
        if not self.model:
            sys.exit("llama.cpp could not load %s" % path)
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.n_layer = llama_cpp.llama_model_n_layer(self.model)
        self.n_head = llama_cpp.llama_model_n_head(self.model)
        self.n_head_kv = llama_cpp.llama_model_n_head_kv(self.model)
        self.n_embd = llama_cpp.llama_model_n_embd(self.model)
        self.head_dim_k = self.meta_int("llama.attention.key_length", self.n_embd // self.n_head)
        self.head_dim_v = self.meta_int("llama.attention.value_length", self.n_embd // self.n_head)
        self.n_ctx_train = llama_cpp.llama_model_n_ctx_train(self.model)
        self.threads = threads
        self.ctx = None

    def meta_int(self, key, fallback):
        buf = ctypes.create_string_buffer(64)
        n = self.L.llama_model_meta_val_str(self.model, key.encode(), buf, 64)
        if n <= 0:
            return fallback
        try:
            return int(buf.value.decode())
        except ValueError:
            return fallback

    def tokenize(self, text, special):
        raw = text.encode("utf-8")
        cap = len(raw) + 16
        arr = (self.L.llama_token * cap)()
        n = self.L.llama_tokenize(self.vocab, raw, len(raw), arr, cap, False, special)
        if n < 0:
            cap = -n
            arr = (self.L.llama_token * cap)()
            n = self.L.llama_tokenize(self.vocab, raw, len(raw), arr, cap, False, special)
        if n < 0:
            raise RuntimeError("tokenization failed")
        return list(arr[:n])

    def new_context(self, n_ctx, n_batch, n_ubatch, kv):
        self.free_context()
        cp = self.L.llama_context_default_params()
        cp.n_ctx = n_ctx
        cp.n_batch = n_batch
        cp.n_ubatch = n_ubatch
        cp.n_seq_max = 1
        cp.n_threads = self.threads
        cp.n_threads_batch = self.threads
        cp.flash_attn_type = self.L.LLAMA_FLASH_ATTN_TYPE_ENABLED
        cp.type_k = KV_TYPES[kv][0]
        cp.type_v = KV_TYPES[kv][0]
        cp.no_perf = False
        self.ctx = self.L.llama_init_from_model(self.model, cp)
        if not self.ctx:
            sys.exit("llama.cpp could not create a context (n_ctx=%d, kv=%s)" % (n_ctx, kv))
        self.mem = self.L.llama_get_memory(self.ctx)

    def free_context(self):
        if self.ctx:
            self.L.llama_free(self.ctx)
            self.ctx = None

    def clear(self):
        self.L.llama_memory_clear(self.mem, True)
        self.L.llama_perf_context_reset(self.ctx)

    def decode(self, ids):
        arr = (self.L.llama_token * len(ids))(*ids)
        rc = self.L.llama_decode(self.ctx, self.L.llama_batch_get_one(arr, len(ids)))
        if rc != 0:
            sys.exit("llama_decode failed with %d" % rc)

    def argmax_last(self):
        # llama_get_logits_ith synchronizes, which is where llama.cpp books the timings.
        ptr = self.L.llama_get_logits_ith(self.ctx, -1)
        return int(self.np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).argmax())

    def perf(self):
        return self.L.llama_perf_context(self.ctx)

    def free(self):
        self.free_context()
        self.L.llama_model_free(self.model)


def prefill_chunks(n, n_batch):
    """Chunks of at most n_batch tokens, none of them a single token: llama.cpp books a
    one-token decode as generation, not as prompt processing."""
    sizes = []
    left = n
    while left > 0:
        take = min(n_batch, left)
        if left - take == 1:
            take -= 1
        sizes.append(take)
        left -= take
    return sizes


def build_prompt(peer, body_ids, n_tokens, question):
    head = peer.tokenize("<|im_start|>system\n" + SYSTEM + "<|im_end|>\n<|im_start|>user\n", True)
    tail = peer.tokenize("\n\n" + question + "<|im_end|>\n<|im_start|>assistant\n", True)
    room = n_tokens - len(head) - len(tail)
    if room < 1:
        sys.exit("--context-tokens %d is too small for the chat template (%d tokens)"
                 % (n_tokens, len(head) + len(tail) + 1))
    body = []
    while len(body) < room:
        body.extend(body_ids)
    ids = head + body[:room] + tail
    assert len(ids) == n_tokens
    return ids


def kv_bytes(peer, tokens, kv):
    _, bb, be = KV_TYPES[kv]
    row_k = peer.n_head_kv * peer.head_dim_k
    row_v = peer.n_head_kv * peer.head_dim_v
    per_layer = (row_k // be * bb) + (row_v // be * bb)
    return peer.n_layer * tokens * per_layer


def parse_kv_log(text):
    m = re.search(r"llama_kv_cache: size = +([0-9.]+) MiB \( *(\d+) cells", text)
    if not m:
        return None, None
    return float(m.group(1)), int(m.group(2))


def run_one(peer, log, ids, gen_tokens, kv, repeats, n_batch, n_ubatch):
    n = len(ids)
    n_ctx = n + gen_tokens
    peer.new_context(n_ctx, n_batch, n_ubatch, kv)
    alloc_mib, cells = parse_kv_log(log.take())
    chunks = prefill_chunks(n, n_batch)

    # Warm-up: page in the weights and build the graphs once, untimed.
    peer.clear()
    peer.decode(ids[:min(64, n)])
    peer.argmax_last()
    peer.decode([ids[0]])
    peer.argmax_last()

    runs = []
    state_seq_bytes = None
    for r in range(repeats):
        peer.clear()
        t0 = time.perf_counter()
        pos = 0
        for c in chunks:
            peer.decode(ids[pos:pos + c])
            pos += c
        tok = peer.argmax_last()
        t1 = time.perf_counter()
        p = peer.perf()
        prefill_ms, n_p_eval = p.t_p_eval_ms, p.n_p_eval
        if r == 0:
            state_seq_bytes = int(peer.L.llama_state_seq_get_size(peer.ctx, 0))
        gen = [tok]
        t2 = time.perf_counter()
        for _ in range(gen_tokens - 1):
            peer.decode([tok])
            tok = peer.argmax_last()
            gen.append(tok)
        t3 = time.perf_counter()
        p = peer.perf()
        if n_p_eval != n:
            print("warning: llama.cpp booked %d prompt tokens, expected %d" % (n_p_eval, n),
                  file=sys.stderr)
        steps = gen_tokens - 1
        print("  run %d/%d: prefill %.3f s, tpot %.2f ms" % (
            r + 1, repeats, prefill_ms / 1e3, p.t_eval_ms / p.n_eval if steps > 0 else 0.0),
            file=sys.stderr, flush=True)
        runs.append({
            "prefill_s": prefill_ms / 1e3,
            "tpot_s": (p.t_eval_ms / p.n_eval / 1e3) if steps > 0 else None,
            "n_eval": p.n_eval if steps > 0 else 0,
            "wall_prefill_s": t1 - t0,
            "wall_tpot_s": (t3 - t2) / steps if steps > 0 else None,
            "generated": gen,
        })

    def med(key):
        vals = [x[key] for x in runs if x[key] is not None]
        return statistics.median(vals) if vals else None

    prefill_s = med("prefill_s")
    tpot_s = med("tpot_s")
    computed_alloc = kv_bytes(peer, cells, kv) if cells else None
    if alloc_mib is not None and computed_alloc:
        if abs(computed_alloc / 1048576.0 - alloc_mib) > 0.01 * alloc_mib + 0.01:
            print("warning: computed KV bytes %d disagree with llama.cpp's %.2f MiB"
                  % (computed_alloc, alloc_mib), file=sys.stderr)
    return {
        "context_tokens": n,
        "kv_type": kv,
        "type_k": kv,
        "type_v": kv,
        "n_ctx": n_ctx,
        "kv_cells": cells,
        "prefill_s": prefill_s,
        "prefill_tok_s": n / prefill_s if prefill_s else None,
        "tpot_s": tpot_s,
        "decode_tok_s": 1.0 / tpot_s if tpot_s else None,
        "wall_prefill_s": med("wall_prefill_s"),
        "wall_tpot_s": med("wall_tpot_s"),
        "prefill_s_min": min(x["prefill_s"] for x in runs),
        "tpot_s_min": min((x["tpot_s"] for x in runs if x["tpot_s"] is not None), default=None),
        "prefill_s_runs": [x["prefill_s"] for x in runs],
        "tpot_s_runs": [x["tpot_s"] for x in runs],
        "decode_steps": gen_tokens - 1,
        "kv_bytes": kv_bytes(peer, n, kv),
        "kv_alloc_bytes": computed_alloc,
        "kv_alloc_mib_llama": alloc_mib,
        "state_seq_bytes": state_seq_bytes,
        "generated_ids": runs[0]["generated"],
    }


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt(x, spec):
    return format(x, spec) if x is not None else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Timings: llama.cpp's llama_perf_context; see the "
                                        "module docstring and bench/peers/README.md.")
    ap.add_argument("--model", default=default_model(), help="GGUF file (default: %(default)s)")
    ap.add_argument("--context-file", help="text for the user message (default: a built-in "
                                           "text), repeated or truncated to fit")
    ap.add_argument("--question", default=QUESTION, help="question at the end of the message")
    ap.add_argument("--context-tokens", type=parse_int_list, default=[512, 4096, 8192],
                    help="total prompt lengths in tokens, comma-separated (default: 512,4096,8192)")
    ap.add_argument("--gen-tokens", type=int, default=32, help="generated tokens (default: 32)")
    ap.add_argument("--threads", type=int, default=2, help="threads (default: 2)")
    ap.add_argument("--kv-types", type=parse_kv_types, default=["f16", "q4_0"],
                    help="KV cache types, K and V alike (default: f16,q4_0)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per setting; medians "
                                                           "are reported (default: 3)")
    ap.add_argument("--n-batch", type=int, default=2048, help="llama.cpp n_batch (default 2048)")
    ap.add_argument("--n-ubatch", type=int, default=512, help="llama.cpp n_ubatch (default 512)")
    ap.add_argument("--json", metavar="OUT", help="write the results as JSON")
    ap.add_argument("--ours", metavar="FILE", action="append",
                    help="JSON from `cocktail bench decode --json` to compare with, matched by "
                         "its prompt length (repeat for several lengths)")
    ap.add_argument("--ours-vs", default="q4_0",
                    help="llama.cpp KV type compared with our 'configured' cache (default q4_0)")
    ap.add_argument("--verbose", action="store_true", help="show llama.cpp's log")
    args = ap.parse_args()
    if args.gen_tokens < 2:
        ap.error("--gen-tokens must be at least 2 (TPOT excludes the first token)")
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")

    np, llama_cpp = import_llama_cpp()
    require_model(args.model)

    ours = load_ours(args.ours) if args.ours else None

    log = LogCapture(llama_cpp, args.verbose)
    llama_cpp.llama_backend_init()
    peer = Peer(llama_cpp, np, args.model, args.threads)
    log.take()

    if args.context_file:
        with open(args.context_file, encoding="utf-8") as f:
            text = f.read()
        source = args.context_file
    else:
        text = BUILTIN_TEXT
        source = "built-in"
    body_ids = peer.tokenize(text.strip() + "\n\n", False)
    if not body_ids:
        sys.exit("the context text is empty")

    digest = file_sha256(args.model)

    system_info = llama_cpp.llama_print_system_info().decode(errors="replace").strip()
    load_start = os.getloadavg()
    out = {
        "tool": "bench/peers/llama_cpp_decode.py",
        "peer": "llama.cpp",
        "llama_cpp_python": llama_cpp.__version__,
        "system_info": system_info,
        "model_file": os.path.basename(args.model),
        "model_sha256": digest,
        "model_shape": {"n_layer": peer.n_layer, "n_head": peer.n_head,
                        "n_head_kv": peer.n_head_kv, "head_dim_k": peer.head_dim_k,
                        "head_dim_v": peer.head_dim_v, "n_vocab": peer.n_vocab},
        "threads": args.threads,
        "cpu_count": os.cpu_count(),
        "loadavg_start": list(load_start),
        "loadavg_end": None,
        "complete": False,
        "gen_tokens": args.gen_tokens,
        "repeats": args.repeats,
        "n_batch": args.n_batch,
        "n_ubatch": args.n_ubatch,
        "flash_attn": True,
        "context_source": source,
        "question": args.question,
        "timing_source": "llama_perf_context: prefill_s = t_p_eval_ms, tpot_s = t_eval_ms / "
                         "n_eval over gen_tokens - 1 single-token decodes; medians over "
                         "repeats; wall_* are Python perf_counter cross-checks",
        "kv_bytes_source": "computed: n_layer * tokens * n_head_kv * (head_dim_k + "
                           "head_dim_v) * bytes per element of the type (blocks with "
                           "scales); kv_alloc_mib_llama is llama.cpp's own log line",
        "results": [],
    }
    results = out["results"]

    def save():
        # Rewritten after every setting, so a run cut short keeps what it measured.
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(out, f, indent=2)
                f.write("\n")
            os.replace(tmp, args.json)

    print("llama.cpp (llama-cpp-python %s), %s, threads %d, flash attention on, "
          "%d generated tokens, median of %d runs"
          % (llama_cpp.__version__, os.path.basename(args.model), args.threads, args.gen_tokens,
             args.repeats))
    print("timings: llama_perf_context (prefill = t_p_eval, TPOT = t_eval / n_eval over %d "
          "decodes); KV MiB computed from shape x type for the context tokens"
          % (args.gen_tokens - 1))
    hdr = "%7s %5s %10s %10s %9s %9s %9s %10s" % ("context", "kv", "prefill_s", "prefill/s",
                                                   "tpot_ms", "decode/s", "kv_MiB", "alloc_MiB")
    print(hdr)
    print("-" * len(hdr), flush=True)
    for n in args.context_tokens:
        if n + args.gen_tokens > peer.n_ctx_train:
            print("note: %d + %d tokens exceed the model's training context (%d); llama.cpp "
                  "runs it anyway" % (n, args.gen_tokens, peer.n_ctx_train), file=sys.stderr)
        ids = build_prompt(peer, body_ids, n, args.question)
        for kv in args.kv_types:
            print("running context %d, kv %s ..." % (n, kv), file=sys.stderr, flush=True)
            r = run_one(peer, log, ids, args.gen_tokens, kv, args.repeats, args.n_batch,
                        args.n_ubatch)
            results.append(r)
            print("%7d %5s %10s %10s %9s %9s %9s %10s" % (
                r["context_tokens"], r["kv_type"], fmt(r["prefill_s"], ".3f"),
                fmt(r["prefill_tok_s"], ".1f"), fmt(r["tpot_s"] and r["tpot_s"] * 1e3, ".2f"),
                fmt(r["decode_tok_s"], ".1f"), fmt(r["kv_bytes"] / 1048576.0, ".2f"),
                fmt(r["kv_alloc_mib_llama"], ".2f")), flush=True)
            save()
    peer.free()
    load_end = os.getloadavg()
    out["loadavg_end"] = list(load_end)
    out["complete"] = True
    print("load average (1 min) at start %.2f, at end %.2f on %d CPUs; other processes skew "
          "the timings" % (load_start[0], load_end[0], os.cpu_count() or 0))

    if ours is not None:
        comparison = []
        print()
        print("ours / llama.cpp (below 1: ours is faster or smaller)")
        hdr = "%7s %-22s %12s %12s %12s" % ("context", "ours vs llama.cpp", "prefill", "tpot",
                                            "kv_bytes")
        print(hdr)
        print("-" * len(hdr))
        by_key = {(r["context_tokens"], r["kv_type"]): r for r in results}
        for n in args.context_tokens:
            mine = ours.get(n)
            if mine is None:
                print("%7d (no run of ours at this context length)" % n)
                continue
            for cache, kv in (("fp16", "f16"), ("configured", args.ours_vs)):
                peer_r = by_key.get((n, kv))
                if peer_r is None or cache not in mine:
                    continue
                c = mine[cache]
                row = {"context_tokens": n, "ours_cache": cache, "llama_cpp_kv": kv,
                       "ours_prefill_s": c["prefill_s"], "ours_tpot_s": c["tpot_s"],
                       "prefill_ratio": ratio(c["prefill_s"], peer_r["prefill_s"]),
                       "tpot_ratio": ratio(c["tpot_s"], peer_r["tpot_s"]),
                       "kv_bytes_ratio": ratio(c["kv_bytes"], peer_r["kv_bytes"])}
                comparison.append(row)
                print("%7d %-22s %12s %12s %12s" % (
                    n, "%s vs %s" % (cache, kv), fmt(row["prefill_ratio"], ".3f"),
                    fmt(row["tpot_ratio"], ".3f"), fmt(row["kv_bytes_ratio"], ".3f")))
        out["ours_files"] = args.ours
        out["comparison"] = comparison
    save()


if __name__ == "__main__":
    main()
