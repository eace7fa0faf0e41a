"""argparse as every kimi-lsp command uses it: a mistyped option gets "did you mean", and what
the user typed is echoed with its control characters escaped.

argparse suggests close matches itself only from Python 3.14 (``suggest_on_error``), and only for
choices and subcommands; this does it for options, with difflib over the parser's option strings.
Imported only where a parser is built (the common ``--check FILE ...`` is read without argparse).
"""
from __future__ import annotations

import argparse
import difflib
import sys

TYPE_CHECKING = False  # typing itself is not imported: see _record.py
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import NoReturn

_UNRECOGNIZED = "unrecognized arguments: "


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` most likely mistypes (difflib's ratio at least 0.6), or None."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def option_hints(words: Iterable[str], options: Iterable[str]) -> list[str]:
    """The option each option-like word in ``words`` likely mistypes (``--formt``: ``--format``);
    ``--formt=json`` is matched by its name."""
    known = list(options)
    out: list[str] = []
    for word in words:
        if not word.startswith("-") or word in ("-", "--"):
            continue
        name = word.partition("=")[0]
        match = closest(name, known)
        if match is not None and match != name:
            out.append(match)
    return out


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors suggest the option meant and never echo a
    terminal escape."""

    def error(self, message: str) -> NoReturn:
        from kimi_lsp.cli.output import printable

        line = f"{self.prog}: error: {message}"
        if message.startswith(_UNRECOGNIZED):
            hints = option_hints(message[len(_UNRECOGNIZED):].split(" "), self.option_strings())
            if hints:
                line += f" (did you mean {', '.join(dict.fromkeys(hints))}?)"
        else:
            choice = self._choice_hint(message)
            if choice is not None:
                line += f" (did you mean {choice}?)"
        self.print_usage(sys.stderr)
        self.exit(2, printable(line) + "\n")

    def _choice_hint(self, message: str) -> str | None:
        """The choice closest to the value of an "invalid choice" error (``--format jsn``)."""
        import re

        found = re.search(r"^argument (\S+): invalid choice: (['\"]?)(.*?)\2 \(", message)
        if found is None:
            return None
        for action in self._actions:
            if action.choices is not None and found.group(1) == "/".join(action.option_strings):
                return closest(found.group(3), [str(c) for c in action.choices])
        return None

    def option_strings(self) -> list[str]:
        return [s for action in self._actions for s in action.option_strings if s.startswith("--")]
