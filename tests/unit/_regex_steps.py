"""Count the work of a regular expression: a backtracking matcher over ``re``'s own parse tree.

It tries alternatives in the order CPython's engine does (greedy repeats longest first, lazy ones
shortest first, branches left to right, a search from each start) without the engine's shortcuts
(literal prefixes, first-character sets), so its step count is an upper bound of the engine's
backtracking and grows with the input as the engine's does: linearly for a pattern in which one
input character can be taken in one way, quadratically for ``\\s*X?\\s*`` against a run of spaces.
A test asserts the ratio of steps between inputs of size n and 2n, never seconds.
Only the constructs the scanners use are supported (no lookarounds, no flags but the default).
"""
from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

try:
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P  # type: ignore[attr-defined]
except ImportError:  # Python 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

Cont = Callable[[int], bool]


class _Matcher:
    def __init__(self, text: str) -> None:
        self.t = text
        self.n = len(text)
        self.steps = 0
        self.groups: dict[int, tuple[int, int]] = {}

    # a one-character item (or None when the item is wider)
    def one(self, op: Any, av: Any) -> Callable[[str], bool] | None:
        if op is C.LITERAL:
            return lambda c: ord(c) == av
        if op is C.NOT_LITERAL:
            return lambda c: ord(c) != av
        if op is C.ANY:
            return lambda c: c != "\n"
        if op is C.IN:
            return self.charset(av)
        return None

    def charset(self, items: list[tuple[Any, Any]]) -> Callable[[str], bool]:
        negate = bool(items) and items[0][0] is C.NEGATE
        tests: list[Callable[[str], bool]] = []
        for op, av in items[1:] if negate else items:
            if op is C.LITERAL:
                tests.append(lambda c, v=av: ord(c) == v)
            elif op is C.RANGE:
                tests.append(lambda c, lo=av[0], hi=av[1]: lo <= ord(c) <= hi)
            elif op is C.CATEGORY:
                tests.append(_CATEGORY[str(av)])
            else:
                raise NotImplementedError(op)
        return lambda c: any(f(c) for f in tests) != negate

    def seq(self, items: list[tuple[Any, Any]], i: int, pos: int, k: Cont) -> bool:
        self.steps += 1
        if i == len(items):
            return k(pos)
        op, av = items[i]

        def nxt(p: int) -> bool:
            return self.seq(items, i + 1, p, k)

        single = self.one(op, av)
        if single is not None:
            return pos < self.n and single(self.t[pos]) and nxt(pos + 1)
        if op is C.SUBPATTERN:
            gid, sub = av[0], av[-1]

            def close(q: int) -> bool:
                if gid is None:
                    return nxt(q)
                old = self.groups.get(gid)
                self.groups[gid] = (pos, q)
                if nxt(q):
                    return True
                if old is None:
                    del self.groups[gid]
                else:
                    self.groups[gid] = old
                return False

            return self.seq(list(sub), 0, pos, close)
        if op is C.BRANCH:
            return any(self.seq(list(alt), 0, pos, nxt) for alt in av[1])
        if op is C.AT:
            ok = {"AT_BEGINNING": pos == 0, "AT_BEGINNING_STRING": pos == 0, "AT_END_STRING": pos == self.n,
                  "AT_END": pos == self.n or (pos == self.n - 1 and self.t[pos] == "\n")}[str(av)]
            return ok and nxt(pos)
        if op is C.GROUPREF:
            a, b = self.groups[av]
            s = self.t[a:b]
            return self.t.startswith(s, pos) and nxt(pos + len(s))
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            return self.repeat(op is C.MAX_REPEAT, av, pos, nxt)
        raise NotImplementedError(op)

    def repeat(self, greedy: bool, av: Any, pos: int, nxt: Cont) -> bool:
        lo, hi, sub = av
        items = list(sub)
        if len(items) == 1 and (single := self.one(*items[0])) is not None:
            run = 0
            while pos + run < self.n and run < hi and single(self.t[pos + run]):
                run += 1
                self.steps += 1
            counts = range(run, lo - 1, -1) if greedy else range(lo, run + 1)
            for c in counts:
                self.steps += 1
                if nxt(pos + c):
                    return True
            return False

        def more(count: int, p: int) -> bool:
            def again(q: int) -> bool:
                return q != p and more(count + 1, q)  # (an empty iteration ends the repeat)

            can_more = count < hi
            if count < lo:
                return self.seq(items, 0, p, again)
            if greedy:
                return (can_more and self.seq(items, 0, p, again)) or nxt(p)
            return nxt(p) or (can_more and self.seq(items, 0, p, again))

        return more(0, pos)


_CATEGORY: dict[str, Callable[[str], bool]] = {
    "CATEGORY_SPACE": str.isspace,
    "CATEGORY_NOT_SPACE": lambda c: not c.isspace(),
    "CATEGORY_DIGIT": str.isdecimal,
    "CATEGORY_NOT_DIGIT": lambda c: not c.isdecimal(),
    "CATEGORY_WORD": lambda c: c.isalnum() or c == "_",
    "CATEGORY_NOT_WORD": lambda c: not (c.isalnum() or c == "_"),
}


def steps(pattern: re.Pattern[str], text: str, mode: str) -> int:
    """Steps the matcher takes for ``pattern.<mode>(text)``; mode: match, fullmatch, search,
    finditer. Its answer is checked against ``re``'s own."""
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 20_000))
    try:
        items = list(P.parse(pattern.pattern, pattern.flags & ~re.UNICODE))
        m = _Matcher(text)
        found: list[tuple[int, int]] = []

        def at(start: int, full: bool) -> int | None:
            end: list[int] = []

            def done(q: int) -> bool:
                if full and q != m.n:
                    return False
                end.append(q)
                return True

            m.groups = {}
            return end[0] if m.seq(items, 0, start, done) else None

        if mode in ("match", "fullmatch"):
            e = at(0, mode == "fullmatch")
            if e is not None:
                found.append((0, e))
        else:
            pos = 0
            while pos <= m.n:
                e = None
                for start in range(pos, m.n + 1):
                    e = at(start, False)
                    if e is not None:
                        found.append((start, e))
                        break
                if e is None or mode == "search":
                    break
                pos = e if e > found[-1][0] else e + 1
    finally:
        sys.setrecursionlimit(old_limit)
    want = {"match": lambda: [pattern.match(text)], "fullmatch": lambda: [pattern.fullmatch(text)],
            "search": lambda: [pattern.search(text)], "finditer": lambda: list(pattern.finditer(text))}[mode]()
    assert found == [x.span() for x in want if x is not None], (pattern.pattern, mode)
    return m.steps
