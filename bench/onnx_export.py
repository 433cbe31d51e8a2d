#!/usr/bin/python3
"""Exports the random MiniLM-L6-shaped encoder of bench/torch_encoder_bench.py to ONNX.

    /usr/bin/python3 bench/onnx_export.py MODEL_DIR [--opset 14]

MODEL_DIR is the folder torch_encoder_bench.py writes (config.json, model.safetensors,
passages_128.json, reference_vectors.json). Writes MODEL_DIR/model.onnx: the same torch
module (embeddings, 6 layers, mean pooling, L2 normalisation), inputs "input_ids" and
"attention_mask" (int64, batch x sequence, both axes dynamic), output "sentence_embedding"
(float32, batch x 384), traced by torch.onnx.export (Debian's python3-torch). Checks the
module's vectors of the first 16 passages against reference_vectors.json before export;
bench/ort_encoder_bench.cjs checks ONNX Runtime's against them too.
"""
import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_encoder_bench as teb  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--opset", type=int, default=14)
    a = ap.parse_args()
    d = os.path.abspath(a.model_dir)
    cfg = teb.minilm_config()
    model = teb.Encoder(cfg).eval()
    model.load(teb.ref.read_safetensors(os.path.join(d, "model.safetensors")))
    seqs = json.load(open(os.path.join(d, "passages_128.json")))["ids"][:16]
    ids = torch.tensor(seqs, dtype=torch.int64)
    mask = torch.ones_like(ids)
    want = torch.tensor(json.load(open(os.path.join(d, "reference_vectors.json")))["vectors"])
    with torch.inference_mode():
        diff = (model(ids, mask) - want).abs().max().item()
    assert diff < 1e-5, "the module differs from reference_vectors.json by %g" % diff
    out = os.path.join(d, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(model, (ids[:2], mask[:2]), out, opset_version=a.opset,
                          input_names=["input_ids", "attention_mask"], output_names=["sentence_embedding"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                                        "attention_mask": {0: "batch", 1: "sequence"},
                                        "sentence_embedding": {0: "batch"}})
    print(json.dumps({"onnx": out, "bytes": os.path.getsize(out), "opset": a.opset, "torch": torch.__version__,
                      "module_max_abs_diff_to_reference": diff}))


if __name__ == "__main__":
    main()
