#!/usr/bin/python3
"""PyTorch reference speed of a MiniLM-L6-shaped BERT encoder, one thread.

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_encoder_bench.py MODEL_DIR [--n 256] [--batch 32] [--runs 3]

On CPUs newer than OpenBLAS 0.3.21 (Debian 12) knows, its run-time detection picks the slow
'Prescott' kernels; OPENBLAS_CORETYPE=SkylakeX (AVX-512) or Haswell (AVX2) selects real ones.
The printed line says which core OpenBLAS used ("openblas_core").

1. Unless MODEL_DIR/model.safetensors exists, builds a random BERT of the all-MiniLM-L6-v2
   shape (6 layers, hidden 384, 12 heads, FFN 1536, vocab 30522, 512 positions) in the
   Hugging Face / sentence-transformers layout: config.json, model.safetensors (F32, written
   by hand), tokenizer.json (the real BERT uncased tokenizer of
   ../shared/fixtures/model2vec/test-model-sentence-transformers, see SPECIAL_IDS below),
   tokenizer_config.json, modules.json, sentence_bert_config.json (max_seq_length 128),
   1_Pooling (mean), 2_Normalize.
2. Unless MODEL_DIR/passages_128.json exists, writes it: the first N SciFact passages
   (../shared/data/scifact/corpus.jsonl, or $RAGPP_SHARED_DIR, field "text") with at least 126 WordPiece tokens,
   tokenized by the WordPiece oracle of scripts/gen_transformer_fixtures.py and cut to
   exactly 128 ids with [CLS] and [SEP] (what sentence-transformers gives at max_seq_length
   128), so every batch is full and unpadded.
3. Writes MODEL_DIR/reference_vectors.json: the float32 sentence vectors (mean pooling,
   L2-normalized) of the first 16 passages, for the C++ benchmark to check (1e-4).
4. Times torch float32 (nn.Linear / matmul: OpenBLAS sgemm) and, if it works here, torch's
   dynamic int8 quantization of the nn.Linear layers, batches of 32, median of 3 runs, and
   prints one JSON line.

The forward pass follows transformers' modeling_bert (see scripts/gen_transformer_fixtures.py,
whose functional forward it is checked against on the reference passages).
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import gen_transformer_fixtures as ref  # noqa: E402

SHARED = os.environ.get("RAGPP_SHARED_DIR",
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared"))
SCIFACT = os.path.join(SHARED, "data", "scifact", "corpus.jsonl")
SEQ = 128
# The shared tokenizer.json renumbers the vocab without BERT's [unused] pieces ([CLS] is 2,
# [SEP] 3), but its TemplateProcessing "special_tokens" still say 101 / 102 (the ids of the
# original vocab). The copy written here puts the ids of its own vocab there.
SPECIAL_IDS = {"[CLS]": 2, "[SEP]": 3}


class Layer(nn.Module):
    def __init__(self, H, nh, I, eps):
        super().__init__()
        self.nh, self.dh = nh, H // nh
        self.query, self.key, self.value = nn.Linear(H, H), nn.Linear(H, H), nn.Linear(H, H)
        self.attn_out = nn.Linear(H, H)
        self.attn_ln = nn.LayerNorm(H, eps=eps)
        self.inter = nn.Linear(H, I)
        self.out = nn.Linear(I, H)
        self.out_ln = nn.LayerNorm(H, eps=eps)

    def forward(self, x, ext):
        B, S, H = x.shape

        def heads(t):
            return t.view(B, S, self.nh, self.dh).transpose(1, 2)

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + ext
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(B, S, H)
        a = self.attn_ln(self.attn_out(ctx) + x)
        return self.out_ln(self.out(F.gelu(self.inter(a))) + a)


class Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        H = cfg.hidden
        self.word = nn.Embedding(cfg.vocab_size, H)
        self.pos = nn.Embedding(cfg.max_pos, H)
        self.tok_type = nn.Embedding(cfg.type_vocab, H)
        self.ln = nn.LayerNorm(H, eps=cfg.eps)
        self.layers = nn.ModuleList(Layer(H, cfg.heads, cfg.intermediate, cfg.eps) for _ in range(cfg.layers))

    def load(self, w):
        """w: name -> float32 tensor, names of modeling_bert without prefix."""
        with torch.no_grad():
            self.word.weight.copy_(w["embeddings.word_embeddings.weight"])
            self.pos.weight.copy_(w["embeddings.position_embeddings.weight"])
            self.tok_type.weight.copy_(w["embeddings.token_type_embeddings.weight"])
            self.ln.weight.copy_(w["embeddings.LayerNorm.weight"])
            self.ln.bias.copy_(w["embeddings.LayerNorm.bias"])
            for i, L in enumerate(self.layers):
                p = "encoder.layer.%d." % i
                for mod, n in ((L.query, "attention.self.query"), (L.key, "attention.self.key"),
                               (L.value, "attention.self.value"), (L.attn_out, "attention.output.dense"),
                               (L.attn_ln, "attention.output.LayerNorm"), (L.inter, "intermediate.dense"),
                               (L.out, "output.dense"), (L.out_ln, "output.LayerNorm")):
                    mod.weight.copy_(w[p + n + ".weight"])
                    mod.bias.copy_(w[p + n + ".bias"])

    def forward(self, ids, mask):
        B, S = ids.shape
        pos = torch.arange(S).unsqueeze(0).expand(B, S)
        x = self.ln(self.word(ids) + self.pos(pos) + self.tok_type(torch.zeros_like(ids)))
        ext = (1.0 - mask.to(torch.float32))[:, None, None, :] * torch.finfo(torch.float32).min
        for L in self.layers:
            x = L(x, ext)
        m = mask.to(x.dtype).unsqueeze(-1)  # mean pooling + Normalize (sentence-transformers)
        v = (x * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
        return F.normalize(v, p=2, dim=1)


def minilm_config():
    return ref.Config("bert", 30522, hidden=384, layers=6, heads=12, intermediate=1536, max_pos=512)


def build_model(d, seed=20240601):
    cfg = minilm_config()
    os.makedirs(d, exist_ok=True)
    w = ref.make_weights(cfg, seed, std=0.05)
    ref.write_safetensors(os.path.join(d, "model.safetensors"), [(k, v, "F32") for k, v in w.items()])
    ref.write_json(os.path.join(d, "config.json"), cfg.to_json("BertModel", "float32"), indent=2)
    tok = json.load(open(ref.REAL_BERT_TOKENIZER, encoding="utf-8"))
    for name, i in SPECIAL_IDS.items():
        assert tok["model"]["vocab"][name] == i
        tok["post_processor"]["special_tokens"][name]["ids"] = [i]
    ref.write_json(os.path.join(d, "tokenizer.json"), tok)
    ref.write_json(os.path.join(d, "tokenizer_config.json"), ref.bert_tokenizer_config(512), indent=2)
    ref.st_files(d, cfg.hidden, "mean", True, SEQ)
    if os.path.exists(os.path.join(d, "2_Normalize", ".gitkeep")):
        os.remove(os.path.join(d, "2_Normalize", ".gitkeep"))


def build_passages(path, n):
    vocab = json.load(open(ref.REAL_BERT_TOKENIZER, encoding="utf-8"))["model"]["vocab"]
    wp = ref.WordPiece(vocab)
    doc_ids, texts, seqs = [], [], []
    with open(SCIFACT, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            ids = wp.ids(doc["text"])
            if len(ids) < SEQ - 2:
                continue
            doc_ids.append(doc["_id"])
            texts.append(doc["text"])
            seqs.append([vocab["[CLS]"]] + ids[:SEQ - 2] + [vocab["[SEP]"]])
            if len(seqs) == n:
                break
    assert len(seqs) == n, "only %d SciFact passages of %d+ tokens" % (len(seqs), SEQ - 2)
    ref.write_json(path, {"corpus": "scifact/corpus.jsonl (field text)", "max_seq_length": SEQ,
                          "tokenizer": "tokenizer.json of this folder",
                          "doc_ids": doc_ids, "texts": texts, "ids": seqs})


def time_model(model, ids, batch, runs):
    mask = torch.ones_like(ids)
    wall, cpu = [], []
    with torch.inference_mode():
        model(ids[:batch], mask[:batch])  # warm-up
        for _ in range(runs):
            t0, c0 = time.perf_counter(), time.process_time()
            for s in range(0, ids.shape[0], batch):
                model(ids[s:s + batch], mask[s:s + batch])
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    # texts/s on the wall clock and on the process's CPU time (the latter is steadier on a
    # shared machine, where other jobs take turns on the core)
    return ids.shape[0] / statistics.median(wall), ids.shape[0] / statistics.median(cpu)


def openblas_core():
    """OpenBLAS's kernel choice: 0.3.21 does not know recent Xeons and falls back to its
    'Prescott' SSE3 kernels unless OPENBLAS_CORETYPE names one (SkylakeX, Cooperlake)."""
    try:
        import ctypes
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except OSError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--n", type=int, default=256, help="passages timed (default 256)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rebuild", action="store_true", help="rewrite the model and passages")
    args = ap.parse_args()
    torch.set_num_threads(1)
    d = os.path.abspath(args.model_dir)
    if args.rebuild and os.path.isdir(d):
        shutil.rmtree(d)
    if not os.path.exists(os.path.join(d, "model.safetensors")):
        build_model(d)
    ppath = os.path.join(d, "passages_128.json")
    if os.path.exists(ppath) and len(json.load(open(ppath))["ids"]) < args.n:
        os.remove(ppath)
    if not os.path.exists(ppath):
        build_passages(ppath, args.n)
    seqs = json.load(open(ppath))["ids"][:args.n]
    ids = torch.tensor(seqs, dtype=torch.int64)

    cfg = minilm_config()
    w = ref.read_safetensors(os.path.join(d, "model.safetensors"))
    model = Encoder(cfg).eval()
    model.load(w)

    # Reference vectors of the first 16 passages; checked against the functional forward
    # of the fixture generator (independent code path: F.linear on the weight dict).
    with torch.inference_mode():
        first = ids[:16]
        mask = torch.ones_like(first)
        vec = model(first, mask)
        check = ref.embed(cfg, w, seqs[:16], "mean", True)
    diff = (vec - check).abs().max().item()
    assert diff < 1e-5, "module vs functional forward differ by %g" % diff
    ref.write_json(os.path.join(d, "reference_vectors.json"),
                   {"passages": "passages_128.json, first 16", "pooling": "mean", "normalize": True,
                    "dtype": "float32", "vectors": ref.fl(vec)})

    H, I, L, S = cfg.hidden, cfg.intermediate, cfg.layers, SEQ
    gflop = 2.0 * L * (S * (4 * H * H + 2 * H * I) + 2 * S * S * H) / 1e9
    result = {"torch": torch.__version__, "threads": torch.get_num_threads(),
              "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
              "n": ids.shape[0], "batch": args.batch, "seq": S, "runs": args.runs,
              "gflop_per_text": round(gflop, 4)}
    result["openblas_core"] = openblas_core()
    result["openblas_coretype_env"] = os.environ.get("OPENBLAS_CORETYPE")
    f32, f32_cpu = time_model(model, ids, args.batch, args.runs)
    result["torch_f32_texts_per_s"] = round(f32, 2)
    result["torch_f32_gflop_per_s"] = round(f32 * gflop, 1)
    result["torch_f32_texts_per_cpu_s"] = round(f32_cpu, 2)

    int8, cos, engine, err = None, None, None, None
    for eng in ("x86", "fbgemm", "onednn", "qnnpack"):
        if eng not in torch.backends.quantized.supported_engines:
            continue
        try:
            torch.backends.quantized.engine = eng
            qmodel = torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
            with torch.inference_mode():
                qv = qmodel(first, torch.ones_like(first))
            cos = float((qv * vec).sum(1).min())
            int8, int8_cpu = time_model(qmodel, ids, args.batch, args.runs)
            engine = eng
            break
        except Exception as e:  # an engine this build cannot run
            err = "%s: %s" % (eng, str(e).splitlines()[0] if str(e) else type(e).__name__)
    result["torch_int8_texts_per_s"] = round(int8, 2) if int8 else None
    if int8:
        result["torch_int8_texts_per_cpu_s"] = round(int8_cpu, 2)
        result["torch_int8_engine"] = engine
        result["torch_int8_min_cosine_to_f32"] = round(cos, 5)
    elif err:
        result["torch_int8_error"] = err
    print(json.dumps(result))


if __name__ == "__main__":
    main()
