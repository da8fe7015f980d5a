#!/usr/bin/env python3
"""Lists the functions longer than a limit in Rust sources, longest first.

Usage: scripts/long-fns.py [--limit N] [DIR ...]   (default: 100, crates/core/src)

A function's length is the lines from its `fn` line to its closing brace.
Functions in `#[cfg(test)]` modules and `#[test]` functions are not counted.
Comments, strings and character literals are blanked before braces are
counted. The core crate's test `function_length` applies the same rule.
"""

import argparse
import os
import re
import sys

TOKEN = re.compile(
    r'//[^\n]*'                       # line comment
    r'|/\*.*?\*/'                     # block comment (not nested)
    r'|b?r(#*)"(?:.|\n)*?"\1'         # raw string
    r'|b?"(?:\\.|[^"\\])*"'           # string
    r"|b?'(?:\\.|[^'\\\n])'"          # character
    r"|'[A-Za-z_][A-Za-z0-9_]*"      # lifetime or label
    , re.S)

FN = re.compile(r'^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+(\w+)')


def blank(text):
    """The text with comments, strings and chars replaced by spaces (newlines kept)."""
    def keep_lines(m):
        s = m.group(0)
        if s.startswith("'") and not s.endswith("'"):
            return s  # a lifetime
        return re.sub(r'[^\n]', ' ', s)
    return TOKEN.sub(keep_lines, text)


def functions(text):
    """(name, first line, length) of each non-test function in the text."""
    lines = blank(text).split('\n')
    out = []
    skip_until = -1  # inside a test module or test function, up to this line
    i = 0
    while i < len(lines):
        line = lines[i]
        attr_test = False
        j = i - 1
        while j >= 0 and lines[j].strip().startswith('#['):
            if lines[j].strip() in ('#[cfg(test)]', '#[test]'):
                attr_test = True
            j -= 1
        is_mod = re.match(r'^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{', line)
        m = FN.match(line)
        if (m or is_mod) and i > skip_until:
            end = close_of(lines, i)
            if end is None:
                i += 1
                continue
            if attr_test:
                skip_until = end
            elif m:
                out.append((m.group(1), i + 1, end - i + 1))
        i += 1
    return out


def close_of(lines, start):
    """The line of the brace closing the first block opened at or after `start`;
    None for a declaration without a body."""
    depth = 0
    opened = False
    for k in range(start, len(lines)):
        for ch in lines[k]:
            if ch == '{':
                depth += 1
                opened = True
            elif ch == '}':
                depth -= 1
                if opened and depth == 0:
                    return k
            elif ch == ';' and not opened and depth == 0:
                return None
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--limit', type=int, default=100)
    ap.add_argument('dirs', nargs='*', default=['crates/core/src'])
    args = ap.parse_args()
    found = []
    for d in args.dirs:
        for root, _, files in os.walk(d):
            for f in files:
                if f.endswith('.rs'):
                    path = os.path.join(root, f)
                    with open(path, encoding='utf-8') as fh:
                        for name, line, length in functions(fh.read()):
                            if length > args.limit:
                                found.append((length, path, line, name))
    for length, path, line, name in sorted(found, reverse=True):
        print(f'{length:5} {path}:{line} {name}')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
