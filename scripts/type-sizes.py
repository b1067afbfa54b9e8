#!/usr/bin/env python3
"""The size of every type in Sources, counted across its extensions: the lines of each top-level
`class`, `struct`, `enum`, `actor`, `protocol` or `extension` declaration (its doc comment
excluded), summed by type name. `make lint` fails on a type over the limit (issue 35: one job per
type), except the ones named in EXCEPTIONS with the reason.

    scripts/type-sizes.py [--limit N] [--top K]
"""
import argparse
import collections
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Tables that are long because the protocol is: one case per step, one route per endpoint.
EXCEPTIONS: dict[str, str] = {}
# The types whose state has one owner per domain (issue 47): kept small so they stay so.
LIMITS = {"SesameCore/AccountStore": 250, "IdentityEmulator/IdentityState": 250, "IdentityEmulator/SignInController": 250}
DECLARATION = re.compile(
    r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|package|open|final|nonisolated|indirect)\s+)*"
    r"(class|struct|enum|actor|protocol|extension)\s+([A-Za-z_][A-Za-z0-9_.]*)")


def code_only(text):
    """The text with comments and string literals blanked (lines kept), so braces count."""
    out = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith('"""', i):
            end = text.find('"""', i + 3)
            end = n if end < 0 else end + 3
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def sizes():
    totals = collections.Counter()
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        module = path.relative_to(ROOT / "Sources").parts[0]
        code = code_only(path.read_text(encoding="utf-8")).split("\n")
        depth = 0
        start = None
        name = None
        for number, line in enumerate(code):
            if depth == 0 and start is None:
                match = DECLARATION.match(line.strip())
                if match and "{" in line:
                    start, name = number, match.group(2).split(".")[0]
            depth += line.count("{") - line.count("}")
            if start is not None and depth == 0:
                totals[f"{module}/{name}"] += number - start + 1
                start = None
    return totals


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=350)
    parser.add_argument("--top", type=int, default=0)
    arguments = parser.parse_args()
    totals = sizes()
    if arguments.top:
        for name, lines in totals.most_common(arguments.top):
            print(f"{lines:5d}  {name}")
        return 0
    failed = False
    for name, lines in totals.most_common():
        limit = LIMITS.get(name, arguments.limit)
        if lines > limit and name not in EXCEPTIONS:
            print(f"{name}: {lines} lines across its extensions (at most {limit}): split it by job")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
