#!/usr/bin/env python3
"""Generate a benchmark corpus: N launch files across every surface, grouped in projects.

    python bench/gen_corpus.py OUT --files N [--seed S] [--per-project K]

OUT becomes a repository (``OUT/.git`` is created, empty: nothing is ever run from it) holding
``projects/pNNNN/`` directories. Each project has its own pin files, copied from the real
lockfiles in ``tests/pins_fixtures`` (a uv project gets a real ``uv.lock`` + ``pyproject.toml``;
others a poetry/pdm/Pipfile/pylock/conda lock or a requirements.txt), and up to K launch files
cycling through the surfaces: sglang ``--config`` YAML, shell scripts (some passing
``--config``), Dockerfiles, Kubernetes manifests, docker compose files, GitHub Actions workflows
and TOML launch profiles. Values vary with the seed so that files differ; about a third of the
launches are Kimi-K3 + DCP + cutedsl_mla (KL101/KL102 territory), the rest are ordinary launches.

Exactly N candidate launch files are written (what ``kimi-lsp --check OUT`` walks), so throughput
is files/second over N. The corpus is deterministic for a given (N, seed, K).
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PINS = REPO / "tests" / "pins_fixtures"

# (name, files copied from tests/pins_fixtures, weight). uv first and heaviest: most projects
# that pin flashinfer-python use uv today.
PIN_FLAVOURS: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("uv-ok", ("uv-lock/ok/uv.lock", "uv-lock/ok/pyproject.toml"), 3),
    ("uv-pinned-old", ("uv-lock/pinned-old/uv.lock", "uv-lock/pinned-old/pyproject.toml"), 2),
    ("uv-range-old", ("uv-lock/range-old/uv.lock", "uv-lock/range-old/pyproject.toml"), 1),
    ("poetry", ("poetry-lock/pinned-old/poetry.lock", "poetry-lock/pinned-old/pyproject.toml"), 1),
    ("pdm", ("pdm-lock/range-old/pdm.lock", "pdm-lock/range-old/pyproject.toml"), 1),
    ("pipenv", ("pipfile-lock/pinned/Pipfile.lock", "pipfile-lock/pinned/Pipfile"), 1),
    ("pylock", ("pylock/uv-export/pylock.toml", "pylock/uv-export/pyproject.toml"), 1),
    ("conda", ("conda-lock/pip-entries/conda-lock.yml", "conda-lock/pip-entries/environment.yml"), 1),
    ("pip-compile", ("pip-compile/hashed/requirements.txt", "pip-compile/hashed/requirements.in",
                     "pip-compile/hashed/constraints.txt"), 1),
    ("requirements", (), 2),  # a hand-written requirements.txt
)

MODELS = ("moonshotai/Kimi-K3", "deepseek-ai/DeepSeek-V3.2", "Qwen/Qwen3-235B-A22B", "meta-llama/Llama-3.3-70B-Instruct")
BACKENDS = ("cutedsl_mla", "flashinfer", "fa3", "triton", "trtllm_mla", "tokenspeed_mla")


class Launch:
    """The flags of one generated launch (rendered differently by each surface)."""

    def __init__(self, rng: random.Random, i: int) -> None:
        self.k3_dcp = i % 3 == 0
        self.model = MODELS[0] if self.k3_dcp else rng.choice(MODELS)
        self.tp = rng.choice((1, 2, 4, 8))
        self.port = 30000 + rng.randrange(1000)
        self.mem = rng.choice(("0.80", "0.85", "0.88", "0.9"))
        self.backend = "cutedsl_mla" if self.k3_dcp else rng.choice(BACKENDS[1:4])
        self.extra = rng.sample(
            [("--max-running-requests", str(rng.choice((64, 128, 256)))),
             ("--chunked-prefill-size", str(rng.choice((4096, 8192)))),
             ("--context-length", str(rng.choice((32768, 131072)))),
             ("--trust-remote-code", None),
             ("--log-level", rng.choice(("info", "warning"))),
             ("--served-model-name", f"svc-{i}")],
            k=rng.randrange(1, 4),
        )

    def flags(self) -> list[tuple[str, str | None]]:
        out: list[tuple[str, str | None]] = [("--model-path", self.model), ("--tp-size", str(self.tp))]
        if self.k3_dcp:
            out.append(("--dcp-size", str(self.tp)))
            out.append(("--decode-attention-backend", self.backend))
        else:
            out.append(("--attention-backend", self.backend))
        out += [("--mem-fraction-static", self.mem), ("--port", str(self.port)), *self.extra]
        return out

    def argv(self) -> list[str]:
        words: list[str] = []
        for flag, value in self.flags():
            words.append(flag)
            if value is not None:
                words.append(value)
        return words


def _config_yaml(ln: Launch, i: int) -> str:
    lines = [f"# sglang --config for deployment {i}"]
    for flag, value in ln.flags():
        key = flag[2:]
        lines.append(f"{key}: true" if value is None else f"{key}: {value}")
    return "\n".join(lines) + "\n"


def _shell(ln: Launch, i: int, config: str | None) -> str:
    head = ["#!/usr/bin/env bash", f"# launch {i}", "set -euo pipefail", "export SGLANG_RAGGED_VERIFY_MODE=static", ""]
    if config is not None:
        return "\n".join(head + [f"python3 -m sglang.launch_server --config {config} --port {ln.port}", ""])
    body = "python3 -m sglang.launch_server \\\n" + " \\\n".join(
        f"  {f}" + (f" {v}" if v is not None else "") for f, v in ln.flags()
    )
    return "\n".join(head) + body + " > server.log 2>&1 &\nwait\n"


def _dockerfile(ln: Launch, i: int) -> str:
    cmd = json.dumps(["python3", "-m", "sglang.launch_server", *ln.argv()])
    return (
        "FROM lmsysorg/sglang:v0.5.23-cu129\n"
        f"LABEL build={i}\n"
        "ENV SGLANG_RAGGED_VERIFY_MODE=static\n"
        "EXPOSE 30000\n"
        f"CMD {cmd}\n"
    )


def _k8s(ln: Launch, i: int) -> str:
    args = "\n".join(f"            - {json.dumps(w)}" for w in ln.argv())
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: sglang-{i}
  labels: {{app: sglang-{i}}}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: sglang-{i}}}
  template:
    metadata:
      labels: {{app: sglang-{i}}}
    spec:
      containers:
        - name: server
          image: lmsysorg/sglang:v0.5.23
          command: ["python3", "-m", "sglang.launch_server"]
          args:
{args}
          env:
            - name: SGLANG_RAGGED_VERIFY_MODE
              value: static
          resources:
            limits:
              nvidia.com/gpu: {ln.tp}
---
apiVersion: v1
kind: Service
metadata:
  name: sglang-{i}
spec:
  ports: [{{port: {ln.port}}}]
"""


def _compose(ln: Launch, i: int) -> str:
    return f"""services:
  sglang:
    image: lmsysorg/sglang:v0.5.23
    command: python3 -m sglang.launch_server {' '.join(ln.argv())}
    environment:
      - SGLANG_RAGGED_VERIFY_MODE=static
    ports: ["{ln.port}:{ln.port}"]
  cache:
    image: redis:7
    command: ["redis-server", "--appendonly", "yes"]
"""


def _gha(ln: Launch, i: int) -> str:
    body = " \\\n".join(["python -m sglang.launch_server", *(f"  {f}" + (f" {v}" if v is not None else "") for f, v in ln.flags())])
    body = body.replace("\n", "\n            ")
    return f"""name: smoke-{i}
on: [push]
jobs:
  serve:
    runs-on: [self-hosted, gpu]
    steps:
      - uses: actions/checkout@v4
      - run: pip install -r requirements.txt
      - name: launch
        run: |
          {body} &
          sleep 600
"""


def _toml(ln: Launch, i: int) -> str:
    lines = [f"# kimi-lsp TOML launch profile {i}", "[sglang]"]
    for flag, value in ln.flags():
        key = flag[2:]
        if value is None:
            lines.append(f"{key} = true")
        elif value.isdigit():
            lines.append(f"{key} = {value}")
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    lines += ["", "[sglang.env]", 'SGLANG_RAGGED_VERIFY_MODE = "static"']
    return "\n".join(lines) + "\n"


SURFACES = ("config", "shell", "dockerfile", "k8s", "compose", "gha", "toml", "shell-config")


def _requirements(rng: random.Random) -> str:
    fi = rng.choice(("0.6.16.post4", "0.6.17", "0.6.18"))
    return f"# serving stack\nsglang==0.5.23\nflashinfer-python=={fi}\ntorch==2.9.1\n"


def write_project(pdir: Path, rng: random.Random, n_files: int, first: int, flavour: tuple[str, tuple[str, ...], int]) -> int:
    """Pin files + ``n_files`` launch files into ``pdir``; returns how many launch files were written."""
    pdir.mkdir(parents=True, exist_ok=True)
    name, files, _ = flavour
    for rel in files:
        shutil.copyfile(PINS / rel, pdir / Path(rel).name)
    if not files:
        (pdir / "requirements.txt").write_text(_requirements(rng), "utf-8")
    written = 0
    last_config: str | None = None
    for k in range(n_files):
        i = first + k
        ln = Launch(rng, i)
        kind = SURFACES[i % len(SURFACES)]
        if kind == "config":
            rel = f"deploy/config-{i}.yaml"
            text = _config_yaml(ln, i)
            last_config = rel
        elif kind == "shell":
            rel, text = f"scripts/serve-{i}.sh", _shell(ln, i, None)
        elif kind == "shell-config":
            # references the project's last --config YAML (checked through this launch)
            cfg = f"../{last_config}" if last_config else None
            rel, text = f"scripts/serve-with-config-{i}.sh", _shell(ln, i, cfg)
        elif kind == "dockerfile":
            rel, text = f"docker/Dockerfile.{i}", _dockerfile(ln, i)
        elif kind == "k8s":
            rel, text = f"k8s/deploy-{i}.yaml", _k8s(ln, i)
        elif kind == "compose":
            rel, text = f"compose/compose-{i}.yaml", _compose(ln, i)
        elif kind == "gha":
            rel, text = f".github/workflows/smoke-{i}.yml", _gha(ln, i)
        else:
            rel, text = f"profiles/profile-{i}.toml", _toml(ln, i)
        path = pdir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        written += 1
    return written


def generate(out: Path, n: int, seed: int = 0, per_project: int = 25) -> dict[str, int]:
    """Write the corpus; returns counts (files, projects, yaml)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / ".git").mkdir()  # a repository root for pin discovery; empty, so no git config/hooks
    rng = random.Random(seed)
    weighted = [f for f in PIN_FLAVOURS for _ in range(f[2])]
    done = projects = 0
    while done < n:
        k = min(per_project, n - done)
        flavour = weighted[projects % len(weighted)]
        done += write_project(out / "projects" / f"p{projects:04d}", rng, k, done, flavour)
        projects += 1
    yaml_files = sum(1 for _ in out.rglob("*.y*ml") if _.parent.name != "projects")
    return {"files": done, "projects": projects, "yaml": yaml_files}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--files", type=int, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--per-project", type=int, default=25)
    ns = p.parse_args(argv)
    print(json.dumps(generate(ns.out, ns.files, ns.seed, ns.per_project)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
