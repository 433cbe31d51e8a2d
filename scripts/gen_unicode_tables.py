#!/usr/bin/env python3
"""Generates include/ragpp/text/unicode_tables.hpp from the Unicode Character Database.

Usage: scripts/gen_unicode_tables.py [UCD_DIR] > include/ragpp/text/unicode_tables.hpp
UCD_DIR defaults to /usr/share/unicode (Debian's unicode-data package).

Per code point the header stores
  - its Word_Break property (UAX #29), the word-token script (Han, Hiragana,
    Katakana, Hangul, South-East Asian complex context) and Extended_Pictographic;
  - `fold`: full case folding (CaseFolding.txt statuses C and F) and compatibility
    decomposition (NFKD), repeated to a fixed point, default-ignorable code points
    removed, then canonically recomposed (NFC). U+2019 and U+02BC become U+0027;
    the ligature-letters oe and ae (U+0153, U+00E6) become "oe" and "ae";
  - `bare`: `fold`, canonically decomposed, without the combining diacritical marks
    (combining class > 0 in the blocks U+0300-036F, 1AB0-1AFF, 1DC0-1DFF, 20D0-20FF,
    FE20-FE2F), then recomposed. Marks of other scripts (Japanese voicing marks,
    Indic nuktas, Hebrew points, Arabic harakat) are kept.
and a canonical composition table for (base, diacritical mark) pairs, used to compose
a decomposed input ("e" U+0301) before the analyzers look at word endings.
"""
import re
import sys
from collections import defaultdict

UCD = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode"
MAXCP = 0x110000


def ranges(path):
    """Yields (first, last, fields) for each data line of a UCD property file."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = [x.strip() for x in line.split(";")]
            r = fields[0]
            if ".." in r:
                a, b = r.split("..")
                yield int(a, 16), int(b, 16), fields[1:]
            else:
                yield int(r, 16), int(r, 16), fields[1:]


# --- UnicodeData.txt: category, combining class, decomposition -----------------------
category = {}
ccc = defaultdict(int)
decomp = {}  # cp -> (is_compat, [cps])
with open(f"{UCD}/UnicodeData.txt", encoding="utf-8") as f:
    first = None
    for line in f:
        fs = line.rstrip("\n").split(";")
        cp = int(fs[0], 16)
        if fs[1].endswith(", First>"):
            first = cp
            continue
        lo = first if fs[1].endswith(", Last>") else cp
        first = None
        for c in range(lo, cp + 1):
            category[c] = fs[2]
            if int(fs[3]):
                ccc[c] = int(fs[3])
        if fs[5]:
            parts = fs[5].split()
            compat = parts[0].startswith("<")
            if compat:
                parts = parts[1:]
            decomp[cp] = (compat, [int(x, 16) for x in parts])

version = "unknown"
with open(f"{UCD}/ReadMe.txt", encoding="utf-8") as f:
    for line in f:
        m = re.search(r"Version (\d+\.\d+\.\d+) of the Unicode Standard", line)
        if m:
            version = "Unicode " + m.group(1)
            break
with open(f"{UCD}/auxiliary/WordBreakProperty.txt", encoding="utf-8") as f:
    head = f.readline().strip("# \n")

casefold = {}
for a, b, fs in ranges(f"{UCD}/CaseFolding.txt"):
    if fs[0] in ("C", "F"):
        casefold[a] = [int(x, 16) for x in fs[1].split()]

ignorable = set()
for a, b, fs in ranges(f"{UCD}/DerivedCoreProperties.txt"):
    if fs[0] == "Default_Ignorable_Code_Point":
        ignorable.update(range(a, b + 1))

comp_exclusion = set()
for a, b, fs in ranges(f"{UCD}/DerivedNormalizationProps.txt"):
    if fs[0] == "Full_Composition_Exclusion":
        comp_exclusion.update(range(a, b + 1))

WB_NAMES = ["Other", "CR", "LF", "Newline", "Extend", "ZWJ", "Regional_Indicator", "Format",
            "Katakana", "Hebrew_Letter", "ALetter", "Single_Quote", "Double_Quote", "MidNumLet",
            "MidLetter", "MidNum", "Numeric", "ExtendNumLet", "WSegSpace"]
wb = [0] * MAXCP
for a, b, fs in ranges(f"{UCD}/auxiliary/WordBreakProperty.txt"):
    v = WB_NAMES.index(fs[0])
    for c in range(a, b + 1):
        wb[c] = v

extpict = set()
for a, b, fs in ranges(f"{UCD}/emoji/emoji-data.txt"):
    if fs[0] == "Extended_Pictographic":
        extpict.update(range(a, b + 1))

SCRIPT_NONE, SCRIPT_HAN, SCRIPT_HIRAGANA, SCRIPT_KATAKANA, SCRIPT_HANGUL, SCRIPT_SEA = range(6)
script = [0] * MAXCP
for a, b, fs in ranges(f"{UCD}/Scripts.txt"):
    v = {"Han": SCRIPT_HAN, "Hiragana": SCRIPT_HIRAGANA, "Katakana": SCRIPT_KATAKANA,
         "Hangul": SCRIPT_HANGUL}.get(fs[0])
    if v:
        for c in range(a, b + 1):
            script[c] = v
for a, b, fs in ranges(f"{UCD}/LineBreak.txt"):
    if fs[0] == "SA":
        for c in range(a, b + 1):
            # Complex-context letters (Thai, Lao, Khmer, Myanmar); their marks stay Extend.
            if wb[c] == 0:
                script[c] = SCRIPT_SEA
# U+30FC KATAKANA-HIRAGANA PROLONGED SOUND MARK and friends are Script=Common but
# Word_Break=Katakana: they belong to Japanese runs.
for c in range(MAXCP):
    if wb[c] == WB_NAMES.index("Katakana") and script[c] == SCRIPT_NONE:
        script[c] = SCRIPT_KATAKANA


def removable_mark(c):
    if ccc[c] == 0:
        return False
    return (0x0300 <= c <= 0x036F or 0x1AB0 <= c <= 0x1AFF or 0x1DC0 <= c <= 0x1DFF
            or 0x20D0 <= c <= 0x20FF or 0xFE20 <= c <= 0xFE2F)


def decompose(seq, compat):
    out = []
    for c in seq:
        d = decomp.get(c)
        if d and (compat or not d[0]):
            out.extend(decompose(d[1], compat))
        else:
            out.append(c)
    return out


def reorder(seq):
    """Canonical ordering: stable sort of each run of non-starters by combining class."""
    seq = list(seq)
    i = 0
    while i < len(seq):
        if ccc[seq[i]] == 0:
            i += 1
            continue
        j = i
        while j < len(seq) and ccc[seq[j]] != 0:
            j += 1
        seq[i:j] = sorted(seq[i:j], key=lambda c: ccc[c])
        i = j
    return seq


# Primary composites: canonical pairs not excluded from composition.
compose_pair = {}
for c, (compat, parts) in decomp.items():
    if not compat and len(parts) == 2 and c not in comp_exclusion:
        compose_pair[(parts[0], parts[1])] = c


def compose(seq):
    """Canonical composition (UAX #15) of a canonically ordered sequence."""
    out = []
    starter = None
    for c in seq:
        cc = ccc[c]
        if starter is not None:
            adjacent = starter == len(out) - 1
            last = ccc[out[-1]]
            if adjacent or (last != 0 and last < cc):
                p = compose_pair.get((out[starter], c))
                if p is not None:
                    out[starter] = p
                    continue
        if cc == 0:
            starter = len(out)
        out.append(c)
    return out


SPECIAL = {0x2019: [0x27], 0x02BC: [0x27], 0x0153: [0x6F, 0x65], 0x00E6: [0x61, 0x65]}


def fold_seq(c):
    seq = [c]
    for _ in range(6):
        nxt = []
        for x in decompose(seq, True):
            nxt.extend(casefold.get(x, [x]))
        nxt2 = []
        for x in decompose(nxt, True):
            nxt2.extend(SPECIAL.get(x, [x]))
        nxt2 = [x for x in nxt2 if x not in ignorable]
        if nxt2 == seq:
            break
        seq = nxt2
    return compose(reorder(seq))


def bare_seq(folded):
    d = reorder(decompose(folded, False))
    return compose([x for x in d if not removable_mark(x)])


def utf8(seq):
    return "".join(chr(x) for x in seq).encode("utf-8")


# --- per code point records ------------------------------------------------------------
pool = bytearray()
pool_index = {}


def intern(b):
    if b not in pool_index:
        pool_index[b] = len(pool)
        pool.extend(b)
    return pool_index[b]


FLAG_EXTPICT, FLAG_FOLD_ID, FLAG_BARE_ID, FLAG_COMPOSES = 1, 2, 4, 8
composing_marks = {m for (a, m) in compose_pair if ccc[m] != 0}
records = []
record_index = {}
cp_record = [0] * MAXCP
for c in range(MAXCP):
    if 0xD800 <= c <= 0xDFFF or c not in category and c not in ignorable:
        f, bseq = [c], [c]
    else:
        f = fold_seq(c)
        bseq = bare_seq(f)
    flags = (FLAG_EXTPICT if c in extpict else 0) | (FLAG_FOLD_ID if f == [c] else 0) | \
        (FLAG_BARE_ID if bseq == [c] else 0) | (FLAG_COMPOSES if c in composing_marks else 0)
    fo, fl = (0, 0) if f == [c] else (intern(utf8(f)), len(utf8(f)))
    bo, bl = (0, 0) if bseq == [c] else (intern(utf8(bseq)), len(utf8(bseq)))
    rec = (wb[c], script[c], flags, fl, bl, fo, bo)
    if rec not in record_index:
        record_index[rec] = len(records)
        records.append(rec)
    cp_record[c] = record_index[rec]

assert len(records) < 65536
# Self-checks: folding is idempotent and bare(fold(c)) == bare(c).
for c in (0xC9, 0x1E9E, 0xFB01, 0xFF21, 0x3C2, 0x3AC, 0x419, 0x304C, 0xAC00):
    f = fold_seq(c)
    assert [y for x in f for y in fold_seq(x)] == f, hex(c)

# bare is a function of fold: stripping the folded text code point by code point gives
# the same as stripping the original (the analyzers rely on it).
bare_mismatch = 0
for c in range(MAXCP):
    if c in category and not 0xD800 <= c <= 0xDFFF:
        f = fold_seq(c)
        if [y for x in f for y in bare_seq(fold_seq(x))] != bare_seq(f):
            bare_mismatch += 1
print(f"bare(fold(c)) != bare(c) for {bare_mismatch} code points", file=sys.stderr)

BLOCK = 128
blocks = []
block_index = {}
stage1 = []
for start in range(0, MAXCP, BLOCK):
    blk = tuple(cp_record[start:start + BLOCK])
    if blk not in block_index:
        block_index[blk] = len(blocks)
        blocks.append(blk)
    stage1.append(block_index[blk])
assert len(blocks) * BLOCK < 65536 * BLOCK

compositions = sorted((a << 21 | m, p) for (a, m), p in compose_pair.items() if m in composing_marks)


def wrap(items, per_line=16):
    items = list(items)
    return "\n".join("    " + ", ".join(items[i:i + per_line]) + "," for i in range(0, len(items), per_line))


def c_string(b):
    out = []
    for i in range(0, len(b), 64):
        chunk = b[i:i + 64]
        out.append('    "' + "".join(f"\\x{x:02x}" for x in chunk) + '"')
    return "\n".join(out)


w = sys.stdout.write
w(f"""// ragpp: Unicode property tables for text analysis. GENERATED by
// scripts/gen_unicode_tables.py from the Unicode Character Database ({version};
// {head}). Do not edit: regenerate.
#pragma once

#include <cstdint>

namespace ragpp::text::detail {{

inline constexpr const char* unicode_tables_version = "{version}";

/// Word_Break property values (UAX #29), in the order the tokenizer uses.
enum class WordBreak : std::uint8_t {{
    {", ".join(WB_NAMES)}
}};

/// Script classes that form their own word tokens.
enum class TokenScript : std::uint8_t {{ none, han, hiragana, katakana, hangul, south_east_asian }};

inline constexpr std::uint8_t flag_extended_pictographic = {FLAG_EXTPICT};
inline constexpr std::uint8_t flag_fold_identity = {FLAG_FOLD_ID};
inline constexpr std::uint8_t flag_bare_identity = {FLAG_BARE_ID};
inline constexpr std::uint8_t flag_composes = {FLAG_COMPOSES};  // second half of a canonical pair

struct CharRecord {{
    std::uint8_t word_break;
    std::uint8_t script;
    std::uint8_t flags;
    std::uint8_t fold_length;   // bytes of `fold` in char_pool (when not identity)
    std::uint8_t bare_length;   // bytes of `bare` in char_pool (when not identity)
    std::uint32_t fold_offset;
    std::uint32_t bare_offset;
}};

inline constexpr unsigned char_block_shift = {BLOCK.bit_length() - 1};

inline constexpr CharRecord char_records[{len(records)}] = {{
{wrap(("{%d, %d, %d, %d, %d, %d, %d}" % r for r in records), 6)}
}};

inline constexpr std::uint16_t char_stage1[{len(stage1)}] = {{
{wrap(map(str, stage1), 24)}
}};

inline constexpr std::uint16_t char_stage2[{len(blocks) * BLOCK}] = {{
{wrap((str(x) for blk in blocks for x in blk), 24)}
}};

inline constexpr char char_pool[{len(pool) + 1}] =
{c_string(bytes(pool))};

/// Canonical compositions of a base with a combining mark: key (base << 21 | mark),
/// sorted, and the composed code point.
inline constexpr std::uint64_t composition_keys[{len(compositions)}] = {{
{wrap((f"0x{k:x}" for k, _ in compositions), 8)}
}};
inline constexpr std::uint32_t composition_values[{len(compositions)}] = {{
{wrap((f"0x{v:x}" for _, v in compositions), 12)}
}};

}}  // namespace ragpp::text::detail
""")
