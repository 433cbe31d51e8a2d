#!/usr/bin/python3
"""ragpp's transformer encoder against PyTorch and ONNX Runtime, side by side in one run.

    /usr/bin/python3 bench/transformer_vs_torch.py BUILD_DIR MODEL_DIR [--rounds 3] [--n 128]
                     [--ort NODE_MODULES/onnxruntime-node]

MODEL_DIR is made on the first run by bench/torch_encoder_bench.py (a random BERT of the
all-MiniLM-L6-v2 shape, 128-token SciFact passages, torch's reference vectors). Each round
runs torch (float32 and dynamic int8, OpenBLAS with OPENBLAS_CORETYPE=SkylakeX: Debian's
OpenBLAS 0.3.21 does not know this CPU and otherwise falls back to slow generic kernels)
and then BUILD_DIR/bench/bench_transformer (float32 and int8, one thread, then two; then
float32 at one thread again under RAGPP_SIMD=avx512, the FMA kernels, where the default
path runs float32 on the AMX-BF16 tiles), so all see the same machine. With --ort (the
onnxruntime-node package, from `npm install --ignore-scripts onnxruntime-node`: its CPU
library is inside the package), each round also
runs ONNX Runtime on the same model exported from torch (bench/onnx_export.py writes
MODEL_DIR/model.onnx on the first run) and the same token ids, compute only
(bench/ort_encoder_bench.cjs, with Node), on one intra-op thread and on its default (one per
core). Prints every round's JSON lines, then one summary line with the medians and the
per-round ratios to torch float32 and to ONNX Runtime float32 (texts per second of CPU time
at one thread; of wall-clock time at two threads against ONNX Runtime's default; on a busy
machine the CPU-second figures are the steadier ones), then bench_nn --quick's lines: each
kernel's share of the core's measured peak (FMA for float32, vpdpbusd for int8).
Needs Debian's python3-torch and libopenblas0-pthread (torch uses OpenBLAS through libblas),
and nodejs for --ort.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_json(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir")
    ap.add_argument("model_dir")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=128, help="passages per timing")
    ap.add_argument("--ort", help="the onnxruntime-node package folder (adds ONNX Runtime)")
    a = ap.parse_args()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_CORETYPE="SkylakeX")
    torch_cmd = ["/usr/bin/python3", os.path.join(HERE, "torch_encoder_bench.py"), a.model_dir, "--n", str(a.n)]
    ragpp_cmd = [os.path.join(a.build_dir, "bench", "bench_transformer"), a.model_dir, "--n", str(a.n)]
    rows = {"torch": [], "ragpp1": [], "ragpp2": [], "ragpp1_fma": [], "ort1": [], "ort_all": []}
    fma_env = dict(os.environ, RAGPP_SIMD="avx512")
    ort_cmd = None
    if a.ort:
        if not os.path.exists(os.path.join(a.model_dir, "model.onnx")):
            run_json(torch_cmd + ["--runs", "1"], env)  # makes MODEL_DIR on a first run
            print(json.dumps(run_json(["/usr/bin/python3", os.path.join(HERE, "onnx_export.py"), a.model_dir])),
                  flush=True)
        ort_cmd = ["node", os.path.join(HERE, "ort_encoder_bench.cjs"), a.ort, a.model_dir, "--n", str(a.n)]
    for r in range(a.rounds):
        t = run_json(torch_cmd, env)
        g1 = run_json(ragpp_cmd + ["--threads", "1"])
        g2 = run_json(ragpp_cmd + ["--threads", "2"])
        got = [("torch", t), ("ragpp1", g1), ("ragpp2", g2)]
        if "amx" in g1.get("float32_products", ""):  # the FMA kernels beside the tiles
            got.append(("ragpp1_fma", run_json(ragpp_cmd + ["--threads", "1"], fma_env)))
        if ort_cmd:
            got += [("ort1", run_json(ort_cmd + ["--threads", "1"])), ("ort_all", run_json(ort_cmd + ["--threads", "0"]))]
        for k, v in got:
            rows[k].append(v)
            print(json.dumps({"round": r + 1, "who": k, **v}), flush=True)

    def med(who, key):
        vals = [row[key] for row in rows[who] if row.get(key) is not None]
        return statistics.median(vals) if vals else None

    keys_t = [k for k in rows["torch"][0] if k.startswith("torch_") and isinstance(rows["torch"][0][k], (int, float))]
    keys_g = [k for k in rows["ragpp1"][0] if isinstance(rows["ragpp1"][0][k], (int, float))]
    summary = {"rounds": a.rounds}
    summary.update({k: med("torch", k) for k in keys_t})
    summary.update({"ragpp_1thread_" + k: med("ragpp1", k) for k in keys_g})
    summary.update({"ragpp_2threads_" + k: med("ragpp2", k) for k in keys_g})
    # Ratios per round (both sides measured back to back), then their median.
    def ratio(num_who, num_key, den_key, den_who="torch"):
        vals = [g[num_key] / t[den_key] for g, t in zip(rows[num_who], rows[den_who])]
        return round(statistics.median(vals), 3)
    summary["ratio_f32_to_torch_f32"] = ratio("ragpp1", "f32_texts_per_cpu_s", "torch_f32_texts_per_cpu_s")
    summary["ragpp_float32_products"] = rows["ragpp1"][0].get("float32_products")
    if rows["ragpp1_fma"]:
        summary["ragpp_1thread_fma_f32_texts_per_cpu_s"] = med("ragpp1_fma", "f32_texts_per_cpu_s")
        summary["ragpp_1thread_fma_f32_max_abs_diff_to_torch"] = max(
            r["f32_max_abs_diff_to_torch"] for r in rows["ragpp1_fma"])
    summary["ratio_int8_to_torch_f32"] = ratio("ragpp1", "int8_texts_per_cpu_s", "torch_f32_texts_per_cpu_s")
    summary["ratio_int8_to_torch_int8"] = ratio("ragpp1", "int8_texts_per_cpu_s", "torch_int8_texts_per_cpu_s")
    if ort_cmd:
        summary["onnxruntime"] = rows["ort1"][0]["onnxruntime"]
        summary["ort_max_abs_diff_to_torch"] = max(r["ort_max_abs_diff_to_torch"] for r in rows["ort1"])
        for who in ("ort1", "ort_all"):
            for k in ("ort_f32_texts_per_s", "ort_f32_texts_per_cpu_s"):
                summary[who + "_" + k[4:]] = med(who, k)
        summary["ratio_f32_to_ort_f32"] = ratio("ragpp1", "f32_texts_per_cpu_s", "ort_f32_texts_per_cpu_s", "ort1")
        if rows["ragpp1_fma"]:
            summary["ratio_f32_fma_to_ort_f32"] = ratio("ragpp1_fma", "f32_texts_per_cpu_s", "ort_f32_texts_per_cpu_s",
                                                        "ort1")
        summary["ratio_int8_to_ort_f32"] = ratio("ragpp1", "int8_texts_per_cpu_s", "ort_f32_texts_per_cpu_s", "ort1")
        summary["ratio_f32_2threads_to_ort_all_wall"] = ratio("ragpp2", "f32_texts_per_s", "ort_f32_texts_per_s", "ort_all")
        summary["ratio_int8_2threads_to_ort_all_wall"] = ratio("ragpp2", "int8_texts_per_s", "ort_f32_texts_per_s", "ort_all")
    # Where one thread's time goes: each stage's median CPU ms per text.
    for kind in ("f32", "int8"):
        key = kind + "_stage_ms_per_text"
        if rows["ragpp1"] and key in rows["ragpp1"][0]:
            summary["ragpp_1thread_" + key] = {
                st: statistics.median(row[key][st] for row in rows["ragpp1"]) for st in rows["ragpp1"][0][key]}
    print(json.dumps(summary), flush=True)
    # Each kernel's share of the core's peak (bench_nn's fraction_of_peak).
    nn = subprocess.run([os.path.join(a.build_dir, "bench", "bench_nn"), "--quick"], check=True, capture_output=True,
                        text=True).stdout
    for line in nn.splitlines():
        if '"kernel":"fma_peak"' in line or '"kernel":"linear_' in line or '"kernel":"attention"' in line:
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
