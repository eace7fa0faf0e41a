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
