#!/usr/bin/env python3
"""The size limits of issue 36: no file under src/ longer than MAX_FILE_LINES
lines, no function definition longer than MAX_FUNCTION_LINES.

A function is found by a heuristic that fits the tree's clang-format style
(.clang-format): comments, string and character literals and preprocessor
lines are blanked, then every brace opened at namespace or class scope whose
header holds a parameter list is a function body; its length runs from the
first line of its header to its matching closing brace, so lambdas and local
classes inside count with it. Brace initialisers (`= {`, a constructor's
`member_{...}`) are not bodies.

Known offenders are listed in EXCEPTIONS (path or path:function, with the
length allowed): the debt of today, to be removed as it is paid. The check
fails on a new offender, on a listed one that grew, and on an exception that
no longer occurs (so the list only shrinks).

  check_sizes.py [--root DIR] [--list] [--plant-lines FILE:N] [--plant-function FILE:N] [--self-test]

--list prints the longest files and functions. --plant-lines / --plant-function
add N lines to a file, or a function of N lines to it, without touching the
tree, to show that the check fails on them; --self-test runs the function
finder on a snippet of the tricky cases.
"""
import argparse
import os
import re
import sys

MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 150
ROOTS = ["src"]
SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".c", ".inc", ".cl", ".cu")

# (path or path:function, lines allowed, why it is still here). Remove the
# line with the split.
EXCEPTIONS = []

BLANK_RE = re.compile(
    r"""//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.S)
TYPE_KEYWORD_RE = re.compile(r"^(?:typedef\s+)?(class|struct|union|enum)\b")
TEMPLATE_RE = re.compile(r"^template\s*<")
CTOR_INIT_RE = re.compile(r"\)\s*(?:noexcept\s*)?:(?!:)")
ACCESS_RE = re.compile(r"^(public|private|protected)\s*:$")
MACRO_CALL_RE = re.compile(r"^[A-Z][A-Z0-9_]*\s*\(.*\)$", re.S)


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by
    spaces (newlines kept, so line numbers hold)."""

    def spaces(m):
        return re.sub(r"[^\n]", " ", m.group(0))

    text = BLANK_RE.sub(spaces, text)
    out, continued = [], False
    for line in text.split("\n"):
        is_pp = continued or line.lstrip().startswith("#")
        continued = is_pp and line.rstrip().endswith("\\")
        out.append(" " * len(line) if is_pp else line)
    return "\n".join(out)


def strip_template(header):
    if not TEMPLATE_RE.match(header):
        return header
    depth, i = 0, header.index("<")
    for j in range(i, len(header)):
        if header[j] == "<":
            depth += 1
        elif header[j] == ">":
            depth -= 1
            if depth == 0:
                return header[j + 1:].lstrip()
    return header


def name_of(header):
    """The function's name: the identifier (with its qualification) before the
    first parameter list."""
    while True:  # drop attributes, whose parentheses come before the name's
        m = re.search(r"__attribute__\s*\(", header)
        if not m:
            break
        depth, j = 0, m.end() - 1
        for j in range(m.end() - 1, len(header)):
            depth += {"(": 1, ")": -1}.get(header[j], 0)
            if depth == 0:
                break
        header = header[:m.start()] + header[j + 1:]
    head = header.split("(", 1)[0].strip()
    m = re.search(r"((?:[A-Za-z_]\w*\s*::\s*)*~?[A-Za-z_]\w*(?:\s*(?:operator\s*\S+))?)\s*$", head)
    if m:
        return re.sub(r"\s+", "", m.group(1))
    return head.split()[-1] if head.split() else "?"


def functions(text):
    """(name, first line, last line) of every function definition, 1-based."""
    text = blank(text)
    line_of = []
    n = 1
    for ch in text:
        line_of.append(n)
        if ch == "\n":
            n += 1

    def match(i):
        depth = 0
        for j in range(i, len(text)):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    return j
        return len(text) - 1

    found = []

    def scan(lo, hi):
        """Scans one namespace or class body text[lo:hi]."""
        header_start = None
        parens = 0
        i = lo
        while i < hi:
            ch = text[i]
            if ch in "()":
                parens += 1 if ch == "(" else -1
                if header_start is None:
                    header_start = i
            elif ch in ";}":
                header_start, parens = None, 0
            elif ch == ":" and header_start is not None and ACCESS_RE.match(text[header_start:i + 1]):
                header_start = None  # `public:` is not part of what follows
            elif ch == "\n" and parens == 0 and header_start is not None and MACRO_CALL_RE.match(
                    text[header_start:i].strip()):
                header_start = None  # a macro invocation without a semicolon
            elif ch == "{" and parens > 0:
                i = match(i) + 1  # a brace inside a parameter list (a default argument `= {}`)
                continue
            elif ch == "{":
                header = text[header_start:i].strip() if header_start is not None else ""
                end = match(i)
                bare = strip_template(header)
                if re.match(r"^(?:inline\s+)?namespace\b", bare) or re.match(r"^extern\s*$", bare):
                    scan(i + 1, end)
                    header_start = None
                elif TYPE_KEYWORD_RE.match(bare) and "(" not in bare.split(":")[0]:
                    scan(i + 1, end)
                    header_start = None
                elif "(" in bare and not bare.endswith("=") and not bare.endswith(","):
                    if CTOR_INIT_RE.search(bare) and re.search(r"[\w>]$", bare) and not re.search(
                            r"\)\s*(?:const|noexcept|override|final)?$", bare):
                        # a member's brace initialiser in a constructor's init list
                        i = end + 1
                        continue
                    found.append((name_of(bare), line_of[header_start], line_of[end]))
                    header_start = None
                else:
                    header_start = None  # an initialiser or other data block
                i = end + 1
                continue
            elif header_start is None and not ch.isspace():
                header_start = i
            i += 1

    scan(0, len(text))
    return found


SELF_TEST = """\
namespace a {
extern "C" {
int c_api(int x) { return x; }
}
struct S : Base {
 public:
  S(int v) : v_{v}, w_(v) {
    v_ += 1;
  }
  int get(std::vector<int> d = {}) const {
    auto f = [&] { return "}"; };
    return v_;
  }
  int v_, w_;
};
DLRT_REGISTER(thing)
template <int N>
__attribute__((target("avx2"))) void S::run(
    int k) {
  const int table[] = {1, 2, '{'};
}
const int kData[] = {1, 2};
}  // namespace a
"""
SELF_TEST_EXPECTED = [("c_api", 3, 3), ("S", 7, 9), ("get", 10, 13), ("S::run", 17, 21)]


def self_test():
    got = functions(SELF_TEST)
    if got != SELF_TEST_EXPECTED:
        print(f"FAIL: self-test: functions found {got}, expected {SELF_TEST_EXPECTED}")
        return 1
    print("self-test ok")
    return 0


def source_files(root):
    for top in ROOTS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if n.endswith(SUFFIXES):
                    yield os.path.relpath(os.path.join(dirpath, n), root)


def measure(root, plant_lines=None, plant_function=None):
    """({path: lines}, [(path:function, lines)])."""
    extra_lines, extra_fn = {}, {}
    if plant_lines:
        f, n = plant_lines.rsplit(":", 1)
        extra_lines[f] = int(n)
    if plant_function:
        f, n = plant_function.rsplit(":", 1)
        extra_fn[f] = int(n)
    files, funcs = {}, []
    for f in sorted(set(source_files(root)) | set(extra_lines) | set(extra_fn)):
        path = os.path.join(root, f)
        text = open(path, errors="replace").read() if os.path.isfile(path) else ""
        if f in extra_lines:
            text += "\n" * extra_lines[f]
        if f in extra_fn:
            n = max(extra_fn[f], 2)
            text += "\nvoid planted_function() {\n" + "  ;\n" * (n - 2) + "}\n"
        files[f] = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        for name, a, b in functions(text):
            funcs.append((f"{f}:{name}", b - a + 1))
    return files, funcs


def check(root, **plant):
    allowed = {key: n for key, n, _ in EXCEPTIONS}
    seen = set()
    failures = []
    files, funcs = measure(root, **plant)
    offenders = [(f, n, MAX_FILE_LINES, "file") for f, n in files.items() if n > MAX_FILE_LINES]
    offenders += [(f, n, MAX_FUNCTION_LINES, "function") for f, n in funcs if n > MAX_FUNCTION_LINES]
    for key, n, limit, kind in offenders:
        if key in allowed:
            seen.add(key)
            if n > allowed[key]:
                failures.append(f"{kind} grew past its exception: {key}: {n} lines (listed at {allowed[key]}, "
                                f"limit {limit})")
            continue
        failures.append(f"{kind} over {limit} lines: {key}: {n} lines")
    stale = [key for key in allowed if key not in seen]
    return failures, stale, files, funcs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--list", action="store_true", help="print the 15 longest files and functions")
    ap.add_argument("--plant-lines", help="FILE:N, N more lines in FILE")
    ap.add_argument("--plant-function", help="FILE:N, a function of N lines appended to FILE")
    ap.add_argument("--self-test", action="store_true", help="check the function finder on a known snippet")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    root = os.path.abspath(args.root)
    failures, stale, files, funcs = check(root, plant_lines=args.plant_lines, plant_function=args.plant_function)
    if args.list:
        for f, n in sorted(files.items(), key=lambda x: -x[1])[:15]:
            print(f"file     {n:5} {f}")
        for f, n in sorted(funcs, key=lambda x: -x[1])[:15]:
            print(f"function {n:5} {f}")
    for f in failures:
        print(f"FAIL: {f}")
    for s in stale:
        print(f"FAIL: exception no longer occurs, remove it from EXCEPTIONS: {s}")
    if failures or stale:
        return 1
    print(f"sizes ok: {len(files)} files (limit {MAX_FILE_LINES} lines), {len(funcs)} functions "
          f"(limit {MAX_FUNCTION_LINES}), {len(EXCEPTIONS)} listed exceptions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
