"""The link from an image a Kubernetes container names to the Dockerfile this repository builds
it from (a `docker build -t` line, a compose `build:` + `image:`), and the args-only launch read
through that Dockerfile's ENTRYPOINT (issue 31)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kimi_lsp.surfaces import built_images, read_surface
from kimi_lsp.surfaces.built_images import find_built
from kimi_lsp.workspace import SourceText

ENTRY = 'FROM lmsysorg/sglang:v0.5.9\nENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n'
DEPLOY = (
    "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
    "        - name: s\n          image: {image}\n          {extra}args: [--model-path, m, --tp, '2']\n"
)


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_docker_build_line_in_a_makefile_links_file_and_stage(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"Makefile": "image:\n\t@docker build -t acme/srv:1 -f docker/Dockerfile.srv --target run \\\n\t  docker\n"})
    reads: list[Path] = []
    built = find_built("acme/srv:1", root / "k8s" / "deploy.yaml", reads)
    assert built is not None
    assert built.dockerfile == root / "docker" / "Dockerfile.srv" and built.target == "run"
    assert built.source == root / "Makefile" and reads == [root / "Makefile"]


def test_readme_prompt_and_untagged_name_mean_latest(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"README.md": "```bash\n$ docker build -t acme/srv .\n```\n"})
    assert find_built("acme/srv:latest", root / "d.yaml", []) is not None
    assert find_built("acme/srv", root / "d.yaml", []) is not None
    assert find_built("acme/srv:2", root / "d.yaml", []) is None  # another tag: another build
    assert find_built("other/acme/srv", root / "d.yaml", []) is None


def test_compose_service_with_build_and_image(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"compose.yaml": "services:\n  srv:\n    image: acme/srv:1\n    build:\n      context: ./img\n      dockerfile: Dockerfile.gpu\n"})
    built = find_built("acme/srv:1", root / "d.yaml", [])
    assert built is not None and built.dockerfile == root / "img" / "Dockerfile.gpu" and built.how == "compose `build:`"


@pytest.mark.parametrize("files", [
    {"build.sh": "# docker build -t acme/srv:1 .\n"},  # commented out: not run
    {"a.sh": "docker build -t acme/srv:1 a\n", "b.sh": "docker build -t acme/srv:1 b\n"},  # which one: unknown
    {"build.sh": "docker build -t acme/srv:1 -f $DF .\n"},  # a variable names the Dockerfile
])
def test_no_link_when_not_plainly_one_build(tmp_path: Path, files: dict[str, str]) -> None:
    root = _repo(tmp_path, files)
    assert find_built("acme/srv:1", root / "d.yaml", []) is None


def test_image_with_a_variable_is_never_linked(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"build.sh": "docker build -t acme/srv:1 .\n"})
    assert find_built("acme/srv:$(TAG)", root / "d.yaml", []) is None


def test_only_files_naming_the_image_are_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"s{i}.sh": f"docker build -t acme/other{i}:1 .\n" for i in range(60)}
    files["build.sh"] = "docker build -t acme/srv:1 .\n"
    root = _repo(tmp_path, files)
    parsed: list[Path] = []
    real = built_images._builds_in
    monkeypatch.setattr(built_images, "_builds_in", lambda p, t, r: parsed.append(p) or real(p, t, r))
    assert find_built("acme/srv:1", root / "d.yaml", []) is not None
    assert parsed == [root / "build.sh"]


def test_args_only_container_reads_the_built_entrypoint_with_a_doubt(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"Dockerfile": ENTRY, "build.sh": "docker build -t acme/sglang-srv:1 .\n"})
    text = DEPLOY.format(image="acme/sglang-srv:1", extra="")
    result = read_surface(SourceText(root / "deploy.yaml", text))
    (launch,) = result.launches
    assert launch.program.value == "python3 -m sglang.launch_server"
    assert [t.value for t in launch.argv] == ["--model-path", "m", "--tp", "2"]
    assert launch.doubt is not None and "build.sh" in launch.doubt and "Dockerfile" in launch.doubt
    assert set(result.reads) == {root / "build.sh", root / "Dockerfile"}


def test_container_with_a_command_or_an_unbuilt_image_is_not_read_through_a_build(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"Dockerfile": ENTRY, "build.sh": "docker build -t acme/sglang-srv:1 .\n"})
    with_command = DEPLOY.format(image="acme/sglang-srv:1", extra="command: [/bin/serve]\n          ")
    assert read_surface(SourceText(root / "deploy.yaml", with_command)).launches == ()
    unbuilt = DEPLOY.format(image="acme/sglang-other:1", extra="")
    assert read_surface(SourceText(root / "deploy.yaml", unbuilt)).launches == ()
