#!/usr/bin/env python3
"""Lists every `public` (or `open`) declaration in Sources/ without a `///` doc comment right
above it (attributes such as `@inlinable` may sit in between), and exits 1 when there is one.

    scripts/public_docs.py            # from the repository root; CI runs it

Line-based, like the declarations it reads: one declaration per line, as STYLE.md writes them.
`public import` and `extension` lines are not declarations of their own.
"""
import os
import re
import sys

DECLARATION = re.compile(r'^(@\w+(\(.*\))?\s+)*(public|open)\s')


def undocumented(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    for number, line in enumerate(lines):
        text = line.strip()
        if not DECLARATION.match(text) or text.startswith('public import') or 'extension ' in text.split('{')[0]:
            continue
        above = number - 1
        while above >= 0 and lines[above].strip().startswith('@'):
            above -= 1
        previous = lines[above].strip() if above >= 0 else ''
        if not (previous.startswith('///') or previous.endswith('*/')):
            yield number + 1, text


def main():
    missing = []
    total = 0
    for root, _, files in os.walk('Sources'):
        for name in sorted(files):
            if not name.endswith('.swift'):
                continue
            path = os.path.join(root, name)
            for number, text in undocumented(path):
                missing.append(f'{path}:{number}: undocumented public declaration: {text[:100]}')
    for line in missing:
        print(line)
    if missing:
        print(f'public_docs: {len(missing)} public declarations have no /// summary', file=sys.stderr)
        return 1
    print('public_docs: every public declaration has a /// summary')
    return 0


if __name__ == '__main__':
    sys.exit(main())
