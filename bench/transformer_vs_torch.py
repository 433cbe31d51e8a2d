#!/usr/bin/python3
"""ragpp's transformer encoder against PyTorch, side by side in one run, one thread.

    /usr/bin/python3 bench/transformer_vs_torch.py BUILD_DIR MODEL_DIR [--rounds 3] [--n 128]

MODEL_DIR is made on the first run by bench/torch_encoder_bench.py (a random BERT of the
all-MiniLM-L6-v2 shape, 128-token SciFact passages, torch's reference vectors). Each round
runs torch (float32 and dynamic int8, OpenBLAS with OPENBLAS_CORETYPE=SkylakeX: Debian's
OpenBLAS 0.3.21 does not know this CPU and otherwise falls back to slow generic kernels)
and then BUILD_DIR/bench/bench_transformer (float32 and int8, one thread, then two), so
both see the same machine. Prints every round's JSON lines, then one summary line with the
medians and the ratios to torch float32 (texts per second of wall-clock time and per CPU
second; on a busy machine the CPU-second figures are the steadier ones).
Needs Debian's python3-torch and libopenblas0-pthread (torch uses OpenBLAS through libblas).
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
    a = ap.parse_args()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_CORETYPE="SkylakeX")
    torch_cmd = ["/usr/bin/python3", os.path.join(HERE, "torch_encoder_bench.py"), a.model_dir, "--n", str(a.n)]
    ragpp_cmd = [os.path.join(a.build_dir, "bench", "bench_transformer"), a.model_dir, "--n", str(a.n)]
    rows = {"torch": [], "ragpp1": [], "ragpp2": []}
    for r in range(a.rounds):
        t = run_json(torch_cmd, env)
        g1 = run_json(ragpp_cmd + ["--threads", "1"])
        g2 = run_json(ragpp_cmd + ["--threads", "2"])
        for k, v in (("torch", t), ("ragpp1", g1), ("ragpp2", g2)):
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
    def ratio(num_who, num_key, den_key):
        vals = [g[num_key] / t[den_key] for g, t in zip(rows[num_who], rows["torch"])]
        return round(statistics.median(vals), 3)
    summary["ratio_f32_to_torch_f32"] = ratio("ragpp1", "f32_texts_per_cpu_s", "torch_f32_texts_per_cpu_s")
    summary["ratio_int8_to_torch_f32"] = ratio("ragpp1", "int8_texts_per_cpu_s", "torch_f32_texts_per_cpu_s")
    summary["ratio_int8_to_torch_int8"] = ratio("ragpp1", "int8_texts_per_cpu_s", "torch_int8_texts_per_cpu_s")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
