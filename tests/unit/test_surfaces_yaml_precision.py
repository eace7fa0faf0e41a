"""YAML launch files proven, not guessed: which YAML is a ``--config``, which command is whole,
templated YAML read through masked template actions, and the image that runs a launch."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.diagnostics import Applicability, Severity
from kimi_lsp.engine import Engine
from kimi_lsp.surfaces import read_surface
from kimi_lsp.surfaces.detect import config_verdict
from kimi_lsp.surfaces.model import Entry, Surface, SurfaceResult
from kimi_lsp.syntax.yaml import load, mask_templates, template_actions
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText, Workspace

EXACT = {"model-path", "model", "tp-size", "host", "port", "config", "log-level", "decode-attention-backend"}


def exact(key: str) -> bool:
    return key.lstrip("-").replace("_", "-") in EXACT


def near(key: str) -> bool:
    name = key.replace("_", "-")
    return any(k.startswith(name) for k in EXACT) or name == "decode-attn-backend"


def read(text: str, name: str = "deploy/k3.yaml") -> SurfaceResult:
    result = read_surface(SourceText(Path("/repo") / name, text), is_sglang_key=exact, near_sglang_key=near)
    assert not result.notes, result.notes
    return result


def raw(text: str, span: Span) -> str:
    return text[span.start : span.end]


# -- which YAML is an sglang --config -----------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "is_config", "doubtful"),
    [
        (["model-path", "tp-size"], True, False),  # exact names and a model: proven
        (["model", "port"], True, False),
        (["host", "port", "image", "config", "log_level"], False, False),  # no model; `image` a prefix
        (["host", "port", "config"], False, False),  # exact names, but no model: a fragment at best
        (["model-path", "decode-attn-backend"], True, True),  # a typo next to the model path
        (["model-path", "tp"], True, True),  # a prefix argparse accepts
        (["model", "decode-attn-backend"], False, False),  # `model:` alone carries no guess
        (["model_path", "epochs"], False, False),  # a key near no option: another format
        (["model-path", "kind"], False, False),  # a foreign root key
        (["model-path", "Image"], False, False),  # not shaped like an option
        ([], False, False),
    ],
)
def test_config_verdict(keys: list[str], is_config: bool, doubtful: bool) -> None:
    verdict = config_verdict(keys, exact, near)
    assert verdict.is_config is is_config
    assert (verdict.doubt is not None) is doubtful


def test_probable_config_carries_the_doubt() -> None:
    (launch,) = read("model-path: m\ndecode-attn-backend: x\n", "serve.yaml").launches
    assert launch.entry is Entry.CONFIG_FILE
    assert launch.doubt is not None and "`decode-attn-backend`" in launch.doubt
    (proven,) = read("model-path: m\ntp-size: 2\n", "serve.yaml").launches
    assert proven.doubt is None


def test_helm_values_are_not_a_config() -> None:
    assert read("host: 0.0.0.0\nport: 80\nimage: x\nconfig: c\nlog_level: debug\n", "ci/values.yaml") == SurfaceResult()


def test_a_model_section_of_another_tool_is_not_a_config() -> None:
    # Stable Diffusion / Lightning configs: `model:` is a mapping, never sglang's model path
    sd = "model:\n  target: sgm.models.diffusion.DiffusionEngine\n  params:\n    scale_factor: 0.18215\n"
    assert read(sd, "configs/svd.yaml") == SurfaceResult()
    (launch,) = read("model: Qwen/Qwen3-8B\ntp-size: 2\n", "serve.yaml").launches
    assert launch.entry is Entry.CONFIG_FILE


def test_engine_caps_a_guessed_config_at_warning(tmp_path: Path) -> None:
    f = tmp_path / "serve.yaml"
    f.write_text("model-path: Qwen/Qwen3-8B\ndecode-attn-backend: flashinfer\n")
    (d,) = Engine(Workspace(tmp_path)).lint_file(f).diagnostics
    assert (d.code, d.severity) == ("KL201", Severity.WARNING)
    assert "only guesses" in d.message
    assert all(fix.applicability is not Applicability.SAFE for fix in d.fixes)


def test_config_named_by_a_launch_is_read_whatever_its_keys(tmp_path: Path) -> None:
    (tmp_path / "conf.yaml").write_text("tp-sise: 2\n")
    (tmp_path / "requirements.txt").write_text("sglang==0.5.23\n")  # a known release: an error, not a guess
    run = tmp_path / "run.sh"
    run.write_text("python -m sglang.launch_server --model-path m --config conf.yaml\n")
    eng = Engine(Workspace(tmp_path))
    eng.index_config_references([run, tmp_path / "conf.yaml"])
    diags = eng.lint_file(run).diagnostics
    assert [(d.code, d.severity, d.location.path.name) for d in diags] == [("KL201", Severity.ERROR, "conf.yaml")]


# -- a command prefix is not a launch -------------------------------------------------------------


def test_bare_entry_point_in_a_value_is_a_prefix() -> None:
    text = "server_command: python -m sglang.launch_server\nserver_args:\n  model-path: m\n"
    assert read(text, "plan.yaml").launches == ()
    whole = read("server_command: python -m sglang.launch_server --model-path m\n", "plan.yaml")
    assert [t.value for t in whole.launches[0].argv] == ["--model-path", "m"]


def test_command_and_args_join_only_in_one_container() -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n"
        "  - command: [python3, -m, sglang.launch_server]\n"
        "  - args: [--model-path, m]\n"
        "  - command: [python3, -m, sglang.launch_server]\n"
        "    args: [--model-path, m, --tp-size, '2']\n"
    )
    (launch,) = read(text).launches
    assert [t.value for t in launch.argv] == ["--model-path", "m", "--tp-size", "2"]


# -- templated YAML -----------------------------------------------------------------------------

DEPLOYMENT = """\
{{- if .Values.enabled }}
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: server
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          command: ["python3", "-m", "sglang.launch_server"]
          args:
            - --model-path
            - {{ .Values.model | quote }}
            - --tp-sise
            {{- toYaml .Values.extraArgs | nindent 12 }}
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
{{- end }}
"""


def test_masking_keeps_every_offset() -> None:
    masked = mask_templates(DEPLOYMENT)
    assert len(masked.text) == len(DEPLOYMENT)
    assert masked.text.splitlines()[0].strip() == ""  # control actions vanish
    for span in masked.values:
        assert raw(DEPLOYMENT, span).startswith("{{") and raw(masked.text, span).startswith("$")
    assert [raw(DEPLOYMENT, b).split()[1] for b in masked.blocks] == ["toYaml", "toYaml"]
    assert not load(masked.text).problems


def test_github_expressions_are_not_templates() -> None:
    assert template_actions("run: echo ${{ matrix.tp }}\n") == []
    assert len(template_actions("a: {% if x %}1{% endif %}\nb: {# note #}\nc: {{ v }}\n")) == 4


def test_templated_deployment_is_analysed() -> None:
    result = read(DEPLOYMENT, "chart/templates/deployment.yaml")
    assert result.problems == ()
    (launch,) = result.launches
    words = [(t.value if t.exact else None, raw(DEPLOYMENT, t.span)) for t in launch.argv]
    assert words[0] == ("--model-path", "--model-path")
    assert words[1] == (None, "{{ .Values.model | quote }}")  # a template word is unknown
    assert words[2] == ("--tp-sise", "--tp-sise")
    # the rendered extraArgs stand as one unknown word, so nothing is judged "missing"
    assert words[3] == (None, "{{- toYaml .Values.extraArgs | nindent 12 }}")
    assert all("$" in t.value for t in launch.argv if not t.exact)
    assert launch.image is not None
    assert launch.image.value == "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
    assert raw(DEPLOYMENT, launch.image.span) == launch.image.value


def test_templated_yaml_gets_no_syntax_error() -> None:
    broken = "{{ if .Values.x }}\nkind: Pod\napiVersion: v1\nspec: {{ .a }} {{ .b }}: [\n  command: sglang serve m\n"
    assert read(broken, "chart/x.yaml").problems == ()
    # the same error without template actions is reported
    assert read("kind: Pod\napiVersion: v1\nspec: [\n  command: sglang serve m\n").problems


def test_helm_templates_dir_says_no_syntax_error(tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("name: c\n")
    text = "kind: Pod\napiVersion: v1\nspec: [\n  command: sglang serve m\n"
    f = chart / "templates" / "pod.yaml"
    res = read_surface(SourceText(f, text))
    assert res.problems == ()
    elsewhere = read_surface(SourceText(tmp_path / "pod.yaml", text))
    assert elsewhere.problems


# -- release evidence ---------------------------------------------------------------------------


def test_compose_service_image() -> None:
    text = (
        "services:\n  llm:\n    image: lmsysorg/sglang:v0.5.23-cu129\n"
        "    command: python3 -m sglang.launch_server --model-path m\n"
        "  other:\n    image: redis\n"
    )
    (launch,) = read(text, "compose.yaml").launches
    assert launch.surface is Surface.COMPOSE
    assert launch.image is not None and launch.image.value == "lmsysorg/sglang:v0.5.23-cu129"
    assert raw(text, launch.image.span) == "lmsysorg/sglang:v0.5.23-cu129"


def test_kubernetes_image_is_the_same_containers() -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nspec:\n  initContainers:\n  - image: busybox\n    command: [sh]\n"
        "  containers:\n  - image: 'lmsysorg/sglang:v0.5.22'\n"
        "    command: [python3, -m, sglang.launch_server, --model-path, m]\n"
    )
    (launch,) = read(text).launches
    assert launch.image is not None and launch.image.value == "lmsysorg/sglang:v0.5.22"
    assert raw(text, launch.image.span) == "lmsysorg/sglang:v0.5.22"


CONDITIONAL = """\
apiVersion: v1
kind: Pod
spec:
  containers:
    - image: lmsysorg/sglang:v0.5.23
      command: [python3, -m, sglang.launch_server]
      args:
        - --model-path
        - m
        {{- if .Values.pd }}
        - --disaggregation-mode
        - prefill
        {{- else }}
        - --disaggregation-mode
        - decode
        {{- end }}
        {{- with .Values.extraArgs }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
"""


def test_template_condition_around_words_makes_the_launch_a_guess() -> None:
    (launch,) = read(CONDITIONAL).launches
    assert launch.doubt is not None and "`{{- if .Values.pd }}`" in launch.doubt
    # a condition around a rendered block only hides what is unknown already
    plain = CONDITIONAL.replace("{{- if .Values.pd }}", "").replace("{{- else }}\n", "").replace(
        "        - --disaggregation-mode\n        - decode\n        {{- end }}\n", ""
    )
    (launch,) = read(plain).launches
    assert launch.doubt is None
    assert [t.value for t in launch.argv if t.exact] == ["--model-path", "m", "--disaggregation-mode", "prefill"]


@pytest.mark.parametrize(
    ("head", "unit", "count"),
    [("", "{#", 200_000), ("", "{{ ", 200_000), ("x: ", "{{ a }}", 100_000), ("", "a: {{ x }}\n", 50_000)],
)
def test_template_masking_is_linear(head: str, unit: str, count: int) -> None:
    from tests.reliability._support import cpu_growth, growth

    masked = mask_templates(head + unit * count)
    assert len(masked.text) == len(head) + len(unit) * count
    # unclosed openers or one long line: no quadratic scan (four times the text, ~4x the work,
    # counted in calls and in this process's CPU time; quadratic would be ~16x)
    assert growth(lambda n: mask_templates(head + unit * n), count // 8) < 6
    assert cpu_growth(lambda n: mask_templates(head + unit * n), count // 8) < 8


def test_fix_leaves_guessed_and_unrelated_yaml_alone(tmp_path: Path, monkeypatch, capsys) -> None:
    """The Helm values file once got a *safe* KL205 fix that ``--fix`` applied; a guessed config
    gets only unsafe fixes, which ``--fix`` does not apply either."""
    from kimi_lsp.cli.main import main

    (tmp_path / ".git").mkdir()
    (tmp_path / "ci").mkdir()
    files = {
        tmp_path / "ci" / "values.yaml": "host: 0.0.0.0\nport: 80\nimage: x\nconfig: c\nlog_level: debug\n",
        tmp_path / "serve.yaml": "model-path: Qwen/Qwen3-8B\ndecode-attn-backend: flashinfer\n",
    }
    for f, text in files.items():
        f.write_text(text)
    monkeypatch.chdir(tmp_path)
    rc = main(["--check", "--fix", "--no-cache", "."])
    capsys.readouterr()
    assert rc == 0  # a warning only
    assert all(f.read_text() == text for f, text in files.items())


def test_operator_resource_launch_ends_in_an_unknown_word() -> None:
    cr = "apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nspec:\n  containers:\n" \
        "    - command: [python3, -m, sglang.launch_server, --port, '80']\n"
    (launch,) = read(cr).launches
    *written, added = launch.argv
    assert [t.value for t in written] == ["--port", "80"]
    assert not added.exact and "$" in added.value and added.span == Span(launch.span.end, launch.span.end)
    # a core workload runs its container exactly as written
    pod = cr.replace("ome.io/v1beta1", "v1").replace("ClusterServingRuntime", "Pod")
    (launch,) = read(pod).launches
    assert [t.value for t in launch.argv] == ["--port", "80"]
