"""``requirement_error`` answers as ``packaging.requirements.Requirement`` does.

Its fast path (name, extras and clauses checked with SpecifierSet alone) keeps
``packaging.requirements`` and its markers/tags/platform imports off a one-file ``--check``; this
differential test holds it to packaging's verdict, and to packaging's wording on every error.
"""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier
from packaging.version import InvalidVersion

from kimi_lsp.pins._pep508 import requirement_error


def packaging_error(s: str) -> str | None:
    try:
        Requirement(s.strip())
    except (InvalidRequirement, InvalidSpecifier, InvalidVersion, ValueError) as exc:
        return str(exc).splitlines()[0] if str(exc) else "invalid requirement"
    return None


SAMPLES = [
    "flashinfer-python==0.6.17", "flashinfer_python[cu13]==0.7.2", "sglang[all]>=0.5.21,<0.6", "torch",
    "a.b-c_d ~= 1.2", "x===weird+ver", "x==1.0.*", "x>=1.0,", "x==1.0.x", "x[a,]==1", "x[]==1",
    "x ( ==1.0 )", "x==1.0; python_version < '3.12'", "x @ https://example.invalid/x.whl", "-x==1",
    "x==", "x=1", "x>=1 <2", "x>=1,,<2", "x!=1.*,>=0.9", "x~=1", "x<1.0.dev0", "x==1.0+local", "x>=v1",
    "x ==1.0 ; sys_platform=='linux'", "x[ a , b ]>=1", "x==1.0 # c", "x>=1.0.post1.dev2", "x==01.0",
    "0===, ===", "0===,===", "a===x, ===", "a===, ==1", "a==1, ===",  # packaging 23.0 and 26 differ here
]


def test_samples_agree_with_packaging() -> None:
    for s in SAMPLES:
        assert requirement_error(s) == packaging_error(s), s


_name = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,6}[A-Za-z0-9])?", fullmatch=True)
_op = st.sampled_from(["==", "!=", ">=", "<=", ">", "<", "~=", "===", "=", "=>", ""])
_ver = st.from_regex(r"[0-9a-z.*+!-]{0,8}", fullmatch=True)
_ws = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def requirement_like(draw: st.DrawFn) -> str:
    s = draw(_ws) + draw(_name) + draw(_ws)
    if draw(st.booleans()):
        s += "[" + ",".join(draw(st.lists(_name, max_size=3))) + draw(st.sampled_from(["]", "", ",]"])) + draw(_ws)
    clauses = draw(st.lists(st.tuples(_op, _ws, _ver), max_size=3))
    s += draw(st.sampled_from([",", ", ", " ,"])).join(f"{o}{w}{v}" for o, w, v in clauses)
    return s + draw(st.sampled_from(["", " ", ";", "; python_version<'3.12'", " @ x"]))


@settings(max_examples=600, deadline=None)
@given(requirement_like())
def test_generated_requirements_agree_with_packaging(s: str) -> None:
    assert requirement_error(s) == packaging_error(s)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="ascii"), max_size=30))
def test_any_text_agrees_with_packaging(s: str) -> None:
    assert requirement_error(s) == packaging_error(s)
