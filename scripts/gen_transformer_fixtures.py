#!/usr/bin/python3
"""Generates tests/fixtures/transformer/: tiny random BERT / XLM-RoBERTa models in the
Hugging Face / sentence-transformers folder layout, with the vectors and logits a
PyTorch forward pass gives on them, and two tokenization oracles on real vocabularies.

Run with Debian's interpreter (python3-torch 1.13, python3-numpy, python3-sentencepiece):
    /usr/bin/python3 scripts/gen_transformer_fixtures.py [OUTPUT_DIR]
The default output is tests/fixtures/transformer/ next to this script. Deterministic (seeded).

Everything here is written from the published rules, not copied:
- Forward pass: the equations of transformers' models/bert/modeling_bert.py
  (BertEmbeddings, BertSelfAttention with the additive mask (1 - mask) * finfo(float32).min,
  BertSelfOutput, BertIntermediate with exact erf GELU, BertOutput, BertPooler,
  BertForSequenceClassification) and models/xlm_roberta/modeling_xlm_roberta.py
  (create_position_ids_from_input_ids: padding_idx + cumsum(mask) * mask;
  XLMRobertaClassificationHead: dense, tanh, out_proj on the <s> token).
- Pooling / Normalize: sentence-transformers' models/Pooling.py and Normalize.py.
- WordPiece oracle: huggingface/tokenizers normalizers/bert.rs (BertNormalizer: clean_text
  drops NUL, U+FFFD and categories C* except \\t\\n\\r, maps White_Space to ' '; spaces around
  CJK ideographs; strip_accents (= lowercase when null): NFD then drop Mn; per-character
  lowercase), pre_tokenizers/bert.rs (split on White_Space, isolate ASCII punctuation and
  Unicode P*), models/wordpiece (greedy longest match first with the '##' prefix, a word of
  more than max_input_chars_per_word characters or with an unmatched rest is one [UNK]).
- Truncation: tokenizers utils/truncation.rs (longest_first for pairs) with the max length
  reduced by the number of special tokens the post-processor adds (tokenizer/mod.rs
  post_process): single text: content cut to max - 2 (BERT and XLM-R); pair: each sequence
  first cut to max on its own (what the tokenizers 0.23.2 binary does, checked on a grid),
  then LongestFirst with the content budget max - 3 (BERT) or max - 4 (XLM-R) (truncate_pair).
- Added tokens: the five specials are found in the raw text first (tokenizers' AddedVocabulary,
  normalized false), so a literal "[CLS]" in a text is id [CLS].
- XLM-R tokenizer.json: transformers' convert_slow_tokenizer.py XLMRobertaConverter
  (vocab <s>,<pad>,</s>,<unk> + spm pieces 3.. + <mask>; unk_id 3; Precompiled charsmap of the
  model's normalizer_spec; Metaspace; "<s> $A </s>" / "<s> $A </s> </s> $B </s>").
Token ids of the model fixtures come from these Python oracles (WordPiece here, the
sentencepiece library for Unigram), never from the C++ code under test.
"""
import base64
import json
import math
import os
import shutil
import struct
import sys
import unicodedata

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F

# The shared data folder sits beside the clone (../shared), as for the tests; RAGPP_SHARED_DIR
# overrides it.
SHARED = os.path.join(os.environ.get("RAGPP_SHARED_DIR",
                                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared")),
                      "fixtures")
REAL_BERT_TOKENIZER_REL = "model2vec/test-model-sentence-transformers/tokenizer.json"
REAL_BERT_TOKENIZER = os.path.join(SHARED, REAL_BERT_TOKENIZER_REL)
SPM_MODEL_REL = "sentencepiece/nl-fr-dekamer-unigram.model"
SPM_MODEL = os.path.join(SHARED, SPM_MODEL_REL)


# ----------------------------------------------------------------------------------------
# WordPiece oracle (BertNormalizer + BertPreTokenizer + WordPiece, as in huggingface/tokenizers)
# ----------------------------------------------------------------------------------------

# Rust's char::is_whitespace: the Unicode White_Space property.
WHITE_SPACE = set([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680]
                  + list(range(0x2000, 0x200B)) + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000])


def _is_whitespace(c):
    return ord(c) in WHITE_SPACE


def _is_control(c):
    # bert.rs is_control: \t \n \r are not; otherwise Cc, Cf, Cn, Co, Cs (unicode "other").
    if c in "\t\n\r":
        return False
    return unicodedata.category(c).startswith("C")


def _is_chinese_char(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B920 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def _is_bert_punc(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True  # char::is_ascii_punctuation
    return unicodedata.category(c).startswith("P")


class WordPiece:
    def __init__(self, vocab, unk="[UNK]", prefix="##", max_chars=100, lowercase=True,
                 specials=("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")):
        self.vocab = vocab  # piece -> id
        # added_tokens with normalized false: tokenizers' AddedVocabulary finds them in the raw
        # text (case-sensitive, leftmost, longest) before normalization; the text between them
        # goes through the pipeline on its own.
        self.specials = sorted(specials, key=len, reverse=True)
        self.unk = unk
        self.prefix = prefix
        self.max_chars = max_chars
        self.lowercase = lowercase

    def normalize(self, text):
        # clean_text: filter first, then map whitespace to ' '
        out = []
        for c in text:
            cp = ord(c)
            if cp == 0 or cp == 0xFFFD or _is_control(c):
                continue
            out.append(" " if _is_whitespace(c) else c)
        text = "".join(out)
        # handle_chinese_chars
        text = "".join((" " + c + " ") if _is_chinese_char(ord(c)) else c for c in text)
        if self.lowercase:  # strip_accents null follows lowercase
            text = unicodedata.normalize("NFD", text)
            text = "".join(c for c in text if unicodedata.category(c) != "Mn")
            # NormalizedString::lowercase: char by char (no final-sigma context)
            text = "".join(c.lower() for c in text)
        return text

    @staticmethod
    def pre_tokenize(text):
        words, cur = [], []
        for c in text:
            if _is_whitespace(c):
                if cur:
                    words.append("".join(cur))
                    cur = []
            elif _is_bert_punc(c):
                if cur:
                    words.append("".join(cur))
                    cur = []
                words.append(c)
            else:
                cur.append(c)
        if cur:
            words.append("".join(cur))
        return words

    def word_pieces(self, word):
        if len(word) > self.max_chars:
            return [self.unk]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                sub = word[start:end]
                if start > 0:
                    sub = self.prefix + sub
                if sub in self.vocab:
                    found = sub
                    break
                end -= 1
            if found is None:
                return [self.unk]
            pieces.append(found)
            start = end
        return pieces

    def split_specials(self, text):
        parts, start, i = [], 0, 0
        while i < len(text):
            hit = next((s for s in self.specials if text.startswith(s, i)), None)
            if hit is None:
                i += 1
                continue
            if start < i:
                parts.append((text[start:i], False))
            parts.append((hit, True))
            i += len(hit)
            start = i
        if start < len(text):
            parts.append((text[start:], False))
        return parts

    def pieces(self, text):
        out = []
        for part, special in self.split_specials(text):
            if special:
                out.append(part)
                continue
            for w in self.pre_tokenize(self.normalize(part)):
                out.extend(self.word_pieces(w))
        return out

    def ids(self, text):
        return [self.vocab[p] for p in self.pieces(text)]


# ----------------------------------------------------------------------------------------
# Truncation (tokenizers utils/truncation.rs, LongestFirst, direction right, stride 0)
# ----------------------------------------------------------------------------------------

def truncate_single(ids, max_len):
    return ids[:max_len]


def truncate_pair(a, b, max_len, each_max=None):
    """a, b: content ids; max_len: budget after removing the special tokens.

    each_max: the tokenizer's full max_length. The tokenizers binary (0.23.2, node binding,
    checked on a grid of 23,276 (max_length, len_a, len_b) cases) first cuts each sequence to
    max_length on its own, then applies truncation.rs's LongestFirst with the budget; the
    first cut changes which side gets the odd token when both are longer than max_length."""
    if each_max is not None:
        a, b = a[:each_max], b[:each_max]
    if len(a) + len(b) <= max_len:
        return a, b
    n1, n2 = len(a), len(b)
    swap = n1 > n2
    if swap:
        n1, n2 = n2, n1
    if n1 > max_len:
        n2 = n1
    else:
        n2 = max(n1, max_len - n1)
    if n1 + n2 > max_len:
        n1 = max_len // 2
        n2 = n1 + max_len % 2
    if swap:
        n1, n2 = n2, n1
    return a[:n1], b[:n2]


class BertSpecials:
    cls, sep, pad = "[CLS]", "[SEP]", "[PAD]"


def bert_single(wp, text, max_len):
    content = truncate_single(wp.ids(text), max_len - 2)
    return [wp.vocab["[CLS]"]] + content + [wp.vocab["[SEP]"]]


def bert_pair(wp, a, b, max_len):
    ia, ib = truncate_pair(wp.ids(a), wp.ids(b), max_len - 3, max_len)
    cls, sep = wp.vocab["[CLS]"], wp.vocab["[SEP]"]
    ids = [cls] + ia + [sep] + ib + [sep]
    types = [0] * (len(ia) + 2) + [1] * (len(ib) + 1)
    return ids, types


# ----------------------------------------------------------------------------------------
# SentencePiece Unigram oracle in XLM-R numbering
# ----------------------------------------------------------------------------------------

class XlmrSpm:
    BOS, PAD, EOS, UNK = 0, 1, 2, 3

    def __init__(self, path):
        self.sp = spm.SentencePieceProcessor(model_file=path)
        self.n = self.sp.get_piece_size()
        assert self.sp.id_to_piece(0) == "<unk>" and self.sp.id_to_piece(1) == "<s>" \
            and self.sp.id_to_piece(2) == "</s>", "unexpected spm special layout"

    def to_xlmr(self, i):
        return self.UNK if i == 0 else i + 1

    def pieces_ids(self, text):
        ids = self.sp.encode(text)
        return [self.sp.id_to_piece(i) for i in ids], [self.to_xlmr(i) for i in ids]

    def ids(self, text):
        return self.pieces_ids(text)[1]

    def single(self, text, max_len):
        return [self.BOS] + truncate_single(self.ids(text), max_len - 2) + [self.EOS]

    def pair(self, a, b, max_len):
        ia, ib = truncate_pair(self.ids(a), self.ids(b), max_len - 4, max_len)
        ids = [self.BOS] + ia + [self.EOS, self.EOS] + ib + [self.EOS]
        return ids, [0] * len(ids)


def _read_varint(buf, pos):
    shift, val = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        val |= (b & 0x7F) << shift
        if not b & 0x80:
            return val, pos
        shift += 7


def _proto_fields(buf):
    """Yields (field_number, wire_type, value) of a serialized protobuf message."""
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            val, pos = _read_varint(buf, pos)
        elif wire == 1:
            val, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            ln, pos = _read_varint(buf, pos)
            val, pos = buf[pos:pos + ln], pos + ln
        elif wire == 5:
            val, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError("unsupported wire type %d" % wire)
        yield field, wire, val


def spm_precompiled_charsmap(sp):
    """ModelProto.normalizer_spec (field 3) -> NormalizerSpec.precompiled_charsmap (field 2)."""
    proto = sp.serialized_model_proto()
    for f, w, v in _proto_fields(proto):
        if f == 3 and w == 2:
            for f2, w2, v2 in _proto_fields(v):
                if f2 == 2 and w2 == 2:
                    return bytes(v2)
    raise ValueError("no precompiled_charsmap in the spm model")


# ----------------------------------------------------------------------------------------
# tokenizer.json writers
# ----------------------------------------------------------------------------------------

def _added(id_, content, special=True, lstrip=False):
    return {"id": id_, "content": content, "single_word": False, "lstrip": lstrip,
            "rstrip": False, "normalized": False, "special": special}


def bert_tokenizer_json(vocab):
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_added(vocab[s], s) for s in specials],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [vocab["[CLS]"]], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [vocab["[SEP]"]], "tokens": ["[SEP]"]}},
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }


def xlmr_tokenizer_json(xs):
    sp = xs.sp
    vocab = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]]
    vocab += [[sp.id_to_piece(i), float(sp.get_score(i))] for i in range(3, xs.n)]
    vocab += [["<mask>", 0.0]]
    mask_id = len(vocab) - 1
    charsmap = base64.b64encode(spm_precompiled_charsmap(sp)).decode("ascii")
    meta = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_added(0, "<s>"), _added(1, "<pad>"), _added(2, "</s>"), _added(3, "<unk>"),
                         _added(mask_id, "<mask>", lstrip=True)],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": charsmap},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": dict(meta),
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {
                "<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}},
        },
        "decoder": dict(meta),
        "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": False},
    }, len(vocab)


# ----------------------------------------------------------------------------------------
# safetensors (written and read by hand)
# ----------------------------------------------------------------------------------------

def _tensor_bytes(t, dtype):
    t = t.contiguous()
    if dtype == "F32":
        return t.to(torch.float32).numpy().astype("<f4").tobytes()
    if dtype == "F16":
        return t.to(torch.float16).numpy().astype("<f2").tobytes()
    if dtype == "BF16":
        return t.to(torch.bfloat16).view(torch.int16).numpy().astype("<i2").tobytes()
    if dtype == "I64":
        return t.to(torch.int64).numpy().astype("<i8").tobytes()
    raise ValueError(dtype)


def write_safetensors(path, tensors):
    """tensors: list of (name, tensor, dtype)."""
    header, blobs, off = {}, [], 0
    for name, t, dtype in sorted(tensors, key=lambda x: x[0]):
        b = _tensor_bytes(t, dtype)
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """Returns name -> float32 tensor (F16/BF16 widened) or int64 tensor."""
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        raw = data[base + b:base + e]
        shape = info["shape"]
        if info["dtype"] == "F32":
            arr = torch.from_numpy(np.frombuffer(raw, dtype="<f4").copy())
        elif info["dtype"] == "F16":
            arr = torch.from_numpy(np.frombuffer(raw, dtype="<f2").copy()).float()
        elif info["dtype"] == "BF16":
            i16 = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = torch.from_numpy(i16.view(np.float32).copy())
        elif info["dtype"] == "I64":
            arr = torch.from_numpy(np.frombuffer(raw, dtype="<i8").copy())
        else:
            raise ValueError(info["dtype"])
        out[name] = arr.reshape(shape)
    return out


# ----------------------------------------------------------------------------------------
# Model: weights and the reference forward pass
# ----------------------------------------------------------------------------------------

class Config:
    def __init__(self, family, vocab_size, hidden=32, layers=2, heads=4, intermediate=64,
                 max_pos=64, head=None):
        self.family = family  # "bert" or "xlmr"
        self.vocab_size = vocab_size
        self.hidden = hidden
        self.layers = layers
        self.heads = heads
        self.intermediate = intermediate
        self.head = head  # None, "bert-cls" (pooler + classifier), "xlmr-cls"
        if family == "bert":
            self.eps, self.pad_id, self.type_vocab = 1e-12, 0, 2
            self.max_pos = max_pos
        else:
            self.eps, self.pad_id, self.type_vocab = 1e-5, 1, 1
            self.max_pos = max_pos + 2

    def to_json(self, architecture, torch_dtype, num_labels=None):
        c = {"architectures": [architecture],
             "attention_probs_dropout_prob": 0.1,
             "classifier_dropout": None,
             "hidden_act": "gelu",
             "hidden_dropout_prob": 0.1,
             "hidden_size": self.hidden,
             "initializer_range": 0.02,
             "intermediate_size": self.intermediate,
             "layer_norm_eps": self.eps,
             "max_position_embeddings": self.max_pos,
             "model_type": "bert" if self.family == "bert" else "xlm-roberta",
             "num_attention_heads": self.heads,
             "num_hidden_layers": self.layers,
             "pad_token_id": self.pad_id,
             "position_embedding_type": "absolute",
             "torch_dtype": torch_dtype,
             "transformers_version": "4.41.2",
             "type_vocab_size": self.type_vocab,
             "use_cache": True,
             "vocab_size": self.vocab_size}
        if self.family == "xlmr":
            c["bos_token_id"] = 0
            c["eos_token_id"] = 2
        if num_labels is not None:
            c["id2label"] = {str(i): "LABEL_%d" % i for i in range(num_labels)}
            c["label2id"] = {"LABEL_%d" % i: i for i in range(num_labels)}
        return c


def make_weights(cfg, seed, std=0.2, pooler=True):
    """Random float32 weights, names without prefix (head tensors are named as in the
    classification models: classifier.* at top level)."""
    g = torch.Generator().manual_seed(seed)

    def rn(*shape, s=std):
        return torch.randn(*shape, generator=g) * s

    H, I = cfg.hidden, cfg.intermediate
    w = {}
    w["embeddings.word_embeddings.weight"] = rn(cfg.vocab_size, H, s=0.5)
    w["embeddings.position_embeddings.weight"] = rn(cfg.max_pos, H, s=0.3)
    w["embeddings.token_type_embeddings.weight"] = rn(cfg.type_vocab, H, s=0.3)
    w["embeddings.LayerNorm.weight"] = 1.0 + rn(H, s=0.1)
    w["embeddings.LayerNorm.bias"] = rn(H, s=0.1)
    for l in range(cfg.layers):
        p = "encoder.layer.%d." % l
        for n in ("query", "key", "value"):
            w[p + "attention.self.%s.weight" % n] = rn(H, H)
            w[p + "attention.self.%s.bias" % n] = rn(H, s=0.1)
        w[p + "attention.output.dense.weight"] = rn(H, H)
        w[p + "attention.output.dense.bias"] = rn(H, s=0.1)
        w[p + "attention.output.LayerNorm.weight"] = 1.0 + rn(H, s=0.1)
        w[p + "attention.output.LayerNorm.bias"] = rn(H, s=0.1)
        w[p + "intermediate.dense.weight"] = rn(I, H)
        w[p + "intermediate.dense.bias"] = rn(I, s=0.1)
        w[p + "output.dense.weight"] = rn(H, I)
        w[p + "output.dense.bias"] = rn(H, s=0.1)
        w[p + "output.LayerNorm.weight"] = 1.0 + rn(H, s=0.1)
        w[p + "output.LayerNorm.bias"] = rn(H, s=0.1)
    if pooler:
        w["pooler.dense.weight"] = rn(H, H)
        w["pooler.dense.bias"] = rn(H, s=0.1)
    if cfg.head == "bert-cls":
        w["classifier.weight"] = rn(1, H, s=0.5)
        w["classifier.bias"] = rn(1, s=0.1)
    elif cfg.head == "xlmr-cls":
        w["classifier.dense.weight"] = rn(H, H)
        w["classifier.dense.bias"] = rn(H, s=0.1)
        w["classifier.out_proj.weight"] = rn(1, H, s=0.5)
        w["classifier.out_proj.bias"] = rn(1, s=0.1)
    return w


def round_to(w, dtype):
    """The float32 weights the stored file holds (F16/BF16 rounded, then widened)."""
    if dtype == "F32":
        return {k: v.clone() for k, v in w.items()}
    tdt = torch.float16 if dtype == "F16" else torch.bfloat16
    return {k: v.to(tdt).to(torch.float32) for k, v in w.items()}


def position_ids(cfg, mask):
    B, S = mask.shape
    if cfg.family == "bert":
        return torch.arange(S).unsqueeze(0).expand(B, S)
    # modeling_xlm_roberta.create_position_ids_from_input_ids
    m = mask.to(torch.int64)
    return torch.cumsum(m, dim=1) * m + cfg.pad_id


def forward(cfg, w, ids, mask, types, dtype=torch.float32):
    """Encoder forward of modeling_bert / modeling_xlm_roberta; returns the last hidden state."""
    W = {k: v.to(dtype) for k, v in w.items() if v.is_floating_point()}
    B, S = ids.shape
    H, nh = cfg.hidden, cfg.heads
    dh = H // nh
    pos = position_ids(cfg, mask)
    x = (W["embeddings.word_embeddings.weight"][ids]
         + W["embeddings.token_type_embeddings.weight"][types]
         + W["embeddings.position_embeddings.weight"][pos])
    x = F.layer_norm(x, (H,), W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], cfg.eps)
    ext = (1.0 - mask.to(dtype))[:, None, None, :] * torch.finfo(dtype).min
    for l in range(cfg.layers):
        p = "encoder.layer.%d." % l

        def lin(t, n):
            return F.linear(t, W[p + n + ".weight"], W[p + n + ".bias"])

        def heads(t):
            return t.view(B, S, nh, dh).permute(0, 2, 1, 3)

        q = heads(lin(x, "attention.self.query"))
        k = heads(lin(x, "attention.self.key"))
        v = heads(lin(x, "attention.self.value"))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(dh) + ext
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(B, S, H)
        a = F.layer_norm(lin(ctx, "attention.output.dense") + x, (H,),
                         W[p + "attention.output.LayerNorm.weight"],
                         W[p + "attention.output.LayerNorm.bias"], cfg.eps)
        inter = F.gelu(lin(a, "intermediate.dense"))  # exact erf GELU ("gelu")
        x = F.layer_norm(lin(inter, "output.dense") + a, (H,),
                         W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"], cfg.eps)
    return x, W


def pool(h, mask, mode):
    """sentence-transformers Pooling."""
    m = mask.to(h.dtype).unsqueeze(-1)
    if mode == "cls":
        return h[:, 0]
    if mode == "max":
        t = h.clone()
        t[m.expand_as(t) == 0] = -1e9
        return torch.max(t, dim=1).values
    s = torch.sum(h * m, dim=1)
    n = torch.clamp(m.sum(dim=1), min=1e-9)
    if mode == "mean":
        return s / n
    if mode == "mean_sqrt_len":
        return s / torch.sqrt(n)
    raise ValueError(mode)


def pad_batch(seqs, pad_id, type_seqs=None):
    S = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), S), pad_id, dtype=torch.int64)
    mask = torch.zeros((len(seqs), S), dtype=torch.int64)
    types = torch.zeros((len(seqs), S), dtype=torch.int64)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
        if type_seqs is not None:
            types[i, :len(s)] = torch.tensor(type_seqs[i])
    return ids, mask, types


def embed(cfg, w, seqs, mode, normalize, dtype=torch.float32):
    ids, mask, types = pad_batch(seqs, cfg.pad_id)
    h, _ = forward(cfg, w, ids, mask, types, dtype)
    v = pool(h, mask, mode)
    if normalize:
        v = F.normalize(v, p=2, dim=1)
    return v


def classify(cfg, w, seqs, type_seqs, dtype=torch.float32):
    ids, mask, types = pad_batch(seqs, cfg.pad_id, type_seqs)
    h, W = forward(cfg, w, ids, mask, types, dtype)
    first = h[:, 0]
    if cfg.head == "bert-cls":
        pooled = torch.tanh(F.linear(first, W["pooler.dense.weight"], W["pooler.dense.bias"]))
        return F.linear(pooled, W["classifier.weight"], W["classifier.bias"])
    t = torch.tanh(F.linear(first, W["classifier.dense.weight"], W["classifier.dense.bias"]))
    return F.linear(t, W["classifier.out_proj.weight"], W["classifier.out_proj.bias"])


def check_batch_alone(fn, seqs, batch_out, tol=1e-5, what=""):
    worst = 0.0
    for i, s in enumerate(seqs):
        alone = fn([s], i)
        d = (alone[0] - batch_out[i]).abs().max().item()
        worst = max(worst, d)
    assert worst <= tol, "%s: batch vs alone differ by %g" % (what, worst)
    return worst


def fl(t):
    """Full float32 precision: the repr of the float32 value as a Python float."""
    return [[float(np.float32(x)) for x in row] for row in t.detach().to(torch.float32).tolist()]


# ----------------------------------------------------------------------------------------
# Texts
# ----------------------------------------------------------------------------------------

LONG_EN = ("Retrieval augmented generation combines a search engine with a language model: the "
           "engine finds the passages that answer a question, ranks them with BM25 and dense "
           "vectors, fuses the two rankings, reranks the best ones with a cross encoder, and "
           "the model writes an answer that cites them. Every step must be fast, exact and "
           "tested against an independent reference implementation, or the whole pipeline "
           "silently degrades when one of its parts drifts away from the original behaviour.")

BERT_TEXTS = [
    "hello world",
    "The quick brown fox jumps over the lazy dog.",
    LONG_EN,
    "Café naïve résumé, Ångström.",
    "日本語のテキスト",
    "CMP0077: set(FOO_BAR ...)!? -- see #42 & {x}",
    "Error MX-200 and ORA-01555: snapshot too old",
    "L'avenant n'est pas signé",
    "",
    "tabs\tand\nnewlines  between   words",
]

XLMR_TEXTS = [
    "L'avenant est signé par la Chambre.",
    "De Kamer stemt over het wetsvoorstel.",
    ("Les députés ont adopté le projet de loi relatif au budget de l'État après un long débat "
     "en séance plénière, et de Kamer van volksvertegenwoordigers heeft het wetsontwerp "
     "goedgekeurd na een lange bespreking."),
    "Het café is gesloten.",
    "ﬁnancement ＡＢＣ ①",
    "",
    "Une question écrite au ministre.",
]

CE_BERT_PAIRS = [
    ["how do i enable link time optimization?", "Set INTERPROCEDURAL_OPTIMIZATION to ON for the target."],
    ["what is bm25?", "BM25 is a ranking function used by search engines to estimate relevance."],
    ["what is bm25?", "The weather in Brussels was cloudy all week."],
    ["short query", LONG_EN],  # only the passage is cut
    [LONG_EN, "short passage"],  # only the query is cut (swap case of longest_first)
    [LONG_EN, LONG_EN[::-1].lower()],  # both cut, first shorter: 37 -> 18 + 19
    # both cut, first longer: after each is cut to 40 both are 40 long, so no swap: 18 + 19
    [LONG_EN + " " + LONG_EN, LONG_EN],
    # both cut, first longer and both under 40: truncation.rs swaps back: 19 + 18
    [" ".join(LONG_EN.split()[:36]), " ".join(LONG_EN.split()[:24])],
    ["", "an empty query"],
]

CE_XLMR_PAIRS = [
    ["Qui a signé l'avenant ?", "L'avenant est signé par la Chambre."],
    ["Wie stemt over het wetsvoorstel?", "De Kamer stemt over het wetsvoorstel."],
    ["Qui a signé l'avenant ?", "Het café is gesloten."],
    ["budget de l'État", XLMR_TEXTS[2]],
    [XLMR_TEXTS[2], "le budget"],
    [XLMR_TEXTS[2], XLMR_TEXTS[2]],
]

WORDPIECE_CASES = [
    "Hello, World!",
    "Café naïve RÉSUMÉ Ångström façade",
    "e\u0301le\u0300ve decomposed accents",
    "日本語のテキスト 中文分词 한국어",
    "ภาษาไทย และ العربية اللغة",
    "!!!???...---,,,;;;:::",
    "CMP0077: set(FOO_BAR ...)!? (x+y)*z^2 = 5°C ± 0.5 € 10 $",
    "control\u0000chars\u0007here\u200band\u00adsoft\ufffdhyphen\ue000x\u000bvt",
    "emoji \u2764\ufe0f \U0001F600 \U0001F44D\U0001F3FD end",
    "whitespace\u00a0nbsp\u3000ideographic\u2028line\u2029para\u2003em\r\nend",
    "ΟΔΟΣ Σίσυφος İstanbul straße ﬁnal ＡＢＣ",
    "MX-200 ORA-01555 iPhone don't e-mail https://example.com/a?b=c&d=e",
    "unaffable unbelievably antidisestablishmentarianism",
    "a" * 100,
    "a" * 101,
    "x" + "é" * 100 + " " + "é" * 100,
    "[CLS] is not special here? [sep]",
    "",
]

UNIGRAM_CASES = [
    "L'avenant est signé par la Chambre.",
    "De Kamer stemt over het wetsvoorstel.",
    "ＡＢＣ ｄｅｆ ﬁnancement ﬂux",
    "① ② ③ ⅳ ㎏ ½",
    "café cafe\u0301 naïve nai\u0308ve",
    "Het café is gesloten; c'est fermé!",
    "Les députés ont adopté le projet de loi relatif au budget de l'État.",
    "2024-03-15 12:30 (n° 1234/5)",
    "Bruxelles-Capitale en Brussel-Hoofdstad",
    "",
]


# ----------------------------------------------------------------------------------------
# Folder writers
# ----------------------------------------------------------------------------------------

def write_json(path, obj, indent=None):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=indent)
        f.write("\n")


def st_files(d, hidden, mode, normalize, max_seq, prompts=None):
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                        "type": "sentence_transformers.models.Normalize"})
    write_json(os.path.join(d, "modules.json"), modules, indent=2)
    write_json(os.path.join(d, "sentence_bert_config.json"),
               {"max_seq_length": max_seq, "do_lower_case": False}, indent=2)
    os.makedirs(os.path.join(d, "1_Pooling"), exist_ok=True)
    write_json(os.path.join(d, "1_Pooling", "config.json"), {
        "word_embedding_dimension": hidden,
        "pooling_mode_cls_token": mode == "cls",
        "pooling_mode_mean_tokens": mode == "mean",
        "pooling_mode_max_tokens": mode == "max",
        "pooling_mode_mean_sqrt_len_tokens": mode == "mean_sqrt_len",
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": False,
        "include_prompt": True}, indent=2)
    if normalize:
        os.makedirs(os.path.join(d, "2_Normalize"), exist_ok=True)
        # git keeps no empty folder; sentence-transformers' Normalize has no file of its own.
        open(os.path.join(d, "2_Normalize", ".gitkeep"), "w").close()
    if prompts is not None:
        write_json(os.path.join(d, "config_sentence_transformers.json"), {
            "__version__": {"sentence_transformers": "2.7.0", "transformers": "4.41.2", "pytorch": "1.13.1"},
            "prompts": prompts, "default_prompt_name": None}, indent=2)


def bert_tokenizer_config(max_len):
    return {"clean_up_tokenization_spaces": True, "cls_token": "[CLS]", "do_basic_tokenize": True,
            "do_lower_case": True, "mask_token": "[MASK]", "model_max_length": max_len,
            "never_split": None, "pad_token": "[PAD]", "sep_token": "[SEP]", "strip_accents": None,
            "tokenize_chinese_chars": True, "tokenizer_class": "BertTokenizer", "unk_token": "[UNK]"}


def xlmr_tokenizer_config(max_len):
    return {"bos_token": "<s>", "clean_up_tokenization_spaces": True, "cls_token": "<s>",
            "eos_token": "</s>", "mask_token": "<mask>", "model_max_length": max_len,
            "pad_token": "<pad>", "sep_token": "</s>", "tokenizer_class": "XLMRobertaTokenizer",
            "unk_token": "<unk>"}


def save_model(d, cfg, w, dtype, prefix, architecture, extra=()):
    """Writes config.json and model.safetensors; returns the float32 weights the file holds,
    read back from the file (so the forward pass runs on exactly what is stored)."""
    os.makedirs(d, exist_ok=True)
    torch_dtype = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype]
    write_json(os.path.join(d, "config.json"),
               cfg.to_json(architecture, torch_dtype, 1 if cfg.head else None), indent=2)
    tensors = []
    for k, v in w.items():
        name = k if k.startswith("classifier.") else prefix + k
        tensors.append((name, v, dtype))
    tensors.extend(extra)
    path = os.path.join(d, "model.safetensors")
    write_safetensors(path, tensors)
    back = read_safetensors(path)
    rounded = round_to(w, dtype)
    out = {}
    for k in w:
        name = k if k.startswith("classifier.") else prefix + k
        assert torch.equal(back[name], rounded[k]), "safetensors round trip differs: " + name
        out[k] = back[name]
    if dtype != "F32":
        diff = max((rounded[k] - w[k]).abs().max().item() for k in w)
        assert diff > 0, "rounding to %s changed nothing?" % dtype
    return out


# ----------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------

def build_bert_vocab(real_vocab, texts):
    """Subset of the real uncased vocab: ids < 1002 of the real numbering (the specials and
    every single character), the '##' form of every single character,
    and every piece the test texts need; renumbered 0..V-1 in the original order."""
    full = WordPiece(real_vocab)
    keep = set(p for p, i in real_vocab.items() if i < 1002)
    singles = [p for p in real_vocab if len(p) == 1]
    keep.update(singles)
    keep.update("##" + p for p in singles if "##" + p in real_vocab)
    for t in texts:
        keep.update(full.pieces(t))
    ordered = sorted(keep, key=lambda p: real_vocab[p])
    vocab = {p: i for i, p in enumerate(ordered)}
    sub = WordPiece(vocab)
    for t in texts:  # greedy longest match with a superset of the chosen pieces gives the same pieces
        assert sub.pieces(t) == full.pieces(t), t
    return vocab


README = """# Transformer fixtures (generated: do not edit)

Made by `/usr/bin/python3 scripts/gen_transformer_fixtures.py` (Debian python3-torch 1.13,
python3-sentencepiece 0.1.97), deterministic. Tiny random models (hidden 32, 2 layers, 4
heads, FFN 64) in the Hugging Face / sentence-transformers layout, and what a float32 torch
forward pass written from transformers' modeling_bert / modeling_xlm_roberta gives on them
(F16/BF16 weights widened to float32 first). Vectors are computed in one padded batch and
each text alone; both agree to 1e-5 (the script asserts it).

| folder | model | weights | names | pooling | normalize | max_seq_length |
| --- | --- | --- | --- | --- | --- | --- |
| bert-mean | BertModel | F32 | no prefix | mean | yes | 24 |
| bert-cls-f16 | BertModel | F16 | `bert.` | CLS | no | 64 |
| bert-max-bf16 | BertModel, E5 prompts | BF16 | no prefix | max | yes | 32 |
| bert-sqrtlen | BertModel (+ I64 `embeddings.position_ids`) | F32 | no prefix | mean_sqrt_len | no | 48 |
| xlmr-mean | XLMRobertaModel | F32 | no prefix | mean | yes | 32 |
| ce-bert | BertForSequenceClassification | F32 | `bert.` | pooler + classifier | - | 40 (tokenizer_config) |
| ce-xlmr | XLMRobertaForSequenceClassification | F16 | `roberta.` | classifier.dense/out_proj | - | 40 (tokenizer_config) |

expected.json: embedders `texts`, `tokens` (ids with specials, after truncation), `vectors`
(bert-max-bf16 also `query_prompt`, `query_tokens`, `query_vectors`); cross-encoders `pairs`,
`tokens`, `type_ids`, `logits`.

Token ids come from the script's Python oracles (WordPiece written from the tokenizers rules;
sentencepiece for Unigram) and were cross-checked against Hugging Face tokenizers 0.23.2
(scripts/check_transformer_fixtures_hf.js: all equal).

Truncation: a single text keeps max_length - 2 content tokens. A pair: each sequence is first
cut to max_length, then tokenizers' LongestFirst (utils/truncation.rs) with the budget
max_length - 3 (BERT) or - 4 (XLM-R): with n1 <= n2, n2 = max(n1, budget - n1); if n1 + n2 >
budget, n1 = budget / 2 and n2 = n1 + budget % 2 (lengths swapped back when the first was longer).

wordpiece_real.json: the real BERT uncased tokenizer of ../shared/fixtures/model2vec/
test-model-sentence-transformers on hard texts, ids without specials. unigram_real.json:
python3-sentencepiece on ../shared/fixtures/sentencepiece/nl-fr-dekamer-unigram.model, ids in the
XLM-R numbering (spm id + 1, spm <unk> -> 3), without specials; xlmr-mean/tokenizer.json is the
converted tokenizer. That model lacks most accented letters: a run of unknown characters is one
<unk> (id 3).
"""


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "transformer")
    out = os.path.abspath(out)
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    torch.set_num_threads(1)
    summary = []

    real = json.load(open(REAL_BERT_TOKENIZER, encoding="utf-8"))
    real_vocab = real["model"]["vocab"]
    real_wp = WordPiece(real_vocab)

    # --- wordpiece_real.json
    cases = []
    for t in WORDPIECE_CASES:
        cases.append({"text": t, "pieces": real_wp.pieces(t), "ids": real_wp.ids(t)})
    write_json(os.path.join(out, "wordpiece_real.json"),
               {"tokenizer": REAL_BERT_TOKENIZER_REL,
                "note": "ids without special tokens; from scripts/gen_transformer_fixtures.py's WordPiece oracle",
                "cases": cases}, indent=1)
    assert cases[13]["pieces"] != ["[UNK]"] and "".join(cases[13]["pieces"]).replace("##", "") == "a" * 100
    assert cases[14]["pieces"] == ["[UNK]"], "101-char word"
    summary.append("wordpiece_real.json: %d cases" % len(cases))

    # --- unigram_real.json
    xs = XlmrSpm(SPM_MODEL)
    ucases = []
    for t in UNIGRAM_CASES:
        assert t == " ".join(t.split()), "no leading/trailing/double spaces: %r" % t
        pieces, ids = xs.pieces_ids(t)
        ucases.append({"text": t, "pieces": pieces, "ids": ids})
    write_json(os.path.join(out, "unigram_real.json"),
               {"model": SPM_MODEL_REL, "tokenizer": "xlmr-mean/tokenizer.json",
                "note": "python3-sentencepiece 0.1.97 on the model; ids in the XLM-R numbering "
                        "(spm id + 1, spm <unk> -> 3), without special tokens",
                "cases": ucases}, indent=1)
    summary.append("unigram_real.json: %d cases" % len(ucases))

    # --- BERT vocabulary subset shared by the BERT fixtures
    bert_all_texts = (BERT_TEXTS + ["query: " + t for t in BERT_TEXTS]
                      + [x for p in CE_BERT_PAIRS for x in p])
    vocab = build_bert_vocab(real_vocab, bert_all_texts)
    wp = WordPiece(vocab)
    tok_json = bert_tokenizer_json(vocab)
    V = len(vocab)

    def bert_embedder(name, seed, dtype, prefix, mode, normalize, max_seq, prompts=None, extra=()):
        d = os.path.join(out, name)
        cfg = Config("bert", V)
        w = make_weights(cfg, seed)
        wf = save_model(d, cfg, w, dtype, prefix, "BertModel", extra)
        write_json(os.path.join(d, "tokenizer.json"), tok_json)
        write_json(os.path.join(d, "tokenizer_config.json"), bert_tokenizer_config(512), indent=2)
        st_files(d, cfg.hidden, mode, normalize, max_seq, prompts)
        exp = {"texts": BERT_TEXTS}
        seqs = [bert_single(wp, t, max_seq) for t in BERT_TEXTS]
        assert max(len(s) for s in seqs) == max_seq and len(wp.ids(LONG_EN)) + 2 > max_seq
        exp["tokens"] = seqs
        v = embed(cfg, wf, seqs, mode, normalize)
        worst = check_batch_alone(lambda s, i: embed(cfg, wf, s, mode, normalize), seqs, v, what=name)
        v64 = embed(cfg, wf, seqs, mode, normalize, torch.float64)
        d64 = (v.double() - v64).abs().max().item()
        assert d64 < 1e-5, "%s: float32 vs float64 %g" % (name, d64)
        exp["vectors"] = fl(v)
        line = "%s: %s %s pooling=%s normalize=%s max_seq=%d V=%d; batch-vs-alone %.2e, f32-vs-f64 %.2e" % (
            name, dtype, prefix or "(no prefix)", mode, normalize, max_seq, V, worst, d64)
        if prompts:
            qseqs = [bert_single(wp, prompts["query"] + t, max_seq) for t in BERT_TEXTS]
            qv = embed(cfg, wf, qseqs, mode, normalize)
            check_batch_alone(lambda s, i: embed(cfg, wf, s, mode, normalize), qseqs, qv, what=name + " query")
            exp["query_prompt"] = prompts["query"]
            exp["query_tokens"] = qseqs
            exp["query_vectors"] = fl(qv)
        write_json(os.path.join(d, "expected.json"), exp)
        summary.append(line)

    bert_embedder("bert-mean", 101, "F32", "", "mean", True, 24)
    bert_embedder("bert-cls-f16", 102, "F16", "bert.", "cls", False, 64)
    bert_embedder("bert-max-bf16", 103, "BF16", "", "max", True, 32,
                  prompts={"query": "query: ", "passage": "passage: "})
    # bert-sqrtlen also carries the int64 embeddings.position_ids buffer that older
    # checkpoints (all-MiniLM-L6-v2's model.safetensors among them) hold.
    bert_embedder("bert-sqrtlen", 104, "F32", "", "mean_sqrt_len", False, 48,
                  extra=[("embeddings.position_ids", torch.arange(64).unsqueeze(0), "I64")])

    # --- XLM-R embedder
    xtok, XV = xlmr_tokenizer_json(xs)
    # This 1,000-piece model lacks most accented letters ("é" is <unk>): sentencepiece fuses
    # a run of unknown characters into one <unk> (as tokenizers' Unigram does with fuse_unk),
    # so French texts exercise that too.
    n_unk = 0
    for t in XLMR_TEXTS + [x for p in CE_XLMR_PAIRS for x in p]:
        n_unk += xs.ids(t).count(xs.UNK)
        assert t == " ".join(t.split())
    summary.append("XLM-R texts hold %d <unk> tokens (fused runs of unknown characters)" % n_unk)
    name, max_seq = "xlmr-mean", 32
    d = os.path.join(out, name)
    cfg = Config("xlmr", XV)
    w = make_weights(cfg, 105)
    wf = save_model(d, cfg, w, "F32", "", "XLMRobertaModel")
    write_json(os.path.join(d, "tokenizer.json"), xtok)
    write_json(os.path.join(d, "tokenizer_config.json"), xlmr_tokenizer_config(512), indent=2)
    st_files(d, cfg.hidden, "mean", True, max_seq)
    seqs = [xs.single(t, max_seq) for t in XLMR_TEXTS]
    assert max(len(s) for s in seqs) == max_seq
    v = embed(cfg, wf, seqs, "mean", True)
    worst = check_batch_alone(lambda s, i: embed(cfg, wf, s, "mean", True), seqs, v, what=name)
    d64 = (v.double() - embed(cfg, wf, seqs, "mean", True, torch.float64)).abs().max().item()
    assert d64 < 1e-5
    write_json(os.path.join(d, "expected.json"), {"texts": XLMR_TEXTS, "tokens": seqs, "vectors": fl(v)})
    summary.append("%s: F32 mean normalize max_seq=%d V=%d; batch-vs-alone %.2e, f32-vs-f64 %.2e"
                   % (name, max_seq, XV, worst, d64))

    # --- cross-encoders
    def cross_encoder(name, seed, cfg, dtype, prefix, arch, pairs, encode, tok, tok_cfg):
        d = os.path.join(out, name)
        w = make_weights(cfg, seed, pooler=(cfg.head == "bert-cls"))
        wf = save_model(d, cfg, w, dtype, prefix, arch)
        write_json(os.path.join(d, "tokenizer.json"), tok)
        write_json(os.path.join(d, "tokenizer_config.json"), tok_cfg, indent=2)
        enc = [encode(a, b) for a, b in pairs]
        seqs = [e[0] for e in enc]
        types = [e[1] for e in enc]
        assert max(len(s) for s in seqs) == 40
        logits = classify(cfg, wf, seqs, types)
        worst = 0.0
        for i in range(len(seqs)):
            worst = max(worst, (classify(cfg, wf, [seqs[i]], [types[i]])[0] - logits[i]).abs().max().item())
        assert worst < 1e-5, worst
        d64 = (logits.double() - classify(cfg, wf, seqs, types, torch.float64)).abs().max().item()
        assert d64 < 1e-4
        write_json(os.path.join(d, "expected.json"),
                   {"pairs": pairs, "tokens": seqs, "type_ids": types, "logits": fl(logits)})
        summary.append("%s: %s %s model_max_length 40; logits %s; batch-vs-alone %.2e, f32-vs-f64 %.2e"
                       % (name, dtype, prefix, [round(x[0], 4) for x in logits.tolist()], worst, d64))
        return seqs

    ce_seqs = cross_encoder("ce-bert", 106, Config("bert", V, head="bert-cls"), "F32", "bert.",
                            "BertForSequenceClassification", CE_BERT_PAIRS,
                            lambda a, b: bert_pair(wp, a, b, 40), tok_json, bert_tokenizer_config(40))
    # longest_first cases: passage cut, query cut, both cut (37 = 18 + 19)
    sep = vocab["[SEP]"]
    lens = [(s.index(sep) - 1, len(s) - s.index(sep) - 2) for s in ce_seqs]
    assert lens[5] == (18, 19) and lens[6] == (18, 19) and lens[7] == (19, 18), lens
    assert lens[3][0] == 2 and lens[4][1] == 2, lens
    cross_encoder("ce-xlmr", 107, Config("xlmr", XV, head="xlmr-cls"), "F16", "roberta.",
                  "XLMRobertaForSequenceClassification", CE_XLMR_PAIRS,
                  lambda a, b: xs.pair(a, b, 40), xtok, xlmr_tokenizer_config(40))

    with open(os.path.join(out, "README.md"), "w", encoding="utf-8") as f:
        f.write(README)
    total = 0
    for root, _, files in os.walk(out):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
    print("wrote %s (%.2f MB)" % (out, total / 1e6))
    for line in summary:
        print("  " + line)
    assert total < 3.2e6, "fixtures too large"


if __name__ == "__main__":
    main()
