#!/usr/bin/env python3
"""Docs are tests: run every ```sh block of the README and the guides, as a user would.

Each Markdown file's `sh` blocks run in order, from the root of a fresh copy of the repository
(the files git tracks, as they are in the working tree), with `ferry` on the PATH (the built
binary, `.build/debug/ferry` unless FERRY is set). `swift run ferry …` runs that same binary, and
`shop-ferry` is the custom-policy sample's binary when it was built. A block fails the run when a
command in it exits non-zero (`set -euo pipefail`).

Annotations, on the line just before a fence:
  <!-- doc-test: skip (why) -->       the block is not run (the reason is printed)
  <!-- doc-test: exit N -->           the sh block's last command must exit with N (documented codes)
  <!-- doc-test: output -->           a ``` block that must match the standard output of the sh
                                      block before it; `…` in an expected line matches any text,
                                      and durations and rates are ignored.
  <!-- doc-test: swift FILE -->       a ```swift block whose lines (indentation aside) must stand,
                                      in order and together, in FILE: a test that compiles and runs
                                      the example (an `import` line of the block may be left out).
`swift build` and `swift test` commands are not run here (CI runs them itself).

Usage: scripts/doc_tests.py [FILE.md …]     (default: README.md, docs/*.md, pipelines/README.md,
                                             samples/*/README.md)
Prints one line per block and ends with 'N passed, N failed'; exits 1 when a block failed.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
ANNOTATION = re.compile(r"<!--\s*doc-test:\s*(skip|output|exit|swift)\b\s*(.*?)\s*-->")


def blocks(path):
    """(kind, language, annotation, reason, text, line) for each fenced block of a Markdown file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    result, index = [], 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        language, start = match.group(2), index
        annotation, reason = None, ""
        previous = lines[index - 1] if index > 0 else ""
        found = ANNOTATION.search(previous)
        if found:
            annotation, reason = found.group(1), found.group(2).strip("() —-")
        body = []
        index += 1
        while index < len(lines) and not re.match(r"^\s*```\s*$", lines[index]):
            body.append(lines[index])
            index += 1
        result.append((language, annotation, reason, "\n".join(body), start + 1))
        index += 1
    return result


def copy_repository(destination):
    """Copies the files git tracks (as they are in the working tree) into `destination`."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    for name in files.decode().split("\0"):
        if not name or not os.path.exists(os.path.join(ROOT, name)):
            continue
        target = os.path.join(destination, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, name), target, follow_symlinks=False)


def tools(folder):
    """A folder of wrappers: `ferry`, `shop-ferry` and `swift` (run/build/test as above)."""
    ferry = os.environ.get("FERRY") or os.path.join(ROOT, ".build/debug/ferry")
    if not os.access(ferry, os.X_OK):
        sys.exit(f"doc_tests: no ferry binary at {ferry}; run `swift build` first (or set FERRY)")
    shop = os.path.join(ROOT, "samples/custom-policy/.build/debug/shop-ferry")
    os.makedirs(folder, exist_ok=True)
    scripts = {
        "ferry": f'#!/bin/sh\nexec "{ferry}" "$@"\n',
        "swift": (
            "#!/bin/sh\n"
            'case "$1" in\n'
            f'  run) shift; [ "$1" = ferry ] && shift; exec "{ferry}" "$@";;\n'
            '  build|test) echo "(doc_tests: \\`swift $1\\` is not run here)" >&2; exit 0;;\n'
            '  *) echo "doc_tests: swift $1 is not supported in docs" >&2; exit 2;;\n'
            "esac\n"
        ),
    }
    if os.access(shop, os.X_OK):
        scripts["shop-ferry"] = f'#!/bin/sh\nexec "{shop}" "$@"\n'
    for name, text in scripts.items():
        path = os.path.join(folder, name)
        with open(path, "w") as handle:
            handle.write(text)
        os.chmod(path, 0o755)
    return shop if os.access(shop, os.X_OK) else None


def normalize(text):
    """Output with durations, rates and paths of the scratch copy made comparable."""
    text = re.sub(r"\d[\d,.]*\s*(s|ms|rec/s|records/s|MiB)\b", "<n \\1>", text)
    return [line.rstrip() for line in text.strip("\n").split("\n")]


def matches(expected, actual):
    if len(expected) != len(actual):
        return False
    for want, got in zip(expected, actual):
        pattern = "^" + ".*".join(re.escape(part) for part in want.split("…")) + "$"
        if not re.match(pattern, got):
            return False
    return True


def compiled_example(text, test_file):
    """(True, "") when the example's lines stand together, in order, in test_file."""
    wanted = [line.strip() for line in text.split("\n") if line.strip() and not line.startswith("import ")]
    try:
        lines = [line.strip() for line in open(os.path.join(ROOT, test_file), encoding="utf-8")]
    except OSError as error:
        return False, f"cannot read {test_file}: {error}"
    lines = [line for line in lines if line]
    for start in range(len(lines) - len(wanted) + 1):
        if lines[start:start + len(wanted)] == wanted:
            return True, ""
    first_missing = next((line for line in wanted if line not in lines), wanted[0] if wanted else "")
    return False, f"the example is not the code {test_file} compiles (first line not found there: {first_missing!r})"


def run_file(path, bin_folder, shop):
    passed = failed = 0
    relative = os.path.relpath(path, ROOT)
    with tempfile.TemporaryDirectory(prefix="ferry-doc-tests-") as copy:
        copy_repository(copy)
        if shop:
            # The sample's binary, where the docs say it is.
            target = os.path.join(copy, "samples/custom-policy/.build/debug")
            os.makedirs(target, exist_ok=True)
            os.symlink(shop, os.path.join(target, "shop-ferry"))
        environment = dict(os.environ, PATH=bin_folder + os.pathsep + os.environ.get("PATH", ""), TERM="dumb")
        last_output = None
        for language, annotation, reason, text, line in blocks(path):
            where = f"{relative}:{line}"
            if annotation == "output":
                if last_output is None:
                    print(f"FAIL {where}: an output block with no sh block run before it")
                    failed += 1
                elif matches(normalize(text), normalize(last_output)):
                    print(f"ok   {where}: output as shown")
                    passed += 1
                else:
                    print(f"FAIL {where}: the output differs\n--- shown\n{text}\n--- actual\n{last_output}")
                    failed += 1
                continue
            if annotation == "swift":
                ok, why = compiled_example(text, reason)
                print(f"ok   {where}: compiled by {reason}" if ok else f"FAIL {where}: {why}")
                passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
                continue
            if language != "sh":
                continue
            if annotation == "skip":
                print(f"skip {where}: {reason or 'no reason given'}")
                continue
            expected_exit = int(reason) if annotation == "exit" else 0
            script = ("set -uo pipefail\n" if annotation == "exit" else "set -euo pipefail\n") + text + "\n"
            try:
                result = subprocess.run(
                    ["bash", "-c", script], cwd=copy, env=environment, capture_output=True, text=True, timeout=300)
            except subprocess.TimeoutExpired:
                print(f"FAIL {where}: did not finish within 300 s")
                failed += 1
                continue
            last_output = result.stdout
            if result.returncode == expected_exit:
                print(f"ok   {where}" + (f" (exit {expected_exit})" if expected_exit else ""))
                passed += 1
            else:
                print(f"FAIL {where}: exit {result.returncode}\n{text}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}")
                failed += 1
    return passed, failed


def main(arguments):
    files = arguments or (
        [os.path.join(ROOT, "README.md")]
        + sorted(glob.glob(os.path.join(ROOT, "docs/*.md")))
        + [os.path.join(ROOT, "pipelines/README.md")]
        + sorted(glob.glob(os.path.join(ROOT, "samples/*/README.md"))))
    with tempfile.TemporaryDirectory(prefix="ferry-doc-tools-") as bin_folder:
        shop = tools(bin_folder)
        passed = failed = 0
        for path in files:
            p, f = run_file(os.path.abspath(path), bin_folder, shop)
            passed, failed = passed + p, failed + f
    print(f"docs: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
