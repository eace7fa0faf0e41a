"""Which sglang release runs a launch (kimi_lsp.release) and how the engine uses it.

The surface readers fill ``LaunchCommand.image``; these tests set it themselves (on the span of
the reference in the file, as a reader does) so that they hold whatever reader is installed.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp import engine as engine_mod
from kimi_lsp._record import replace
from kimi_lsp.config import Settings
from kimi_lsp.diagnostics import Applicability, Location, Severity
from kimi_lsp.engine import RECENT_RELEASES, Engine, recent_releases
from kimi_lsp.knowledge.schema import load_schema_exact, shipped_versions
from kimi_lsp.release import parse_image, resolve_release
from kimi_lsp.surfaces.model import Entry, LaunchCommand, Surface
from kimi_lsp.text import Located, Span
from kimi_lsp.workspace import Workspace

NEWEST = shipped_versions()[-1]
LOC = Location(Path("/x/deploy.yaml"), Span(0, 1))


# -- image references ------------------------------------------------------------------------


@pytest.mark.parametrize(("ref", "version"), [
    ("lmsysorg/sglang:v0.5.5.post3", "0.5.5.post3"),
    ("lmsysorg/sglang:v0.5.5-cu129", "0.5.5"),
    ("lmsysorg/sglang:v0.4.6.post4-cu124", "0.4.6.post4"),
    ("lmsysorg/sglang:v0.5.2rc2-cu126-b200", "0.5.2rc2"),
    ("lmsysorg/sglang:v0.4.6.post4-rocm630", "0.4.6.post4"),
    ("docker.io/lmsysorg/sglang:v0.5.22", "0.5.22"),
    ("lmsysorg/sglang:v0.5.5@sha256:" + "a" * 64, "0.5.5"),  # the tag a person wrote names it
])
def test_official_release_tags_name_their_release(ref: str, version: str) -> None:
    got = parse_image(ref, LOC)
    assert got is not None and got.official and got.version == version


@pytest.mark.parametrize(("ref", "why"), [
    ("lmsysorg/sglang:latest", "image tag `latest` is a moving tag that follows the newest release"),
    ("lmsysorg/sglang:dev", "image tag `dev` is a moving tag that follows main"),
    ("lmsysorg/sglang:dev-cu13", "image tag `dev-cu13` is a moving tag that follows main"),
    ("lmsysorg/sglang:nightly-dev-20251208-5e2cda61",
     "image tag `nightly-dev-20251208-5e2cda61` is a build of main from 2025-12-08, between sglang 0.5.6.post1 and 0.5.6.post2"),
    ("lmsysorg/sglang:nightly", "image tag `nightly` is a nightly build of main"),
    ("lmsysorg/sglang", "image `lmsysorg/sglang` has no tag, so it is `latest`, a moving tag"),
    ("lmsysorg/sglang@sha256:" + "b" * 64, "pinned by digest only"),
    ("lmsysorg/sglang:0.5.5", "image tag `0.5.5` names no sglang release"),
    # AMD builds of main that sglang's CI pushes: the release they start from, the day they were built
    ("rocm/sgl-dev:v0.5.8-rocm700-mi35x-20260202",
     "is a development build of sglang 0.5.8 from 2026-02-02, between sglang 0.5.8 and 0.5.8.post1"),
    ("docker.io/rocm/sgl-dev:v0.5.18-rocm720-mi35x", "is a development build of sglang 0.5.18, between sglang 0.5.18 and 0.5.19"),
    ("rocm/sgl-dev:latest", "image tag `latest` names no sglang release"),
])
def test_official_image_without_a_release_is_unknown_with_the_reason(ref: str, why: str) -> None:
    got = parse_image(ref, LOC)
    assert got is not None and got.official and got.version is None
    assert why in got.why


@pytest.mark.parametrize("ref", [
    "myorg/sglang:v0.5.5",  # a fork or custom build
    "vllm/vllm-openai:v0.5.5",
    "ghcr.io/lmsysorg/sglang:v0.5.5",  # another registry may hold anything under that name
    "lmsysorg/sglang-staging:v0.5.5",
    "python:3.12-slim",
])
def test_other_images_are_no_evidence(ref: str) -> None:
    assert parse_image(ref, LOC) is None


# -- resolution order ---------------------------------------------------------------------------


def _cmd(path: Path, surface: Surface, image: str | None = None, text: str = "") -> LaunchCommand:
    img = None
    if image is not None:
        i = text.find(image)
        img = Located(image, Span(max(i, 0), max(i, 0) + len(image)))
    return LaunchCommand(path=path, surface=surface, entry=Entry.LAUNCH_SERVER,
                         program=Located("python -m sglang.launch_server", Span(0, 1)), argv=(),
                         span=Span(0, 1), base_dir=path.parent, image=img)


def _helm_chart(root: Path, values: str, app_version: str = "v0.5.21") -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    chart = root / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: serve\nversion: 1.0.0\nappVersion: \"{app_version}\"\n")
    (chart / "values.yaml").write_text(values)
    return chart / "templates" / "deployment.yaml"


HELM_IMAGE = '{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}'


def test_helm_tag_from_values(tmp_path: Path) -> None:
    launch = _helm_chart(tmp_path, "replicaCount: 1\nimage:\n  repository: lmsysorg/sglang\n  tag: v0.5.22-cu129\n")
    launch.write_text(f'image: "{HELM_IMAGE}"\n')
    ws = Workspace(tmp_path)
    res = resolve_release(_cmd(launch, Surface.KUBERNETES, HELM_IMAGE, launch.read_text()), None, ws, Settings())
    assert (res.version, res.source_kind, res.exact) == ("0.5.22", "image", True)
    assert res.location is not None and res.location.path == tmp_path / "chart" / "values.yaml"
    assert res.source_text == "image `lmsysorg/sglang:v0.5.22-cu129`"


def test_helm_tag_defaults_to_the_chart_app_version(tmp_path: Path) -> None:
    launch = _helm_chart(tmp_path, 'image:\n  repository: lmsysorg/sglang\n  tag: ""\n', app_version="v0.5.21")
    launch.write_text(f'image: "{HELM_IMAGE}"\n')
    ws = Workspace(tmp_path)
    res = resolve_release(_cmd(launch, Surface.KUBERNETES, HELM_IMAGE, launch.read_text()), None, ws, Settings())
    assert res.version == "0.5.21"
    assert res.location is not None and res.location.path.name == "Chart.yaml"


def test_helm_template_that_is_not_a_literal_is_unknown(tmp_path: Path) -> None:
    launch = _helm_chart(tmp_path, "image:\n  repository: lmsysorg/sglang\n")
    image = 'lmsysorg/sglang:{{ include "serve.tag" . }}'
    launch.write_text(f'image: "{image}"\n')
    res = resolve_release(_cmd(launch, Surface.KUBERNETES, image, launch.read_text()), None, Workspace(tmp_path), Settings())
    assert res.version is None and "template" in res.why


def test_setting_wins_over_the_image(tmp_path: Path) -> None:
    f = tmp_path / "deploy.yaml"
    f.write_text("image: lmsysorg/sglang:v0.5.21\n")
    res = resolve_release(_cmd(f, Surface.KUBERNETES, "lmsysorg/sglang:v0.5.21", f.read_text()), None,
                          Workspace(tmp_path), Settings(sglang_version="0.5.22"))
    assert (res.version, res.source_kind) == ("0.5.22", "setting")


def test_recent_releases_are_the_newest_finals() -> None:
    recent = recent_releases()
    assert len(recent) == min(RECENT_RELEASES, len(shipped_versions()))
    assert recent[-1] == NEWEST and all(load_schema_exact(v) is not None for v in recent)


def test_recent_releases_count_a_release_and_its_post_fixes_once(monkeypatch) -> None:
    shipped = ("0.5.20", "0.5.21", "0.5.21.post1", "0.5.22rc0", "0.5.22", "0.5.23")
    monkeypatch.setattr(engine_mod, "shipped_versions", lambda: shipped)
    assert recent_releases() == ("0.5.21.post1", "0.5.22", "0.5.23")


def test_load_schema_exact_has_no_fallback() -> None:
    assert load_schema_exact("0.3.6") is None
    assert load_schema_exact(NEWEST) is not None and load_schema_exact(NEWEST).version == NEWEST


# -- the engine ----------------------------------------------------------------------------------


def _with_image(monkeypatch, ref: str) -> None:
    """Fill ``image`` as the readers do: the reference's span in the launch file."""
    real = engine_mod.read_surface

    def read(src, **kw):
        res = real(src, **kw)
        i = src.text.find(ref)
        if i < 0:
            return res
        img = Located(ref, Span(i, i + len(ref)))
        return replace(res, launches=tuple(replace(c, image=img) for c in res.launches))

    monkeypatch.setattr(engine_mod, "read_surface", read)


def _lint(root: Path, name: str):
    (root / ".git").mkdir(parents=True, exist_ok=True)
    eng = Engine(Workspace(root))
    return eng.lint_file(root / name).diagnostics


DOCKERFILE = """FROM {image}
CMD ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--enable-hicache", "--no-such-flag"]
"""


def test_image_tag_decides_and_is_named_in_the_message(tmp_path: Path, monkeypatch) -> None:
    image = "lmsysorg/sglang:v0.5.22-cu129"
    (tmp_path / "Dockerfile").write_text(DOCKERFILE.format(image=image))
    _with_image(monkeypatch, image)
    diags = _lint(tmp_path, "Dockerfile")
    # --enable-hicache is new in 0.5.23: unknown to the 0.5.22 the image runs
    assert [d.code for d in diags] == ["KL201", "KL201"]
    hicache = next(d for d in diags if "--enable-hicache" in d.message)
    assert hicache.severity is Severity.ERROR
    assert hicache.message.endswith(f"(sglang 0.5.22, from image `{image}` at Dockerfile:1)")
    assert any(r.location == Location(tmp_path / "Dockerfile", Span(5, 5 + len(image))) for r in hicache.related)


def test_dockerfile_pip_line_replaces_the_base_image_release(tmp_path: Path, monkeypatch) -> None:
    image = "lmsysorg/sglang:v0.5.22"
    text = DOCKERFILE.format(image=image).replace("\nCMD", "\nRUN pip install sglang==0.5.23\nCMD")
    (tmp_path / "Dockerfile").write_text(text)
    _with_image(monkeypatch, image)
    diags = _lint(tmp_path, "Dockerfile")
    assert [d.message for d in diags if d.code == "KL201"] == [
        "Unknown sglang argument `--no-such-flag` (sglang 0.5.23, from `sglang==0.5.23` at Dockerfile:2)"]


def test_image_wins_over_the_repository_pins(tmp_path: Path, monkeypatch) -> None:
    image = "lmsysorg/sglang:v0.5.22"
    (tmp_path / "requirements.txt").write_text("sglang==0.5.23\n")
    (tmp_path / "Dockerfile").write_text(DOCKERFILE.format(image=image))
    _with_image(monkeypatch, image)
    assert any("--enable-hicache" in d.message for d in _lint(tmp_path, "Dockerfile"))


def test_moving_tag_reports_only_what_every_recent_release_rejects(tmp_path: Path, monkeypatch) -> None:
    image = "lmsysorg/sglang:latest"
    (tmp_path / "Dockerfile").write_text(DOCKERFILE.format(image=image))
    _with_image(monkeypatch, image)
    diags = _lint(tmp_path, "Dockerfile")
    assert len(diags) == 1  # --enable-hicache is valid in the newest release
    d = diags[0]
    recent = recent_releases()
    assert d.severity is Severity.WARNING
    assert d.message == (
        f"Unknown sglang argument `--no-such-flag` (in every sglang release from {recent[0]} to {recent[-1]}; "
        "the release that runs this launch is unknown: image tag `latest` is a moving tag that follows the newest release)")


def test_main_may_hold_options_no_release_has(tmp_path: Path, monkeypatch) -> None:
    # `dev` is main, ahead of every release kimi-lsp knows: `--no-such-flag` may be new there
    image = "lmsysorg/sglang:dev"
    (tmp_path / "Dockerfile").write_text(DOCKERFILE.format(image=image))
    _with_image(monkeypatch, image)
    assert _lint(tmp_path, "Dockerfile") == []


def test_unshipped_release_is_unknown_and_says_why(tmp_path: Path, monkeypatch) -> None:
    image = "lmsysorg/sglang:v0.3.6-cu124"  # older than every shipped schema
    (tmp_path / "Dockerfile").write_text(DOCKERFILE.format(image=image))
    _with_image(monkeypatch, image)
    # no schema speaks for a release older than all of them: one warning says the launch went
    # unchecked, never a silent pass (issue 30)
    old = _lint(tmp_path, "Dockerfile")
    assert [(d.code, d.severity) for d in old] == [("KL001", Severity.WARNING)]
    assert "older than every release kimi-lsp knows" in old[0].message and "not checked" in old[0].message
    image = "lmsysorg/sglang:v0.5.2rc2-cu126"  # a release candidate: judged by its neighbours
    (tmp_path / "Dockerfile").write_text(DOCKERFILE.format(image=image))
    _with_image(monkeypatch, image)
    diags = _lint(tmp_path, "Dockerfile")
    assert len(diags) == 2 and all(d.severity is Severity.WARNING for d in diags)
    assert (f"(in sglang 0.5.1.post3 and 0.5.2; the release that runs this launch is unknown: "
            f"sglang 0.5.2rc2, from image `{image}` at Dockerfile:1, which kimi-lsp has no argument schema for"
            in diags[-1].message)


def test_unknown_release_never_offers_a_safe_fix(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text("model-path: Qwen/Qwen3-8B\ntp_size: 2\n")
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython3 -m sglang.launch_server --config serve.yaml\n")
    diags = [d for d in _lint(tmp_path, "run.sh") if d.code == "KL205"]
    assert diags and all(d.severity is Severity.WARNING for d in diags)
    assert all(f.applicability is not Applicability.SAFE for d in diags for f in d.fixes)
    # the same launch with its release known: an error with a safe fix
    (tmp_path / "requirements.txt").write_text(f"sglang=={NEWEST}\n")
    known = [d for d in _lint(tmp_path, "run.sh") if d.code == "KL205"]
    assert known and known[0].severity is Severity.ERROR
    assert any(f.applicability is Applicability.SAFE for f in known[0].fixes)
    assert known[0].message.endswith(f"(sglang {NEWEST}, from `sglang=={NEWEST}` at requirements.txt:1)")


def test_setting_is_named_with_its_file(tmp_path: Path) -> None:
    (tmp_path / "kimi-lsp.toml").write_text('sglang-version = "0.5.22"\n')
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython3 -m sglang.launch_server --model-path m --enable-hicache\n")
    diags = _lint(tmp_path, "run.sh")
    assert [d.code for d in diags] == ["KL201"]
    assert diags[0].message.endswith("(sglang 0.5.22, from the `sglang-version` setting in kimi-lsp.toml)")


K3_POD = """apiVersion: v1
kind: Pod
metadata: {name: k3}
spec:
  containers:
    - name: server
      image: lmsysorg/sglang:v0.5.23
      command: ["python3", "-m", "sglang.launch_server"]
      args: ["--model-path", "moonshotai/Kimi-K3", "--tp-size", "8", "--dcp-size", "8",
             "--attention-backend", "cutedsl_mla"]
"""


def test_official_image_ships_its_own_flashinfer(tmp_path: Path, monkeypatch) -> None:
    # the repository's requirements.txt pins a flashinfer without enable_dcp, but the container
    # never installs it: sglang 0.5.23's image ships flashinfer-python 0.7.2, which has it
    (tmp_path / "requirements.txt").write_text("flashinfer-python==0.6.16.post4\n")
    # a team's own image says nothing about what it installs: the repository's pin governs
    (tmp_path / "k3.yaml").write_text(K3_POD.replace("lmsysorg/sglang:v0.5.23", "registry.example.com/team/sglang:k3"))
    assert "KL101" in [d.code for d in _lint(tmp_path, "k3.yaml")]
    (tmp_path / "k3.yaml").write_text(K3_POD)  # the reader takes the container's image as evidence
    assert "KL101" not in [d.code for d in _lint(tmp_path, "k3.yaml")]


def test_dockerfile_installing_flashinfer_on_the_image_keeps_its_own_pin(tmp_path: Path, monkeypatch) -> None:
    image = "lmsysorg/sglang:v0.5.23"
    (tmp_path / "Dockerfile").write_text(
        f"FROM {image}\nRUN pip install flashinfer-python==0.6.16.post4\n"
        'CMD ["python3", "-m", "sglang.launch_server", "--model-path", "moonshotai/Kimi-K3", "--tp-size", "8", '
        '"--dcp-size", "8", "--attention-backend", "cutedsl_mla"]\n')
    _with_image(monkeypatch, image)
    assert "KL101" in [d.code for d in _lint(tmp_path, "Dockerfile")]


def test_helm_chart_files_are_dependencies_of_the_launch(tmp_path: Path, monkeypatch) -> None:
    launch = _helm_chart(tmp_path, "image:\n  repository: lmsysorg/sglang\n  tag: v0.5.22\n")
    launch.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n  containers:\n    - name: s\n"
        f'      image: "{HELM_IMAGE}"\n'
        '      command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--enable-hicache"]\n')
    _with_image(monkeypatch, HELM_IMAGE)
    eng = Engine(Workspace(tmp_path))
    res = eng.lint_file(launch)
    chart = tmp_path / "chart"
    assert {chart / "values.yaml", chart / "Chart.yaml"} <= res.depends_on
    assert [d.code for d in res.diagnostics] == ["KL201"]  # --enable-hicache: not in 0.5.22
    assert res.diagnostics[0].message.endswith(
        "(sglang 0.5.22, from image `lmsysorg/sglang:v0.5.22` at chart/values.yaml:3)")


def test_dockerfile_arg_tag_is_unknown_and_names_the_default(tmp_path: Path, monkeypatch) -> None:
    image = "lmsysorg/sglang:${SGLANG_TAG}"
    (tmp_path / "Dockerfile").write_text("ARG SGLANG_TAG=v0.5.22\n" + DOCKERFILE.format(image=image))
    _with_image(monkeypatch, image)
    diags = _lint(tmp_path, "Dockerfile")
    assert [d.severity for d in diags] == [Severity.WARNING]  # only --no-such-flag: every release rejects it
    assert diags[0].message.endswith(
        "unknown: the tag comes from build argument `SGLANG_TAG` (default `v0.5.22`), "
        "which `docker build --build-arg` may set to another release)")


def test_hover_and_completion_use_the_same_release(tmp_path: Path, monkeypatch) -> None:
    image = "lmsysorg/sglang:v0.5.22"
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("sglang==0.5.23\n")
    (tmp_path / "Dockerfile").write_text(DOCKERFILE.format(image=image))
    _with_image(monkeypatch, image)
    eng = Engine(Workspace(tmp_path))
    _, surface = eng.read_launches(tmp_path / "Dockerfile")
    assert surface is not None
    assert eng.schema_for_launch(tmp_path / "Dockerfile", surface.launches[0]).version == "0.5.22"
    # without a launch (completion in a file of no launch yet): the project's pin
    assert eng.schema_for_launch(tmp_path / "Dockerfile").version == "0.5.23"


# -- narrowing an unknown release -----------------------------------------------------------------

NANO = """FROM {image}
CMD ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--reasoning-parser", "nano_v3", "--no-such-flag"]
"""


def test_dated_nightly_is_judged_by_the_releases_around_its_day(tmp_path: Path, monkeypatch) -> None:
    # nano_v3 is a reasoning parser of 0.5.7-0.5.9 only: a build of main from between 0.5.6.post2
    # and 0.5.7 may have it, so only what both reject is reported
    image = "lmsysorg/sglang:nightly-dev-20251215-0a1b2c3d"
    (tmp_path / "Dockerfile").write_text(NANO.format(image=image))
    _with_image(monkeypatch, image)
    diags = _lint(tmp_path, "Dockerfile")
    assert [(d.code, d.severity) for d in diags] == [("KL201", Severity.WARNING)]
    assert "`--no-such-flag` (in sglang 0.5.6.post2 and 0.5.7;" in diags[0].message
    # the same launch on `latest`: today's releases reject nano_v3 too
    (tmp_path / "Dockerfile").write_text(NANO.format(image="lmsysorg/sglang:latest"))
    _with_image(monkeypatch, "lmsysorg/sglang:latest")
    assert sorted(d.code for d in _lint(tmp_path, "Dockerfile")) == ["KL201", "KL202"]
    # on `dev` (main, past every release) a parser or a flag no release has may be new: not said
    (tmp_path / "Dockerfile").write_text(NANO.format(image="lmsysorg/sglang:dev"))
    _with_image(monkeypatch, "lmsysorg/sglang:dev")
    assert _lint(tmp_path, "Dockerfile") == []


def test_a_range_is_judged_by_every_release_it_admits(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("sglang>=0.5.7,<0.5.10\n")
    (tmp_path / "run.sh").write_text(
        "python -m sglang.launch_server --model-path m --reasoning-parser nano_v3 --enable-hicache\n")
    # nano_v3 holds in every admitted release; --enable-hicache (new in 0.5.23) in none of them
    diags = _lint(tmp_path, "run.sh")
    assert [(d.code, d.severity) for d in diags] == [("KL201", Severity.WARNING)]
    assert "in sglang 0.5.7, 0.5.8, 0.5.8.post1 and 0.5.9;" in diags[0].message
    assert "`sglang>=0.5.7,<0.5.10` at requirements.txt:1 is a range" in diags[0].message


def test_a_repository_with_its_own_sglang_source_is_not_judged_by_a_release(tmp_path: Path) -> None:
    (tmp_path / "python" / "sglang" / "srt").mkdir(parents=True)
    (tmp_path / "python" / "sglang" / "srt" / "server_args.py").write_text("# a fork's own arguments\n")
    (tmp_path / "run.sh").write_text("python -m sglang.launch_server --model-path m --enable-kvstore\n")
    assert _lint(tmp_path, "run.sh") == []


def test_a_deprecation_is_not_reported_for_an_unknown_release(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("python -m sglang.launch_server --model-path m --disable-cuda-graph\n")
    assert _lint(tmp_path, "run.sh") == []
    (tmp_path / "requirements.txt").write_text(f"sglang=={NEWEST}\n")
    assert [d.code for d in _lint(tmp_path, "run.sh")] == ["KL204"]


def test_a_repository_patching_sglangs_arguments_is_not_judged_by_the_release(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "trainer"\nversion = "1"\ndependencies = ["sglang==0.5.14"]\n')
    (tmp_path / "run.sh").write_text("python -m sglang.launch_server --model-path m --enable-spec-capture\n")
    assert [d.code for d in _lint(tmp_path, "run.sh")] == ["KL201"]  # 0.5.14 has no such flag
    (tmp_path / "patches" / "sglang" / "v0.5.14").mkdir(parents=True)
    (tmp_path / "patches" / "sglang" / "v0.5.14" / "capture.patch").write_text(
        "diff --git a/python/sglang/srt/server_args.py b/python/sglang/srt/server_args.py\n"
        "--- a/python/sglang/srt/server_args.py\n+++ b/python/sglang/srt/server_args.py\n"
        "@@ -1,1 +1,2 @@\n+    enable_spec_capture: bool = False\n")
    assert _lint(tmp_path, "run.sh") == []
    # a patch to another file of sglang changes no argument
    (tmp_path / "patches" / "sglang" / "v0.5.14" / "capture.patch").write_text(
        "--- a/python/sglang/srt/managers/scheduler.py\n+++ b/python/sglang/srt/managers/scheduler.py\n")
    assert [d.code for d in _lint(tmp_path, "run.sh")] == ["KL201"]
