#!/usr/bin/env python3
"""llama.cpp's own benchmark, llama-bench, on SmolLM2-135M: time per output token (TPOT) at a
given context depth, with llama.cpp built for a chosen SIMD level.

llama-bench is built from the llama.cpp source that the llama-cpp-python sdist carries under
vendor/llama.cpp (the sdist is fetched with pip once, and the build is cached per SIMD level
under ~/.cache/cocktail/peers). `--simd native` builds with GGML_NATIVE; `--simd AVX2` builds for
an AVX2-only CPU (AVX, AVX2, FMA, F16C, BMI2; no AVX-512, no AVX-VNNI), so that llama.cpp runs
the same instruction set as `cocktail bench decode --simd AVX2` on the same machine.

For every depth D, llama-bench fills the KV cache with D prompt tokens (untimed), then times
--gen-tokens single-token decodes, --repeats times. Its best settings are searched: flash
attention off and on with the f16 cache, and q8_0 / q4_0 caches (flash attention on, which
llama.cpp needs for a quantized V cache) when --kv-types names them. `best` holds the fastest
setting a depth.

    bench/peers/llama_bench.py --simd AVX2 --depths 556,4140,8044 --json peer.json \\
        --ours D-512.json --ours D-4096.json --ours D-8000.json

--ours reads JSON of `cocktail bench decode --json`, each file matched to the depth equal to its
prompt length, and adds our TPOT over llama.cpp's best to the output.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from peer_tools import default_model, file_sha256, load_ours, parse_int_list, require_model  # noqa: E402

VERSION = "0.3.36"  # llama-cpp-python, as bench/peers/README.md installs it
CACHE = pathlib.Path(os.environ.get("COCKTAIL_PEER_DIR",
                                    os.path.expanduser("~/.cache/cocktail/peers")))
# Virtual machines can report AMX without enabling its tile state (README.md): keep it out.
NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
SIMD_FLAGS = {
    "native": ["-DGGML_NATIVE=ON"],
    "AVX2": ["-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON",
             "-DGGML_F16C=ON", "-DGGML_BMI2=ON", "-DGGML_AVX512=OFF", "-DGGML_AVX_VNNI=OFF"],
}


def run(cmd, log, what):
    """Runs cmd with its output in `log`; exits naming `what` and the log when it fails."""
    with open(log, "w", encoding="utf-8") as out:
        if subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT) != 0:
            sys.exit(f"{what} failed; see {log}")


def source_tree():
    """vendor/llama.cpp of the llama-cpp-python sdist, fetched and unpacked once."""
    root = CACHE / f"llama_cpp_python-{VERSION}"
    tree = root / "vendor" / "llama.cpp"
    if tree.is_dir():
        return tree
    CACHE.mkdir(parents=True, exist_ok=True)
    sdist = CACHE / f"llama_cpp_python-{VERSION}.tar.gz"
    if not sdist.is_file():
        print(f"fetching the llama-cpp-python {VERSION} sdist", file=sys.stderr)
        run([sys.executable, "-m", "pip", "download", f"llama-cpp-python=={VERSION}",
             "--no-binary", ":all:", "--no-deps", "-d", str(CACHE)], CACHE / "pip-download.log",
            "pip download of the llama-cpp-python sdist")
    with tarfile.open(sdist) as tar:
        # The "data" filter (no absolute paths, links out of the tree) where this Python has it.
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(CACHE, **safe)
    if not tree.is_dir():
        sys.exit(f"{sdist}: has no vendor/llama.cpp")
    return tree


def llama_bench(simd):
    """The llama-bench binary for `simd`, configured and built once (minutes on 2 cores)."""
    tree = source_tree()
    build = tree / f"build-{simd}"
    binary = build / "bin" / "llama-bench"
    if binary.is_file():
        return binary
    print(f"building llama-bench for {simd} in {build}", file=sys.stderr)
    run(["cmake", "-S", str(tree), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_C_FLAGS={NO_AMX}", f"-DCMAKE_CXX_FLAGS={NO_AMX}", "-DLLAMA_CURL=OFF",
         "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_SERVER=OFF"]
        + SIMD_FLAGS[simd], build.parent / f"cmake-{simd}.log", "configuring llama.cpp")
    run(["cmake", "--build", str(build), "--target", "llama-bench", "-j", str(os.cpu_count())],
        build.parent / f"build-{simd}.log", "building llama-bench")
    return binary


def settings(kv_types):
    """(flash attention, KV type) pairs to try: f16 both ways, quantized caches with it on."""
    out = []
    for kv in kv_types:
        out += [(0, kv), (1, kv)] if kv == "f16" else [(1, kv)]
    return out


def measure(binary, model, depths, gen_tokens, threads, repeats, fa, kv):
    cmd = [str(binary), "-m", model, "-t", str(threads), "-p", "0", "-n", str(gen_tokens),
           "-d", ",".join(map(str, depths)), "-fa", str(fa), "-ctk", kv, "-ctv", kv,
           "-r", str(repeats), "-o", "json"]
    print(" ".join(cmd), file=sys.stderr, flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"llama-bench failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--simd", choices=sorted(SIMD_FLAGS), default="native",
                    help="SIMD level llama.cpp is built for (default: native)")
    ap.add_argument("--model", default=default_model(), help="GGUF file (default: %(default)s)")
    ap.add_argument("--depths", type=parse_int_list, default=[556, 4140, 8044],
                    help="context depths in tokens, comma-separated (default: 556,4140,8044, the "
                         "prompts of `cocktail bench decode` at 512, 4096 and 8000 tokens)")
    ap.add_argument("--gen-tokens", type=int, default=32, help="timed decodes (default: 32)")
    ap.add_argument("--threads", type=int, default=2, help="threads (default: 2)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs a setting (default: 3)")
    ap.add_argument("--kv-types", default="f16", help="KV cache types to try, comma-separated, "
                                                      "from f16,q8_0,q4_0 (default: f16)")
    ap.add_argument("--json", metavar="OUT", help="write the results as JSON")
    ap.add_argument("--ours", metavar="FILE", action="append", default=[],
                    help="JSON of `cocktail bench decode --json` to compare with (repeatable)")
    args = ap.parse_args()
    kv_types = args.kv_types.split(",")
    if unknown := [kv for kv in kv_types if kv not in ("f16", "q8_0", "q4_0")]:
        ap.error(f"--kv-types: unknown {', '.join(unknown)} (known: f16, q8_0, q4_0)")
    require_model(args.model)
    ours = load_ours(args.ours)
    binary = llama_bench(args.simd)

    results = []
    info = {}
    for fa, kv in settings(kv_types):
        for r in measure(binary, args.model, args.depths, args.gen_tokens, args.threads,
                         args.repeats, fa, kv):
            info = {k: r.get(k) for k in ("build_commit", "cpu_info", "n_threads")}
            tpot_runs = [ns / 1e9 / args.gen_tokens for ns in r["samples_ns"]]
            results.append({"context_tokens": r["n_depth"], "flash_attn": bool(fa), "kv_type": kv,
                            "tpot_s": statistics.median(tpot_runs), "tpot_s_runs": tpot_runs})
    best = [min((r for r in results if r["context_tokens"] == d), key=lambda r: r["tpot_s"])
            for d in args.depths]
    out = {"tool": "bench/peers/llama_bench.py", "peer": "llama-bench",
           "llama_cpp_python": VERSION, "simd": args.simd, "cmake_flags": SIMD_FLAGS[args.simd],
           **info, "model_file": os.path.basename(args.model),
           "model_sha256": file_sha256(args.model), "threads": args.threads,
           "gen_tokens": args.gen_tokens, "repeats": args.repeats,
           "timing_source": "llama-bench samples_ns over gen_tokens decodes at each depth; "
                            "medians over repeats",
           "results": results, "best": best}
    print(f"{'depth':>7} {'best setting':>16} {'TPOT ms':>8} {'ours ms':>8} {'ours / best':>11}")
    comparison = []
    for b in best:
        mine = ours.get(b["context_tokens"], {}).get("configured")
        setting = f"{b['kv_type']}, fa {'on' if b['flash_attn'] else 'off'}"
        if mine:
            comparison.append({"context_tokens": b["context_tokens"],
                               "ours_tpot_s": mine["tpot_s"],
                               "tpot_ratio": mine["tpot_s"] / b["tpot_s"]})
        print(f"{b['context_tokens']:>7} {setting:>16} {b['tpot_s'] * 1e3:>8.2f} "
              + (f"{mine['tpot_s'] * 1e3:>8.2f} {mine['tpot_s'] / b['tpot_s']:>11.3f}"
                 if mine else f"{'-':>8} {'-':>11}"))
    if args.ours:
        out["ours_files"] = args.ours
        out["comparison"] = comparison
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
