#!/usr/bin/env python3
"""Checks every relative link of README.md, CHANGELOG.md and docs/*.md: the file exists and,
for a link with #anchor, the target page has a heading whose GitHub anchor is that name.
A path to a .md file written in backquotes (`docs/cli.md`) must exist too, in the
repository, relative to the page or to the repository's root.
Prints each dangling link as FILE:LINE: LINK (reason); exit status 1 when there is one.

    python3 scripts/check-doc-links.py
"""
import glob
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path):
    out, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        if fence or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
        base, n = slug, 1
        while slug in out:
            slug, n = f"{base}-{n}", n + 1
        out.add(slug)
    return out


pages = [os.path.join(ROOT, p) for p in ("README.md", "CHANGELOG.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
bad = 0
for page in filter(os.path.exists, pages):
    fence = False
    for n, line in enumerate(open(page, encoding="utf-8"), 1):
        if line.startswith("```"):
            fence = not fence
        if fence:
            continue
        rel = os.path.relpath(page, ROOT)
        for quoted in re.findall(r"`([\w./-]+/[\w.-]+\.md)`", line):
            found = [os.path.normpath(os.path.join(d, quoted)) for d in (os.path.dirname(page), ROOT)]
            if not any(os.path.exists(f) and not os.path.relpath(f, ROOT).startswith("..") for f in found):
                print(f"{rel}:{n}: `{quoted}` (no such file in the repository)")
                bad += 1
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            file = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(file):
                print(f"{rel}:{n}: {target} (no such file)")
                bad += 1
            elif anchor and file.endswith(".md") and anchor not in anchors(file):
                print(f"{rel}:{n}: {target} (no heading with this anchor)")
                bad += 1
print(f"{bad} dangling link(s)" if bad else "every relative link resolves", file=sys.stderr)
sys.exit(1 if bad else 0)
