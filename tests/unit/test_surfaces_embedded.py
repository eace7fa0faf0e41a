"""Launches inside Kubernetes, compose and CI YAML, with positions mapped through YAML scalars."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.surfaces import detect_surface, read_surface
from kimi_lsp.surfaces.model import Entry, LaunchCommand, Surface, SurfaceResult
from kimi_lsp.text import Span
from kimi_lsp.workspace import SourceText


def raw(text: str, span: Span) -> str:
    return text[span.start : span.end]


def read(text: str, name: str = "deploy/k3.yaml", force: Surface | None = None) -> SurfaceResult:
    result = read_surface(SourceText(Path("/repo") / name, text), force=force)
    assert not result.notes, result.notes
    return result


def argv(text: str, launch: LaunchCommand) -> list[tuple[str, str, bool]]:
    return [(t.value, raw(text, t.span), t.exact) for t in launch.argv]


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: kimi-k3   # é😀
spec:
  template:
    spec:
      initContainers:
        - name: warm
          image: lmsysorg/sglang
          command: [python3, -m, sglang.compile_deep_gemm, --model-path, m]
      containers:
        - name: sglang
          image: lmsysorg/sglang:v0.5.23
          command: ["python3", "-m", "sglang.launch_server"]
          args:
            - --model-path
            - "moonshotai/Kimi-K3"
            - --tp-size
            - 8
            - '--attention-backend'
            - cutedsl_mla
          env:
            - name: HF_TOKEN
              valueFrom: {secretKeyRef: {name: hf, key: token}}
            - name: SGLANG_X
              value: "1"
---
apiVersion: v1
kind: Pod
spec:
  containers:
  - name: shell
    command: ["/bin/sh", "-c"]
    args:
    - |
      pip install 'flashinfer-python==0.6.17'
      exec python3 -m sglang.launch_server \\
        --model-path "moonshotai/Kimi-K3" \\
        --dcp-size 8
"""


def test_kubernetes_containers_command_args_env() -> None:
    result = read(DEPLOYMENT)
    assert result.problems == () and result.is_launch_file
    init, main, shell = result.launches
    assert all(launch.surface is Surface.KUBERNETES for launch in result.launches)
    assert init.entry is Entry.NO_CONFIG
    assert main.entry is Entry.LAUNCH_SERVER
    assert argv(DEPLOYMENT, main) == [
        ("--model-path", "--model-path", True),
        ("moonshotai/Kimi-K3", '"moonshotai/Kimi-K3"', True),
        ("--tp-size", "--tp-size", True),
        ("8", "8", True),
        ("--attention-backend", "'--attention-backend'", True),
        ("cutedsl_mla", "cutedsl_mla", True),
    ]
    assert raw(DEPLOYMENT, main.program.span) == '"python3", "-m", "sglang.launch_server"'
    assert [(e.name.value, e.value.value if e.value else None) for e in main.env] == [("HF_TOKEN", None), ("SGLANG_X", "1")]
    assert raw(DEPLOYMENT, main.env[1].value.span) == '"1"'
    # the literal block scalar, lexed with positions mapped through its indentation
    assert argv(DEPLOYMENT, shell) == [
        ("--model-path", "--model-path", True),
        ("moonshotai/Kimi-K3", '"moonshotai/Kimi-K3"', True),
        ("--dcp-size", "--dcp-size", True),
        ("8", "8", True),
    ]
    assert shell.own_pins  # pip install before the launch in the same script


def test_leader_worker_set_templates() -> None:
    text = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
spec:
  leaderWorkerTemplate:
    leaderTemplate:
      spec:
        containers:
          - name: leader
            command:
              - python3
              - -m
              - sglang.launch_server
              - --dist-init-addr
              - $(LWS_LEADER_ADDRESS):20000
    workerTemplate:
      spec:
        containers:
          - name: worker
            command: [sh, -c]
            args: ['python3 -m sglang.launch_server --node-rank $(LWS_WORKER_INDEX) --tp 16']
"""
    leader, worker = read(text).launches
    assert argv(text, leader) == [
        ("--dist-init-addr", "--dist-init-addr", True),
        ("$(LWS_LEADER_ADDRESS):20000", "$(LWS_LEADER_ADDRESS):20000", False),  # substituted by Kubernetes
    ]
    assert argv(text, worker) == [
        ("--node-rank", "--node-rank", True),
        ("$(LWS_WORKER_INDEX)", "$(LWS_WORKER_INDEX)", False),
        ("--tp", "--tp", True),
        ("16", "16", True),
    ]


def test_compose_string_and_list_commands_with_environment() -> None:
    text = """\
services:
  sglang:
    image: lmsysorg/sglang
    command: python3 -m sglang.launch_server --model-path m --tp 8
    environment:
      - HF_TOKEN=abc
      - NOVALUE
  bench:
    entrypoint: ["python3", "-m", "sglang.launch_server"]
    command: ["--tp", "2"]
    environment:
      SGLANG_X: 1
"""
    result = read(text, "docker-compose.yml")
    a, b = result.launches
    assert a.surface is Surface.COMPOSE
    assert argv(text, a) == [("--model-path", "--model-path", True), ("m", "m", True), ("--tp", "--tp", True), ("8", "8", True)]
    assert [(e.name.value, e.value.value if e.value else None) for e in a.env] == [("HF_TOKEN", "abc"), ("NOVALUE", None)]
    assert raw(text, a.env[0].name.span) == "HF_TOKEN" and raw(text, a.env[0].value.span) == "abc"
    assert argv(text, b) == [("--tp", '"--tp"', True), ("2", '"2"', True)]
    assert [(e.name.value, raw(text, e.value.span)) for e in b.env] == [("SGLANG_X", "1")]


def test_github_actions_run_block_with_crlf_and_expressions() -> None:
    text = (
        "name: serve\r\n"
        "on: push\r\n"
        "env:\r\n"
        "  HF_HOME: /data\r\n"
        "jobs:\r\n"
        "  smoke:\r\n"
        "    runs-on: gpu   # é😀\r\n"
        "    steps:\r\n"
        "      - run: |\r\n"
        "          export SGLANG_X=1\r\n"
        "          python -m sglang.launch_server --model-path m \\\r\n"
        "            --tp-size ${{ matrix.tp }}\t--port 3000 > log &\r\n"
        "      - shell: python\r\n"
        "        run: print('python -m sglang.launch_server')\r\n"
    )
    result = read(text, ".github/workflows/smoke.yml")
    (launch,) = result.launches
    assert launch.surface is Surface.CI_YAML
    assert argv(text, launch) == [
        ("--model-path", "--model-path", True),
        ("m", "m", True),
        ("--tp-size", "--tp-size", True),
        ("${{ matrix.tp }}", "${{ matrix.tp }}", False),
        ("--port", "--port", True),
        ("3000", "3000", True),
    ]
    assert [(e.name.value, e.value.value) for e in launch.env] == [("HF_HOME", "/data"), ("SGLANG_X", "1")]


@pytest.mark.parametrize(
    ("scalar", "expected"),
    [
        # plain, single-quoted, double-quoted without escapes: exact
        ("python3 -m sglang.launch_server --tp 8", [("--tp", "--tp", True), ("8", "8", True)]),
        ("'python3 -m sglang.launch_server --x ''a b'''", [("--x", "--x", True), ("a b", "''a b''", False)]),
        ('"python3 -m sglang.launch_server --tp 8"', [("--tp", "--tp", True), ("8", "8", True)]),
        # double-quoted escapes: the escaped token is not exact, its neighbours are
        ('"python3 -m sglang.launch_server --x \\"a\\" --tp\\t8"', [("--x", "--x", True), ("a", '\\"a\\"', False), ("--tp", "--tp", True), ("8", "8", True)]),
        # folded block: each token is still on one line
        (">\n    python3 -m sglang.launch_server\n    --tp 8\n    --dp 2", [("--tp", "--tp", True), ("8", "8", True), ("--dp", "--dp", True), ("2", "2", True)]),
        # multi-line plain scalar: folded into one line
        ("python3 -m sglang.launch_server\n    --tp 8", [("--tp", "--tp", True), ("8", "8", True)]),
        # literal block with a more-indented line and a tab
        ("|-\n    python3 -m sglang.launch_server \\\n        --tp\t8", [("--tp", "--tp", True), ("8", "8", True)]),
    ],
)
def test_scalar_styles_map_positions(scalar: str, expected: list) -> None:
    text = f"# é😀\nscript:\n  - {scalar}\n"
    (launch,) = read(text, "ci/job.yml").launches
    assert argv(text, launch) == expected


def test_gitlab_script_list_and_variables() -> None:
    text = """\
variables:
  MODEL: moonshotai/Kimi-K3
  TP: {value: "8", description: tp}
serve:
  script:
    - pip install -r requirements.txt
    - python3 -m sglang.launch_server --model-path "$MODEL" --tp "$TP"
"""
    (launch,) = read(text, ".gitlab-ci.yml").launches
    assert [(e.name.value, e.value.value) for e in launch.env] == [("MODEL", "moonshotai/Kimi-K3"), ("TP", "8")]
    assert raw(text, launch.env[1].value.span) == '"8"'


def test_skypilot_run_and_envs() -> None:
    text = """\
resources:
  accelerators: H200:8
envs:
  MODEL: moonshotai/Kimi-K3
setup: |
  pip install "sglang[all]==0.5.23"
run: |
  sglang serve $MODEL --tp 8 \\
    --dcp-size 8 --decode-attention-backend cutedsl_mla
"""
    (launch,) = read(text, "sky/k3.yaml").launches
    assert launch.entry is Entry.SERVE and launch.surface is Surface.CI_YAML
    assert [raw(text, t.span) for t in launch.argv] == ["$MODEL", "--tp", "8", "--dcp-size", "8", "--decode-attention-backend", "cutedsl_mla"]
    assert [e.name.value for e in launch.env] == ["MODEL"]
    assert launch.own_pins


def test_aliases_are_not_read_twice() -> None:
    text = """\
x-common: &cmd
  command: ["python3", "-m", "sglang.launch_server", "--tp", "8"]
services:
  a: *cmd
  b:
    <<: *cmd
"""
    result = read(text, "compose.yaml")
    assert len(result.launches) == 1


def test_problems_in_launch_scripts_only() -> None:
    text = """\
description: "it's not a script, sglang is just mentioned"
steps:
  - run: python3 -m sglang.launch_server --x 'oops
"""
    result = read(text, "ci/job.yml")
    (problem,) = result.problems
    assert problem.message == "unterminated single quote"
    assert raw(text, problem.span) == "'"


def test_yaml_without_launch_is_not_a_launch_file() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n"
    result = read(text)
    assert result.launches == () and not result.is_launch_file and result.problems == ()


def test_broken_yaml_mentioning_sglang() -> None:
    text = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: lmsysorg/sglang\n    command: [python3\n"
    result = read(text)
    assert result.is_launch_file and result.problems
    later_doc = "apiVersion: v1\nkind: Pod\nspec: {containers: [{command: [python3, -m, sglang.launch_server, --model-path, m]}]}\n---\nbad: [\n"
    result = read(later_doc)
    assert len(result.launches) == 1 and result.problems  # documents before the error still count


def test_alias_bomb_in_kubernetes_file() -> None:
    text = "apiVersion: v1\nkind: List\nimage: lmsysorg/sglang\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for name, prev in zip("bcdef", "abcde"):
        text += f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]\n"
    result = read(text)
    assert result.problems and "alias" in result.problems[0].message


@pytest.mark.parametrize(
    ("name", "text", "surface"),
    [
        ("k8s/deploy.yaml", "apiVersion: v1\nkind: Pod\n", Surface.KUBERNETES),
        ("k8s/all.yaml", "a: 1\n---\napiVersion: v1\nkind: Pod\n", Surface.KUBERNETES),
        ("docker-compose.yml", "services:\n  a: {image: x}\n", Surface.COMPOSE),
        (".github/workflows/ci.yml", "on: push\njobs: {}\n", Surface.CI_YAML),
        (".gitlab-ci.yml", "stages: [a]\n", Surface.CI_YAML),
        ("sky.yaml", "run: python -m sglang.launch_server --tp 8\n", Surface.CI_YAML),
        ("random.yaml", "a: 1\n", None),
    ],
)
def test_detect_embedded(name: str, text: str, surface: Surface | None) -> None:
    assert detect_surface(Path("/repo") / name, text) is surface


def test_a_scalar_of_one_word_per_command_is_not_lexed_and_that_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """``app: sglang-1163`` mentions sglang but cannot run it: with no blank (and no process
    substitution) every command of the scalar is one word, and a launch, a pip install or a
    ``cd`` takes two. Such scalars are skipped; here every such scalar a grammar of shell
    pieces makes reads the same with the shortcut turned off."""
    import itertools
    import json
    import random
    import re

    from kimi_lsp.surfaces import yaml_embedded

    pieces = ["sglang", "python3", "-m", "sglang.launch_server", "sglang-1163", ";", "&&", "|", "(", ")", "<", ">",
              "<(", "$'x\\x20'", "'a'", '"b"', "\\", "$(", "`", "=", "A=", "serve", "torchrun", "sh", "-c", "#", "{", "}",
              "/opt/sglang/", "docker", "run", "env", "pip", "install", "cd"]
    rng = random.Random(7)
    scalars = {"".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(2000)}
    scalars |= {"".join(p) for p in itertools.product(["python3", "sglang", "torchrun"], [";", "&&", "<(", ">"],
                                                       ["sglang.launch_server", "serve", "-m"])}
    scalars = {s for s in scalars if "sglang" in s.lower()}
    skipped = [s for s in scalars if yaml_embedded._SEPARATES_WORDS.search(s) is None
               and yaml_embedded._LAUNCH_HINT.search(s) is None]
    assert len(skipped) > 250

    def outcome(value: str) -> str:
        text = "steps:\n  - run: " + json.dumps(value) + "\n"
        r = read_surface(SourceText(Path("/repo/.github/workflows/ci.yml"), text))
        return repr((r.launches, r.problems, r.is_launch_file))

    fast = [outcome(s) for s in skipped]
    monkeypatch.setattr(yaml_embedded, "_SEPARATES_WORDS", re.compile(r"(?s)."))  # never skip
    assert [outcome(s) for s in skipped] == fast
    assert all("LaunchCommand" not in o for o in fast)
    assert "LaunchCommand" in outcome("python3 -m sglang.launch_server --model-path m")  # the harness reads launches


def test_where_sglang_is_written_is_found_as_the_case_blind_regex_finds_it() -> None:
    from kimi_lsp.surfaces.yaml_embedded import _SGLANG, _offsets_of_sglang

    for text in ["", "sglang", "SGLang sglangsglang x-SGLANG", "ſglang sglang", "no", "sglan", "İ sglang ſ SGLANG",
                 "app: sglang-1163\nimage: lmsysorg/sglang:v0.5.23\n" * 3]:
        assert _offsets_of_sglang(text) == [m.start() for m in _SGLANG.finditer(text)], text


def test_compose_command_gives_a_built_image_entrypoint_its_arguments(tmp_path: Path) -> None:
    # compose appends `command:` to the ENTRYPOINT of the image `build:` makes (it replaces only
    # CMD): with an exec-form launch ENTRYPOINT, the command's words are the launch's arguments
    (tmp_path / "Dockerfile").write_text(
        'FROM lmsysorg/sglang:v0.5.9\nENV SGLANG_X=1\nENTRYPOINT ["python3", "-m", "sglang.launch_server", "--host", "0.0.0.0"]\n'
    )
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "Dockerfile.multi").write_text(
        'FROM a AS serve\nENTRYPOINT ["sglang", "serve"]\n'
        "FROM b AS shellform\nENTRYPOINT python3 -m sglang.launch_server\n"
        'FROM c\nENTRYPOINT ["/entrypoint.sh"]\n'
    )
    text = """\
services:
  server:
    build: .
    command: --model-path m --tp 2
  target:
    build: {context: docker, dockerfile: Dockerfile.multi, target: serve}
    command: ["--model-path", "m"]
  shellform:
    build: {context: docker, dockerfile: Dockerfile.multi, target: shellform}
    command: --model-path m
  script:
    build: {context: docker, dockerfile: Dockerfile.multi}
    command: --model-path m
  nocommand:
    build: .
  remote:
    build: https://example.com/repo.git#main
    command: --model-path m
"""
    result = read_surface(SourceText(tmp_path / "compose.yaml", text))
    a, b = result.launches
    assert a.entry is Entry.LAUNCH_SERVER and a.surface is Surface.COMPOSE
    assert [(t.value, raw(text, t.span), t.exact) for t in a.argv] == [
        ("--host", ".", False), ("0.0.0.0", ".", False),
        ("--model-path", "--model-path", True), ("m", "m", True), ("--tp", "--tp", True), ("2", "2", True),
    ]
    assert [(e.name.value, raw(text, e.name.span)) for e in a.env] == [("SGLANG_X", ".")]
    assert b.entry is Entry.SERVE and [t.value for t in b.argv] == ["--model-path", "m"]
    assert raw(text, b.program.span).startswith("Dockerfile.multi")


def test_official_images_given_only_arguments_run_no_server_launch() -> None:
    # No lmsysorg/sglang image sets an ENTRYPOINT (the CUDA base image's entry point runs its
    # arguments as a command), and the router images' ENTRYPOINT is the router: a container
    # with only `args:` (Kubernetes) or only `command:` (compose) runs no server launch.
    k8s = """\
apiVersion: v1
kind: Pod
metadata: {name: sglang}
spec:
  containers:
    - name: server
      image: lmsysorg/sglang:v0.5.9-cu129
      args: ["--model-path", "Qwen/Qwen3-8B", "--tp", "2"]
    - name: router
      image: lmsysorg/sglang-router:v0.2.4
      args: ["--worker-urls", "http://server:30000"]
"""
    compose = """\
services:
  sglang:
    image: lmsysorg/sglang:v0.5.9-cu129
    command: --model-path Qwen/Qwen3-8B --tp 2
"""
    assert read(k8s).launches == ()
    assert read(compose, "compose.yaml").launches == ()


def test_a_changed_dockerfile_reads_the_compose_launch_again(tmp_path: Path) -> None:
    # the compose file's launch was read through the Dockerfile its `build:` names: the lint
    # depends on it (the server re-lints on its change) and the engine reads the compose again
    from kimi_lsp.engine import Engine
    from kimi_lsp.workspace import Workspace

    (tmp_path / ".git").mkdir()
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text('FROM lmsysorg/sglang:v0.5.9\nENTRYPOINT ["/start.sh"]\n')
    compose = tmp_path / "compose.yaml"
    compose.write_text("services:\n  server:\n    build: .\n    command: --model-path m --enable-dp-attenton\n")
    eng = Engine(Workspace(tmp_path))
    first = eng.lint_file(compose)
    assert first.launches == 0 and dockerfile in first.depends_on
    dockerfile.write_text('FROM lmsysorg/sglang:v0.5.9\nENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n')
    eng.invalidate(dockerfile)  # the watcher's event for the Dockerfile only
    again = eng.lint_file(compose)
    assert again.launches == 1 and [d.code for d in again.diagnostics] == ["KL201"]


def test_compose_shell_c_entrypoint_with_a_string_command_does_not_run_it() -> None:
    # compose splits a string command into words: `sh -c` runs only the first (docker/compose#12403)
    text = """\
services:
  split:
    image: lmsysorg/sglang:v0.5.9
    entrypoint: ["/bin/bash", "-lc"]
    command: python3 -m sglang.launch_server --model-path m --tp 2
  whole:
    image: lmsysorg/sglang:v0.5.9
    entrypoint: ["sh", "-c"]
    command: "'python3 -m sglang.launch_server --model-path m'"
"""
    split, whole = read(text, "compose.yaml").launches
    assert [t.value for t in split.argv] == ["--model-path", "m", "--tp", "2"]
    assert split.doubt is not None and "`/bin/bash -lc` runs only `python3`" in split.doubt
    assert split.image is not None and split.image.value == "lmsysorg/sglang:v0.5.9"
    assert whole.doubt is None and [t.value for t in whole.argv] == ["--model-path", "m"]
