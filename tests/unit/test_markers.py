"""``kimi_lsp.markers``: the plain markers it reads are evaluated as ``packaging.markers`` does,
and everything else is left to packaging (``plain`` is None).

Checked on the markers lock tools write, on hand-picked edge cases, and on 20,000 random markers
over PEP 508's grammar (other variables and operators, version-like values, parentheses, stray
tokens) against ``Marker(...).evaluate`` on every platform the flashinfer rules judge.
"""
from __future__ import annotations

import random

import pytest
from packaging.markers import Marker

from kimi_lsp import markers

_HOSTS = [
    {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": m}
    for m in ("x86_64", "aarch64")
] + [{"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix", "platform_machine": "arm64"}]


def _packaging(marker: str, env: dict[str, str]) -> bool | None:
    try:
        return Marker(marker).evaluate(env)
    except Exception:  # noqa: BLE001 - what packaging refuses
        return None


def _agrees(marker: str) -> bool:
    """Whether ``plain`` read ``marker`` (False: left to packaging); asserts the answers agree."""
    tree = markers.plain(marker)
    if tree is None:
        return False
    for env in _HOSTS:
        assert markers.evaluate(tree, env) is _packaging(marker, env), (marker, env)
    return True


@pytest.mark.parametrize("marker", [
    "platform_machine == 'x86_64' and sys_platform == 'linux'",  # every package of uv's pylock export
    "sys_platform == 'linux'",
    'sys_platform != "darwin"',
    "platform_machine == 'aarch64' or (os_name == 'posix' and platform_system != 'Windows')",
    "(sys_platform == 'linux')",
    "sys_platform=='linux'and platform_machine=='x86_64'",
    "  sys_platform == 'linux'  ",
    "sys_platform == 'linux' or sys_platform == 'darwin' and platform_machine == 'arm64'",  # and binds tighter
])
def test_plain_markers_are_read_and_agree(marker: str) -> None:
    assert _agrees(marker)


@pytest.mark.parametrize("marker", [
    "python_version >= '3.12'",  # another variable
    "python_full_version < '3.11' and sys_platform == 'linux'",
    "sys_platform in 'linux darwin'",  # another operator
    "'linux' == sys_platform",  # the variable on the right
    "platform_machine == '1.0'",  # a value a specifier reads as a version
    "platform_machine == 'v1'",
    "platform_machine == 'x86_64.*'",
    "extra == 'cu12'",  # extra names are normalized
    "implementation_name == 'cpython'",  # from the linting interpreter's environment
    "sys.platform == 'linux'",  # a legacy name
    "sys_platform == 'linux' and",  # a syntax error
    "(sys_platform == 'linux'",
    "sys_platform == 'linux')",
    "sys_platform == linux",
    "sys_platform == 'linux'\nand os_name == 'posix'",
    "",
])
def test_other_markers_are_left_to_packaging(marker: str) -> None:
    assert markers.plain(marker) is None


def test_random_markers_agree_with_packaging() -> None:
    rng = random.Random(508)
    variables = [*sorted(markers.PLATFORM_KEYS), "python_version", "extra", "implementation_name", "sys.platform"]
    values = ["linux", "Linux", "darwin", "x86_64", "aarch64", "posix", "nt", "win32", "AMD64", "3.12", "1.0",
              "v2", "x86_64.*", "", "lin ux", "_x", "arm64"]
    ops = ["==", "==", "!=", "!=", "<", ">=", "in", "not in", "~=", "==="]

    plain_only = False  # half the markers keep to the plain subset's words (but not its shape)

    def atom(depth: int) -> str:
        if depth < 3 and rng.random() < 0.25:
            return f"({expr(depth + 1)})"
        quote = rng.choice(["'", '"'])
        names = sorted(markers.PLATFORM_KEYS) if plain_only else variables
        left, right = rng.choice(names), f"{quote}{rng.choice(values)}{quote}"
        if rng.random() < 0.05:
            left, right = right, left
        op = rng.choice(["==", "!="] if plain_only else ops)
        return f"{left}{rng.choice([' ', '', '  '])}{op}{rng.choice([' ', ''])}{right}"

    def expr(depth: int) -> str:
        out = atom(depth)
        for _ in range(rng.randrange(3)):
            out += f" {rng.choice(['and', 'or'])} {atom(depth)}"
        return out

    read = 0
    for i in range(20_000):
        plain_only = i % 2 == 0
        marker = expr(0)
        if rng.random() < 0.03:  # a stray token somewhere
            at = rng.randrange(len(marker) + 1)
            marker = marker[:at] + rng.choice(["(", ")", "and ", "'", "==", "\t"]) + marker[at:]
        read += _agrees(marker)
    assert read > 3_000  # the subset is exercised, not only declined
