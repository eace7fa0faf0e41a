"""Container launches: the image a launch runs in (docker run IMAGE, Dockerfile FROM) and docker's env."""
from __future__ import annotations

from pathlib import Path

from kimi_lsp.surfaces.dockerfile import read_dockerfile
from kimi_lsp.surfaces.model import Surface
from kimi_lsp.surfaces.shell import find_launches

P = Path("/project/serve.sh")


def cut(text: str, span: object) -> str:
    return text[span.start : span.end]  # type: ignore[attr-defined]


def test_docker_run_image_env_and_argv() -> None:
    text = (
        "docker --context gpu run -dit -p30000:30000 --shm-size=32g -e HF_TOKEN -e NCCL_DEBUG=INFO \\\n"
        "  lmsysorg/sglang:v0.5.23 python3 -m sglang.launch_server --model-path m --tp 8\n"
    )
    (launch,) = find_launches(text, P, Surface.SHELL)
    assert launch.image is not None and cut(text, launch.image.span) == "lmsysorg/sglang:v0.5.23"
    assert [t.value for t in launch.argv] == ["--model-path", "m", "--tp", "8"]
    env = {e.name.value: e.value for e in launch.env}
    assert env["HF_TOKEN"] is None
    assert env["NCCL_DEBUG"] is not None and cut(text, env["NCCL_DEBUG"].span) == "INFO"
    assert not launch.own_pins


def test_docker_entrypoint_option_starts_the_command() -> None:
    text = "docker run --entrypoint python3 img -m sglang.launch_server --model-path m\n"
    (launch,) = find_launches(text, P, Surface.SHELL)
    assert launch.program.value == "python3 -m sglang.launch_server"


def test_docker_unknown_option_or_default_cmd_is_no_launch() -> None:
    assert find_launches("docker run --frobnicate x img python3 -m sglang.launch_server\n", P, Surface.SHELL) == []
    assert find_launches("docker run --rm lmsysorg/sglang:v0.5.23\n", P, Surface.SHELL) == []


def test_dockerfile_launch_image_from_its_stage() -> None:
    text = (
        "ARG BASE=lmsysorg/sglang:v0.5.23-cu130\n"
        "FROM ${BASE} AS runtime\n"
        "FROM runtime\n"
        'CMD ["python3", "-m", "sglang.launch_server", "--model-path", "m"]\n'
    )
    result = read_dockerfile(Path("/project/Dockerfile"), text)
    (launch,) = result.launches
    assert launch.image is not None and launch.image.value == "lmsysorg/sglang:v0.5.23-cu130"
    assert cut(text, launch.image.span) == "${BASE}"


def test_dynamo_sglang_hands_sglang_the_rest_with_a_doubt() -> None:
    text = (
        "python3 -m dynamo.sglang --namespace ns --endpoint=dyn://a.b.c --connector nixl lmcache "
        "--no-fpm-trace --router-mode kv --router-kv-events --dyn-structural-tag --model-path m --tp 2\n"
    )
    (launch,) = find_launches(text, P, Surface.SHELL)
    assert launch.program.value == "python3 -m dynamo.sglang"
    assert [t.value for t in launch.argv] == ["--model-path", "m", "--tp", "2"]
    assert launch.doubt is not None and "dynamo.sglang" in launch.doubt


def test_docker_entrypoint_option_with_glued_value() -> None:
    # `--entrypoint=python3`: the program is the part after `=` (was: no launch at all)
    text = "docker run --rm --entrypoint=python3 img -m sglang.launch_server --model-path m --tp 2\n"
    (launch,) = find_launches(text, P, Surface.SHELL)
    assert launch.program.value == "python3 -m sglang.launch_server"
    assert text[launch.program.span.start :].startswith("python3 img")
    assert [t.value for t in launch.argv] == ["--model-path", "m", "--tp", "2"]
    assert launch.image is not None and launch.image.value == "img"
    # `--entrypoint=` / `--entrypoint=""` clear the image's entry point: the command runs as written
    for clear in ("--entrypoint=", '--entrypoint=""'):
        (launch,) = find_launches(f"docker run {clear} img python3 -m sglang.launch_server --tp 2\n", P, Surface.SHELL)
        assert [t.value for t in launch.argv] == ["--tp", "2"]


def test_docker_run_official_image_with_only_flags_is_no_launch() -> None:
    # No lmsysorg/sglang image sets an ENTRYPOINT (sglang's docker/Dockerfile*; the CUDA base
    # image's entry point runs its arguments as a command): `--model-path` would be the program.
    # The router/gateway images' ENTRYPOINT is the router (sglang_router.launch_router), not
    # the server: their flags are no server launch either.
    for image in ("lmsysorg/sglang:v0.5.9-cu129", "lmsysorg/sglang-router:v0.2.4", "lmsysorg/sgl-model-gateway:v0.3.0"):
        text = f"docker run --gpus all {image} --model-path Qwen/Qwen3-8B --tp 2\n"
        assert find_launches(text, P, Surface.SHELL) == []


def test_docker_run_of_an_image_built_in_the_same_script(tmp_path: Path) -> None:
    # `docker build -t TAG` earlier in the text names TAG's Dockerfile; its exec-form ENTRYPOINT
    # runs with the words after the image. Where the script runs decides the file: a doubt.
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "Dockerfile").write_text(
        "FROM lmsysorg/sglang:v0.5.9 AS shell\nENTRYPOINT python3 -m sglang.launch_server\n"
        'FROM lmsysorg/sglang:v0.5.9\nENV SGLANG_X=1\nENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n'
    )
    text = (
        "docker run img --tp 2\n"  # before the build: not known yet
        "docker build --no-cache -t img -t team/img:1 -f srv/Dockerfile srv\n"
        "docker run --rm -e A=1 img:latest --model-path m --tp 2\n"
        "docker run team/img:1 --model-path m\n"
        "docker run img\n"  # the image's own CMD: read in the Dockerfile
        "docker run other --model-path m\n"
        "docker build --target shell -t sh-img srv\n"
        "docker run sh-img --model-path m\n"  # shell-form ENTRYPOINT ignores the words
        "docker build --frobnicate -t odd srv\n"
        "docker run odd --model-path m\n"  # a build option we cannot read: its tag is unknown
    )
    a, b = find_launches(text, tmp_path / "run.sh", Surface.SHELL)
    assert a.program.value == "python3 -m sglang.launch_server" and cut(text, a.program.span).startswith("img:latest")
    assert [(t.value, t.exact) for t in a.argv] == [("--model-path", True), ("m", True), ("--tp", True), ("2", True)]
    assert [e.name.value for e in a.env] == ["SGLANG_X", "A"]
    assert a.doubt is not None and "srv/Dockerfile" in a.doubt
    assert a.image is not None and a.image.value == "img:latest"
    assert [t.value for t in b.argv] == ["--model-path", "m"]


def test_entry_point_script_handed_a_launch_is_a_guessed_launch() -> None:
    # ENTRYPOINT ["/entrypoint.sh"] + CMD [launch]: the script usually ends with exec "$@"
    text = (
        "FROM lmsysorg/sglang:v0.5.9\n"
        'ENTRYPOINT ["/opt/nvidia/nvidia_entrypoint.sh"]\n'
        'CMD ["python3", "-m", "sglang.launch_server", "--model-path", "m"]\n'
    )
    (launch,) = read_dockerfile(Path("/project/Dockerfile"), text).launches
    assert [t.value for t in launch.argv] == ["--model-path", "m"]
    assert launch.doubt is not None and "nvidia_entrypoint.sh" in launch.doubt
    # a shell running the script (`bash /entrypoint.sh`) hands it the launch the same way
    bash = text.replace('["/opt/nvidia/nvidia_entrypoint.sh"]', '["bash", "/docker-entrypoint.sh"]')
    (launch,) = read_dockerfile(Path("/project/Dockerfile"), bash).launches
    assert launch.doubt is not None and "/docker-entrypoint.sh" in launch.doubt
    # a shell or a program that is no entry-point script is not looked through
    for ep in ('["/bin/sh"]', '["tail", "-f"]', '["/usr/bin/env"]'):
        other = text.replace('["/opt/nvidia/nvidia_entrypoint.sh"]', ep)
        assert all(lc.doubt is None for lc in read_dockerfile(Path("/project/Dockerfile"), other).launches)


def test_docker_run_entry_point_script_handed_a_launch() -> None:
    text = "docker run --entrypoint /opt/entrypoint.sh img python3 -m sglang.launch_server --model-path m\n"
    (launch,) = find_launches(text, P, Surface.SHELL)
    assert [t.value for t in launch.argv] == ["--model-path", "m"]
    assert launch.doubt is not None and "/opt/entrypoint.sh" in launch.doubt
