"""Read ``wgcompute.h`` as cffi's ``cdef`` can take it.

The binding is generated from the header at import time, so a function or
constant added to the header is reachable from Python without touching this
package. The header is plain C with a few preprocessor conditionals (the
C++/C23 enum underlying types); they are resolved here for a C99 compiler,
which is what cffi's ABI mode models.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List

# What the conditionals may test, as a C99 compiler defines them.
_PREDEFINED = {"__STDC_VERSION__": 199901}


@dataclass(frozen=True)
class Header:
    """The parts of the header the binding needs."""

    cdef: str
    functions: List[str]
    constants: Dict[str, int]


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _eval_condition(expr: str, defined: Dict[str, object]) -> bool:
    """Evaluate a ``#if`` expression of defined(), ||, &&, ! and comparisons."""
    expr = re.sub(r"defined\s*\(\s*(\w+)\s*\)", lambda m: "1" if m.group(1) in defined else "0", expr)
    expr = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", expr)
    expr = expr.replace("||", " or ").replace("&&", " and ")
    expr = re.sub(r"!(?!=)", " not ", expr)

    def name(m: "re.Match[str]") -> str:
        word = m.group(0)
        if word in ("or", "and", "not"):
            return word
        value = defined.get(word, 0)
        return str(value if isinstance(value, int) else 1)

    expr = re.sub(r"\b[A-Za-z_]\w*\b", name, expr)
    if not re.fullmatch(r"[\d\s()<>=!orandt]*", expr):
        raise ValueError(f"unsupported #if expression: {expr!r}")
    return bool(eval(expr, {"__builtins__": {}}, {}))  # digits, comparisons and boolean words only


def _preprocess(text: str) -> str:
    """Resolve conditionals; keep integer #defines; drop other directives."""
    defined: Dict[str, object] = dict(_PREDEFINED)
    out: List[str] = []
    # Each entry: (this branch active, some branch of the group taken, parent active).
    stack: List[List[bool]] = []
    active = True
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            if active:
                out.append(line)
            continue
        directive, _, rest = stripped[1:].strip().partition(" ")
        rest = rest.strip()
        if directive in ("if", "ifdef", "ifndef"):
            if directive == "ifdef":
                cond = rest in defined
            elif directive == "ifndef":
                cond = rest not in defined
            else:
                cond = _eval_condition(rest, defined)
            taken = active and cond
            stack.append([taken, taken, active])
            active = taken
        elif directive == "elif":
            frame = stack[-1]
            taken = frame[2] and not frame[1] and _eval_condition(rest, defined)
            frame[0] = taken
            frame[1] = frame[1] or taken
            active = taken
        elif directive == "else":
            frame = stack[-1]
            taken = frame[2] and not frame[1]
            frame[0] = taken
            frame[1] = True
            active = taken
        elif directive == "endif":
            frame = stack.pop()
            active = frame[2]
        elif directive == "define" and active:
            name, _, value = rest.partition(" ")
            value = value.strip()
            defined[name] = int(value, 0) if re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", value) else value
            if isinstance(defined[name], int):
                out.append(f"#define {name} {value}")
        # #include and #undef carry nothing cffi needs (it knows <stdint.h>).
    return "\n".join(out)


def parse(path: Path) -> Header:
    """Parse the header at ``path``."""
    text = _preprocess(_strip_comments(path.read_text(encoding="utf-8")))
    functions = re.findall(r"\b(wgc_\w+)\s*\(", text)
    constants: Dict[str, int] = {}
    for name, value in re.findall(r"^#define (WGC_\w+) (\S+)$", text, flags=re.M):
        constants[name] = int(value, 0)
    for body in re.findall(r"\benum\s+\w+\s*\{(.*?)\}", text, flags=re.S):
        for name, value in re.findall(r"\b(WGC_\w+)\s*=\s*(-?\w+)", body):
            constants[name] = int(value, 0)
    return Header(cdef=text, functions=list(dict.fromkeys(functions)), constants=constants)
