#!/usr/bin/env python3
"""Generates include/ragpp/answer/detail/fold_tables.hpp: the code points that
neutralize() (answer/neutralize.hpp) folds before it looks for source markers and
delimiters, as sorted ranges.

Usage: scripts/gen_evidence_fold_tables.py [UCD_DIR [CONFUSABLES_JSON]] > include/ragpp/answer/detail/fold_tables.hpp
UCD_DIR defaults to /usr/share/unicode (Debian's unicode-data). CONFUSABLES_JSON defaults
to Debian's python3-confusable-homoglyphs copy of Unicode's confusables data
(/usr/lib/python3/dist-packages/confusable_homoglyphs/confusables.json): Debian ships
no confusables.txt, and this is the one packaged copy of it.

Kinds:
  - ignorable: Default_Ignorable_Code_Point (DerivedCoreProperties.txt);
  - space: general category Zs (UnicodeData.txt; every confusable of U+0020 is one);
  - digit: a decimal digit value (UnicodeData.txt field 6: every Nd) or a digit value
    (field 7: superscripts, subscripts, circled, parenthesised digits), value stored;
  - square_open/square_close and angle_open/angle_close, angles with a weight (how many
    ASCII brackets they read as: 2 for "double" and "much", 3 for "very much"):
      * names (UnicodeData.txt): LEFT/RIGHT ... SQUARE, LENTICULAR or TORTOISE SHELL
        BRACKET; LEFT/RIGHT(-POINTING) ... ANGLE BRACKET or ANGLE QUOTATION MARK (not the
        vertical presentation forms, which read as ^); LESS-THAN / GREATER-THAN (SIGN
        or BRACKET) at the end of the name, without OR, NOR, ABOVE, BESIDE, EQUAL ...
        (relations such as <= are not brackets); LEFT/RIGHT ARROWHEAD at the end;
      * NamesList.txt cross-references to U+003C, U+003E, U+005B, U+005D from a
        punctuation or symbol (not a relation with EQUAL);
      * the confusables of "<", ">", "[", "]" (Canadian syllabics PA and PO, modifier
        arrowheads, runic KAUNA ...);
      * any code point whose full decomposition (canonical or compatibility), without
        combining marks and default ignorables, is one of the above (fullwidth, small
        and vertical forms, U+226E "<" + U+0338; not the vertical forms of angles).
Combining marks are not in this table: neutralize() takes them from the grapheme
table (detail/grapheme_tables.hpp: Extend, ZWJ, SpacingMark).
"""
import json
import os
import re
import sys

UCD = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode"
CONF = sys.argv[2] if len(sys.argv) > 2 else "/usr/lib/python3/dist-packages/confusable_homoglyphs/confusables.json"
if not os.path.exists(CONF):
    sys.exit(f"{CONF}: not found (apt install python3-confusable-homoglyphs, or pass its path)")

IGNORABLE, SPACE, SQUARE_OPEN, SQUARE_CLOSE, ANGLE_OPEN, ANGLE_CLOSE, DIGIT = range(1, 8)
KIND_NAMES = ["none", "ignorable", "space", "square_open", "square_close", "angle_open", "angle_close", "digit"]

name, category, decomp, digit = {}, {}, {}, {}
with open(f"{UCD}/UnicodeData.txt", encoding="utf-8") as f:
    for line in f:
        fs = line.rstrip("\n").split(";")
        cp = int(fs[0], 16)
        name[cp], category[cp] = fs[1], fs[2]
        if fs[5]:
            parts = fs[5].split()
            if parts[0].startswith("<"):
                parts = parts[1:]
            decomp[cp] = [int(x, 16) for x in parts]
        if fs[6]:
            digit[cp] = int(fs[6])
        elif fs[7]:
            digit[cp] = int(fs[7])

version = "unknown"
with open(f"{UCD}/ReadMe.txt", encoding="utf-8") as f:
    for line in f:
        m = re.search(r"Version (\d+\.\d+\.\d+) of the Unicode Standard", line)
        if m:
            version = "Unicode " + m.group(1)
            break

ignorable = set()
with open(f"{UCD}/DerivedCoreProperties.txt", encoding="utf-8") as f:
    for line in f:
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        r, prop = [x.strip() for x in line.split(";")]
        if prop != "Default_Ignorable_Code_Point":
            continue
        a, _, b = r.partition("..")
        ignorable.update(range(int(a, 16), int(b or a, 16) + 1))

kind = {}  # cp -> (kind, value)
for c in ignorable:
    kind[c] = (IGNORABLE, 0)
for c, g in category.items():
    if g == "Zs":
        kind[c] = (SPACE, 0)
for c, v in digit.items():
    kind.setdefault(c, (DIGIT, v))


def weight(n):
    if "VERY MUCH" in n or "TRIPLE" in n:
        return 3
    if "DOUBLE" in n or "MUCH" in n:
        return 2
    return 1


def bracket_by_name(c):
    n = name[c]
    if category[c][0] not in "PS" or "VERTICAL" in n and "ANGLE" in n:
        return None
    side = "LEFT" if re.search(r"\bLEFT\b|LEFT-POINTING", n) else "RIGHT" if re.search(r"\bRIGHT\b|RIGHT-POINTING", n) else None
    if side and re.search(r"\b(SQUARE|LENTICULAR|TORTOISE SHELL) BRACKET\b", n) and "EXTENSION" not in n:
        return (SQUARE_OPEN if side == "LEFT" else SQUARE_CLOSE, 0)
    m = re.search(r"\b(LESS|GREATER)-THAN( SIGN| BRACKET)?$", n)
    if m and not re.search(r"\b(OR|NOR|ABOVE|BESIDE|OVERLAPPING|EQUAL|ARROW)\b|(LESS.*GREATER|GREATER.*LESS)", n):
        return (ANGLE_OPEN if m.group(1) == "LESS" else ANGLE_CLOSE, weight(n))
    if side and re.search(r"\bANGLE (BRACKET|QUOTATION MARK)\b|(^| )(LEFT|RIGHT) ARROWHEAD$", n):
        return (ANGLE_OPEN if side == "LEFT" else ANGLE_CLOSE, weight(n))
    return None


bracket = {}
for c in name:
    b = bracket_by_name(c)
    if b:
        bracket[c] = b
ascii_kind = {0x3C: (ANGLE_OPEN, 1), 0x3E: (ANGLE_CLOSE, 1), 0x5B: (SQUARE_OPEN, 0), 0x5D: (SQUARE_CLOSE, 0)}
bracket.update(ascii_kind)

# NamesList.txt: "x (less-than sign - 003C)" under a character entry.
with open(f"{UCD}/NamesList.txt", encoding="utf-8") as f:
    cur = None
    for line in f:
        m = re.match(r"^([0-9A-F]{4,6})\t", line)
        if m:
            cur = int(m.group(1), 16)
            continue
        m = re.match(r"^\tx \(.* - (003C|003E|005B|005D)\)", line)
        if m and cur is not None and category.get(cur, "C")[0] in "PS" and "EQUAL" not in name[cur]:
            bracket.setdefault(cur, ascii_kind[int(m.group(1), 16)])

# Unicode's confusables of the four ASCII brackets (letters included: ᐸ is Lo).
with open(CONF, encoding="utf-8") as f:
    confusables = json.load(f)
for proto, k in (("<", ascii_kind[0x3C]), (">", ascii_kind[0x3E]), ("[", ascii_kind[0x5B]), ("]", ascii_kind[0x5D])):
    for e in confusables.get(proto, []):
        if len(e["c"]) == 1:
            bracket.setdefault(ord(e["c"]), k)


def full(c):
    out = []
    for d in decomp.get(c, [c]):
        out.extend(full(d) if d != c and d in decomp else [d])
    return out


for c in decomp:
    if c in bracket or c in kind:
        continue
    parts = [d for d in full(c) if not category.get(d, "Cn").startswith("M") and d not in ignorable]
    if len(parts) == 1 and parts[0] in bracket:
        if "VERTICAL" not in name[c] or bracket[parts[0]][0] in (SQUARE_OPEN, SQUARE_CLOSE):
            bracket[c] = bracket[parts[0]]
    elif len(parts) == 1 and parts[0] in digit:
        kind[c] = (DIGIT, digit[parts[0]])
for c, b in bracket.items():
    kind.setdefault(c, b)

# Ranges: runs of one kind and value; digits also as runs whose value goes up by one.
out = []
for c in sorted(kind):
    k, v = kind[c]
    if out:
        a, b, pk, pv = out[-1]
        if b == c - 1 and pk == k and (pv == v if k != DIGIT else pv + (c - a) == v):
            out[-1][1] = c
            continue
    out.append([c, c, k, v])

print("// ragpp detail: the code points neutralize() folds before its marker and delimiter checks,")
print("// as sorted ranges. GENERATED by scripts/gen_evidence_fold_tables.py from the Unicode")
print(f"// Character Database ({version}: UnicodeData, DerivedCoreProperties, NamesList) and")
print("// Unicode's confusables data (Debian python3-confusable-homoglyphs). Do not edit: regenerate.")
print("#pragma once\n\n#include <cstdint>\n\nnamespace ragpp::detail::fold_tables {\n")
print("enum Kind : std::uint8_t { " + ", ".join(KIND_NAMES) + " };\n")
print("/// value: a digit's value at `first` (it goes up by one along the range), an angle")
print("/// bracket's weight (how many ASCII brackets it reads as); 0 otherwise.")
print("struct Range {\n    char32_t first, last;\n    Kind kind;\n    std::uint8_t value;\n};\n")
print(f"inline constexpr Range ranges[{len(out)}] = {{")
line = "   "
for a, b, k, v in out:
    item = f" {{0x{a:X}, 0x{b:X}, {KIND_NAMES[k]}, {v}}},"
    if len(line) + len(item) > 110:
        print(line)
        line = "   "
    line += item
print(line)
print("};\n\n}  // namespace ragpp::detail::fold_tables")
