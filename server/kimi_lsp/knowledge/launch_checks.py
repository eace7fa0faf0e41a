"""What each sglang release checks before argparse's table has its say, per release.

``data/sglang_launch_checks.json`` is made by ``scripts/build_launch_checks.py`` from the released
wheels: the options whose argparse action stops the launch at parse time (``DeprecatedAction``:
``ValueError(help)`` up to 0.5.7, ``parser.error(error_message)`` from 0.5.18), and how ``sglang
serve`` finds the model before parsing (none before 0.5.5; ``--model-path`` only, then also
``--model``, ``--model-type`` taken off, a bare first word). The diffusion server it hands a
diffusion model to is knowledge/diffusion.py's. A release the file does not hold (one newer than
the data) gets the newest release's answers, as its schema does.
"""
from __future__ import annotations

import os
from functools import cache

from kimi_lsp._record import dataclass
from kimi_lsp.knowledge import _compiled

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from typing import Any

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sglang_launch_checks.json")


@dataclass(frozen=True, slots=True)
class ServeModel:
    """How one release's ``sglang serve`` looks for the model on its command line."""

    model_options: tuple[str, ...]  # exact words (`--model-path`, and `--model` from 0.5.11); `X=` too
    positional: bool  # a bare first word is rewritten to `--model-path WORD` (0.5.16 on)
    model_type: bool  # `--model-type X` / `--model-type=X` is taken off first (0.5.10 on)


@cache
def _releases() -> dict[str, Any]:
    raw = _compiled.load_json(_DATA)
    releases: dict[str, Any] = raw["releases"]
    return releases


def shipped() -> tuple[str, ...]:
    """The releases the file holds."""
    return tuple(_releases())


def _entry(version: str) -> dict[str, Any] | None:
    from kimi_lsp.knowledge.schema import release_in

    releases = _releases()
    hit = release_in(version, releases)
    return None if hit is None else releases[hit]


def parse_error(version: str, option: str) -> str | None:
    """What sglang ``version`` prints when ``option`` (an exact option string) is on its command
    line and its action stops the launch, else None."""
    entry = _entry(version)
    if entry is None:
        return None
    message: str | None = entry["parse_errors"].get(option)
    return message


def serve_model(version: str) -> ServeModel | None:
    """How ``sglang serve`` of ``version`` finds the model; None where the release has no ``sglang
    serve`` (before 0.5.5) or is not in the data."""
    entry = _entry(version)
    if entry is None or entry["serve"] is None:
        return None
    s = entry["serve"]
    return ServeModel(tuple(s["model_options"]), bool(s["positional"]), bool(s["model_type"]))
