"""Where a launch is written in shell text: the launch matcher every surface shares.

The words come from ``kimi_lsp.syntax.shell`` (the one shell lexer); this module only decides
which commands are launches. ``launches_from_words`` recognises ``python -m sglang.launch_server``,
``sglang serve`` and the benchmark entry points behind the usual wrappers (``exec``, ``env``,
``nohup``, ``srun``, ``mpirun``, ``torchrun``, ``timeout``, ``numactl``, ``taskset``, ``sudo``,
``uv run``, ``conda run`` ...) and follows ``sh -c SCRIPT`` into the script.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kimi_lsp import _regex
from kimi_lsp._record import dataclass, field, replace
from kimi_lsp.surfaces.model import (
    Entry,
    EnvVar,
    LaunchCommand,
    Surface,
    SurfaceResult,
    SyntaxProblem,
    Token,
    mentions_sglang,  # re-exported: it lives in model so that the YAML readers need no shell lexer
)
from kimi_lsp.syntax.shell import (  # re-exported: the surfaces read shell text through these
    ASSIGN_RE,
    DECLARE,
    SHELLS,
    ArrayAssignment,
    Command,
    FlatSource,
    Heredoc,
    MappedSource,
    SimpleCommand,
    Source,
    Word,
    basename,
    env_from_word,
    function_spans,
    heredocs,
    is_heredoc_end,
    iter_commands,
    lex,
    prose_lines,
)
from kimi_lsp.text import Located, Span

__all__ = [
    "Command", "FlatSource", "LaunchContext", "MappedSource", "SimpleCommand", "Source", "Word",
    "basename", "find_launches", "is_pip_install", "iter_commands", "launches_from_commands",
    "launches_from_words", "launches_in_source", "lex", "mentions_sglang", "read_shell", "function_spans",
    "dynamo_worker", "entry_script_launches",
    "written_launches",
]

# --------------------------------------------------------------------------------------------
# Launch matching
# --------------------------------------------------------------------------------------------

LAUNCH_MODULES: dict[str, Entry] = {
    "sglang.launch_server": Entry.LAUNCH_SERVER,
    # These register --config with the server flags but never read the file; their own options
    # (BenchArgs, CompileArgs, the router's) per release: knowledge/entry_points.py.
    "sglang.bench_one_batch": Entry.NO_CONFIG,  # sglang.benchmark.one_batch from 0.5.15, gone in 0.5.21
    "sglang.bench_offline_throughput": Entry.NO_CONFIG,
    "sglang_router.launch_server": Entry.NO_CONFIG,  # (sglang_router.launch_router is no server launch)
    "sglang.bench_one_batch_server": Entry.NO_CONFIG,
    "sglang.benchmark.one_batch_server": Entry.NO_CONFIG,
    "sglang.benchmark.one_batch": Entry.NO_CONFIG,
    "sglang.benchmark.offline_throughput": Entry.NO_CONFIG,
    "sglang.compile_deep_gemm": Entry.NO_CONFIG,
}
_SERVE_MODULES = frozenset({"sglang.cli.main"})  # python -m sglang.cli.main serve ...
_TORCHRUN_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch"})
_PYTHON_RE = _regex.compile(r"python(?:\d+(?:\.\d+)*)?t?(?:-dbg)?(?:\.exe)?")
_PIP_RE = _regex.compile(r"pip(?:\d+(?:\.\d+)*)?")
MAX_NESTING = 8  # sh -c "sh -c '...'" levels followed


@dataclass(frozen=True)
class _Wrapper:
    """A command that runs another command after its own options."""

    with_value: frozenset[str] = frozenset()  # options whose value is the next word
    two_values: frozenset[str] = frozenset()  # options followed by two words (mpirun --mca k v)
    positionals: int = 0  # words before the wrapped command (timeout DURATION)
    subcommand: str | None = None  # uv run, conda run
    env_words: bool = False  # NAME=value words before the command set the environment (env, sudo)


def _opts(*names: str) -> frozenset[str]:
    return frozenset(names)


_SRUN_VALUES = _opts(
    "-A", "-b", "-c", "-C", "-d", "-D", "-e", "-G", "-i", "-J", "-L", "-m", "-n", "-N", "-o", "-p",
    "-q", "-r", "-S", "-t", "-T", "-w", "-W", "-x",
    "--account", "--acctg-freq", "--begin", "--bcast", "--chdir", "--comment", "--constraint",
    "--container", "--container-image", "--container-mounts", "--container-workdir",
    "--container-name", "--container-env", "--cores-per-socket", "--cpu-bind", "--cpu-freq",
    "--cpus-per-gpu", "--cpus-per-task", "--dependency", "--distribution", "--epilog", "--error",
    "--exclude", "--export", "--gid", "--gpu-bind", "--gpus", "--gpus-per-node", "--gpus-per-socket",
    "--gpus-per-task", "--gres", "--gres-flags", "--het-group", "--hint", "--input", "--job-name",
    "--jobid", "--licenses", "--mcs-label", "--mem", "--mem-bind", "--mem-per-cpu", "--mem-per-gpu",
    "--mincpus", "--mpi", "--network", "--nodefile", "--nodelist", "--nodes", "--ntasks",
    "--ntasks-per-core", "--ntasks-per-gpu", "--ntasks-per-node", "--ntasks-per-socket", "--output",
    "--partition", "--prolog", "--qos", "--reservation", "--signal", "--slurmd-debug",
    "--sockets-per-node", "--switches", "--task-epilog", "--task-prolog", "--threads-per-core",
    "--time", "--time-min", "--tmp", "--uid", "--wait", "--wckey",
)
_MPI_VALUES = _opts(
    "-np", "-n", "-c", "-N", "-H", "-host", "--host", "-hostfile", "--hostfile", "-machinefile",
    "--machinefile", "-f", "-x", "--map-by", "-map-by", "--bind-to", "-bind-to", "--rank-by",
    "-rank-by", "-ppn", "--npernode", "-npernode", "--npersocket", "-wdir", "--wdir", "-wd",
    "--prefix", "-prefix", "-output-filename", "--output-filename", "-bootstrap", "-iface",
    "-genvlist", "-envlist", "--app", "-launcher", "-rmk", "-hosts",
)
_MPI_TWO = _opts("--mca", "-mca", "-gmca", "--gmca", "-genv", "-env", "--genv")
_TORCHRUN_VALUES = frozenset(
    spelling
    for name in (
        "nnodes", "nproc-per-node", "rdzv-backend", "rdzv-endpoint", "rdzv-id", "rdzv-conf",
        "max-restarts", "monitor-interval", "start-method", "role", "log-dir", "redirects", "tee",
        "local-ranks-filter", "node-rank", "master-addr", "master-port", "local-addr", "logs-specs",
        "numa-binding", "event-log-handler", "signals-to-handle",
    )
    for spelling in (f"--{name}", f"--{name.replace('-', '_')}")
) | _opts("-r", "-t")
_TORCHRUN_MODULE_FLAGS = _opts("-m", "--module")

_NSYS_VALUES = _opts(
    "-o", "--output", "-t", "--trace", "-s", "--sample", "-b", "--backtrace", "-c", "--capture-range",
    "--capture-range-end", "-d", "--duration", "-y", "--delay", "-f", "--force-overwrite", "-e", "--env-var",
    "-w", "--show-output", "-x", "--stop-on-exit", "-n", "--inherit-environment", "-p", "--nvtx-capture",
    "--stats", "--export", "--cuda-graph-trace", "--cuda-memory-usage", "--cudabacktrace", "--gpu-metrics-device",
    "--gpu-metrics-devices", "--gpu-metrics-frequency", "--gpu-metrics-set", "--gpuctxsw", "--kill",
    "--python-sampling", "--python-sampling-frequency", "--python-backtrace", "--pytorch", "--session-new",
    "--session", "--trace-fork-before-exec", "--wait", "--cpuctxsw", "--osrt-threshold", "--nic-metrics",
    "--mpi-impl", "--cuda-um-cpu-page-faults", "--cuda-um-gpu-page-faults", "--cuda-flush-interval",
    "--nvtx-domain-include", "--nvtx-domain-exclude", "--sampling-frequency", "--sampling-period",
    "--event-sample", "--cpu-core-events", "--run-as", "--hotkey-capture", "--command-file", "--resolve-symbols",
    "--vulkan-gpu-workload", "--dask", "--cuda-event-trace", "--ib-switch-metrics-devices", "--start-later",
)
_WRAPPERS: dict[str, _Wrapper] = {
    "exec": _Wrapper(_opts("-a")),
    "env": _Wrapper(_opts("-u", "--unset", "-C", "--chdir", "-S", "--split-string"), env_words=True),
    "nohup": _Wrapper(),
    "setsid": _Wrapper(),
    "unbuffer": _Wrapper(),
    "command": _Wrapper(),
    "builtin": _Wrapper(),
    "time": _Wrapper(_opts("-o", "-f", "--output", "--format")),
    "timeout": _Wrapper(_opts("-s", "--signal", "-k", "--kill-after"), positionals=1),
    "nice": _Wrapper(_opts("-n", "--adjustment")),
    "ionice": _Wrapper(_opts("-c", "-n", "--class", "--classdata")),
    "chrt": _Wrapper(positionals=1),
    "numactl": _Wrapper(
        _opts(
            "-N", "-m", "-C", "-i", "-p", "-P", "--cpunodebind", "--membind", "--physcpubind",
            "--interleave", "--preferred", "--preferred-many", "--weighted-interleave",
        )
    ),
    "taskset": _Wrapper(positionals=1),
    # `nsys profile -o out --trace cuda,nvtx python -m sglang.launch_server ...` (Nsight Systems):
    # nearly every option takes a value; one we do not list misreads the command as no launch
    "nsys": _Wrapper(_NSYS_VALUES, subcommand="profile"),
    "sudo": _Wrapper(
        _opts(
            "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--host",
            "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user",
            "--command-timeout",
        ),
        env_words=True,
    ),
    "stdbuf": _Wrapper(_opts("-i", "-o", "-e", "--input", "--output", "--error")),
    "srun": _Wrapper(_SRUN_VALUES),
    "mpirun": _Wrapper(_MPI_VALUES, _MPI_TWO),
    "mpiexec": _Wrapper(_MPI_VALUES, _MPI_TWO),
    "mpiexec.hydra": _Wrapper(_MPI_VALUES, _MPI_TWO),
    "uv": _Wrapper(
        _opts(
            "--with", "--with-editable", "--with-requirements", "--python", "-p", "--project",
            "--directory", "--env-file", "--extra", "--group", "--only-group", "--no-group", "--index",
            "--default-index", "--index-url", "--extra-index-url", "-i", "--package", "--config-file",
            "--cache-dir", "--python-preference", "--find-links", "-f", "--index-strategy",
            "--keyring-provider", "--resolution", "--prerelease", "--exclude-newer", "--link-mode",
            "-C", "--config-setting", "--refresh-package", "--upgrade-package", "-P",
            "--reinstall-package", "--no-binary-package", "--no-build-package", "--color",
            "--allow-insecure-host", "--python-platform", "--no-extra",
        ),
        subcommand="run",
    ),
    "conda": _Wrapper(_opts("-n", "--name", "-p", "--prefix", "--cwd"), subcommand="run"),
    "mamba": _Wrapper(_opts("-n", "--name", "-p", "--prefix", "--cwd"), subcommand="run"),
    "micromamba": _Wrapper(
        _opts("-n", "--name", "-p", "--prefix", "--cwd", "-r", "--root-prefix", "-a", "--attach"),
        subcommand="run",
    ),
    "poetry": _Wrapper(_opts("-C", "--directory", "-P", "--project"), subcommand="run"),
    "pdm": _Wrapper(_opts("-p", "--project"), subcommand="run"),
    "pipenv": _Wrapper(subcommand="run"),
    "pixi": _Wrapper(_opts("-e", "--environment", "--manifest-path"), subcommand="run"),
    "apptainer": _Wrapper(
        _opts("-B", "--bind", "--env", "--env-file", "-H", "--home", "-W", "--workdir", "--pwd", "-o", "--overlay"),
        positionals=1,
        subcommand="exec",
    ),
    "singularity": _Wrapper(
        _opts("-B", "--bind", "--env", "--env-file", "-H", "--home", "-W", "--workdir", "--pwd", "-o", "--overlay"),
        positionals=1,
        subcommand="exec",
    ),
}


# docker run / docker exec (docker CLI's option tables, `docker run --help`): options that take a
# value, and the boolean ones. An option in neither makes the command unreadable: mis-splitting
# IMAGE from the command would check the wrong words.
_DOCKER_RUN_VALUES = _opts(
    "-a", "--attach", "--add-host", "--annotation", "--blkio-weight", "--blkio-weight-device",
    "--cap-add", "--cap-drop", "--cgroup-parent", "--cgroupns", "--cidfile", "--cpu-count",
    "--cpu-percent", "--cpu-period", "--cpu-quota", "--cpu-rt-period", "--cpu-rt-runtime", "-c",
    "--cpu-shares", "--cpus", "--cpuset-cpus", "--cpuset-mems", "--detach-keys", "--device",
    "--device-cgroup-rule", "--device-read-bps", "--device-read-iops", "--device-write-bps",
    "--device-write-iops", "--dns", "--dns-opt", "--dns-option", "--dns-search", "--domainname",
    "--entrypoint", "-e", "--env", "--env-file", "--expose", "--gpus", "--group-add", "--health-cmd",
    "--health-interval", "--health-retries", "--health-start-interval", "--health-start-period",
    "--health-timeout", "-h", "--hostname", "--io-maxbandwidth", "--io-maxiops", "--ip", "--ip6",
    "--ipc", "--isolation", "--kernel-memory", "-l", "--label", "--label-file", "--link",
    "--link-local-ip", "--log-driver", "--log-opt", "--mac-address", "-m", "--memory",
    "--memory-reservation", "--memory-swap", "--memory-swappiness", "--mount", "--name", "--net",
    "--net-alias", "--network", "--network-alias", "--oom-score-adj", "--pid", "--pids-limit",
    "--platform", "-p", "--publish", "--pull", "--restart", "--runtime", "--security-opt",
    "--shm-size", "--stop-signal", "--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs",
    "--ulimit", "-u", "--user", "--userns", "--uts", "-v", "--volume", "--volume-driver",
    "--volumes-from", "-w", "--workdir",
)
_DOCKER_RUN_FLAGS = _opts(
    "-d", "--detach", "-i", "--interactive", "-t", "--tty", "--rm", "--privileged", "-P",
    "--publish-all", "--init", "--read-only", "--no-healthcheck", "--oom-kill-disable", "--sig-proxy",
    "--disable-content-trust", "-q", "--quiet", "--use-api-socket",
)
_DOCKER_EXEC_VALUES = _opts("--detach-keys", "-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir")
_DOCKER_EXEC_FLAGS = _opts("-d", "--detach", "-i", "--interactive", "-t", "--tty", "--privileged")
_DOCKER_GLOBAL_VALUES = _opts(
    "--config", "-c", "--context", "-H", "--host", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey"
)
_DOCKER_GLOBAL_FLAGS = _opts("-D", "--debug", "--tls", "--tlsverify")
_DOCKERS = frozenset({"docker", "nvidia-docker"})


def _docker_options(
    words: Sequence[Word], j: int, values: frozenset[str], flags: frozenset[str], found: list[tuple[str, Word]]
) -> int | None:
    """Index of the first word after the options at ``words[j:]``; None for an option we cannot
    read. ``found`` gets (option, value word) for each option with a value."""
    n = len(words)
    while j < n:
        w = words[j]
        v = w.value
        if v == "--":
            return j + 1
        if not v.startswith("-") or v == "-":
            return j
        if v.startswith("--"):
            name, eq, _ = v.partition("=")
            if eq:
                if name not in values and name not in flags:
                    return None
                found.append((name, w))
                j += 1
            elif v in values:
                if j + 1 >= n:
                    return None
                found.append((v, words[j + 1]))
                j += 2
            elif v in flags:
                j += 1
            else:
                return None
            continue
        # a cluster of short options (-it, -dit, -p30000:30000): pflag reads the rest of the
        # cluster as the value of the first option that takes one
        k = 1
        while k < len(v):
            letter = "-" + v[k]
            if letter in flags:
                k += 1
                continue
            if letter not in values:
                return None
            if k + 1 < len(v):
                found.append((letter, w))  # the value is glued on; the word stands for it
                j += 1
            else:
                if j + 1 >= n:
                    return None
                found.append((letter, words[j + 1]))
                j += 2
            break
        else:
            j += 1
    return j


def _docker_env(option: str, word: Word) -> EnvVar | None:
    """``-e K=V`` / ``--env K=V`` / ``--env=K=V`` / ``-eK=V``; ``-e K`` passes the host's value."""
    value = word.value
    if option.startswith("--") and word.value.startswith(option + "="):
        value = value[len(option) + 1 :]
    elif option == "-e" and value.startswith("-e"):
        value = value[2:]
    if value == word.value:
        found = env_from_word(word)
        if found is not None:
            return found
    name, eq, rest = value.partition("=")
    if not ASSIGN_RE.fullmatch(name + "="):
        return None
    if eq:
        return EnvVar(Located(name, word.token.span), Located(rest, word.token.span))
    return EnvVar(Located(name, word.token.span), None)


def _after_equals(word: Word) -> Word:
    """The part of ``--option=VALUE`` after the first ``=``, as a word of its own with the span of
    those characters (so the launch's program points at ``python3``, not at the option)."""
    k = word.value.index("=") + 1
    value = word.value[k:]
    chars = word.chars.sub(value, [(a, a + 1) for a in range(k, len(word.value))], word.chars.anchor())
    exact = word.token.exact and word.chars.exact(k, len(word.value))
    subs = tuple((a - k, b - k) for a, b in word.substitutions if a >= k)
    return Word(Token(value, word.chars.span(k, len(word.value)), exact), chars, subs)


def _docker_launches(
    words: Sequence[Word], i: int, ctx: LaunchContext, env: list[EnvVar], head: int | None
) -> list[LaunchCommand]:
    """``docker [global options] run|exec [options] IMAGE|CONTAINER COMMAND...``."""
    n = len(words)
    j = _docker_options(words, i + 1, _DOCKER_GLOBAL_VALUES, _DOCKER_GLOBAL_FLAGS, [])
    if j is None or j >= n:
        return []
    if words[j].value in ("container", "image", "buildx") and j + 1 < n:
        j += 1
    sub = words[j].value
    if sub == "build":
        _note_build(words, j + 1, ctx)
        return []
    if sub not in ("run", "exec"):
        return []
    values, flags = (_DOCKER_RUN_VALUES, _DOCKER_RUN_FLAGS) if sub == "run" else (_DOCKER_EXEC_VALUES, _DOCKER_EXEC_FLAGS)
    options: list[tuple[str, Word]] = []
    j = _docker_options(words, j + 1, values, flags, options)
    if j is None or j >= n:
        return []
    target = words[j]
    command: list[Word] = list(words[j + 1 :])
    run_env = list(env)
    for option, word in options:
        if option in ("-e", "--env"):
            found = _docker_env(option, word)
            if found is not None:
                run_env.append(found)
        elif option == "--entrypoint":
            if word.value.startswith("--entrypoint="):
                word = _after_equals(word)  # `--entrypoint=python3`: the program is the value's part
            if word.value:
                command.insert(0, word)
    if not command:
        return []  # the image's own CMD runs: not written here
    # `docker run IMAGE --flag ...` hands the words to the image's ENTRYPOINT. No official image
    # runs the server that way: sglang's docker/Dockerfile* set no ENTRYPOINT (the CUDA base
    # image's entry point execs its arguments, so `--tp` would be the program) and the router
    # images' ENTRYPOINT is `python3 -m sglang_router.launch_router`. So words after the image
    # that name no program are no server launch (launches_from_words finds none).
    saved = ctx.image, ctx.own_pins
    if sub == "run":
        ctx.image = Located(target.value, target.token.span)
    # the script's own `pip install` lines change the host, not the container
    ctx.own_pins = False
    try:
        launches = launches_from_words(command, ctx, run_env, head)
        if not launches and sub == "run":
            launches = _built_image_launches(target, command, ctx, run_env, head)
        # `--entrypoint /entrypoint.sh IMAGE python3 -m sglang.launch_server ...`
        return launches or entry_script_launches(command, ctx, run_env, head)
    finally:
        ctx.image, ctx.own_pins = saved


# docker build / buildx build (`docker build --help`): options that take a value, and the boolean
# ones; an option in neither leaves the build unread (its tag is then unknown: no launch).
_DOCKER_BUILD_VALUES = _opts(
    "--add-host", "--allow", "--annotation", "--attest", "--build-arg", "--build-context", "--builder",
    "--cache-from", "--cache-to", "--call", "--cgroup-parent", "--cpu-period", "--cpu-quota", "-c",
    "--cpu-shares", "--cpuset-cpus", "--cpuset-mems", "-f", "--file", "--iidfile", "--isolation",
    "--label", "-m", "--memory", "--memory-swap", "--metadata-file", "--network", "-o", "--output",
    "--platform", "--progress", "--provenance", "--sbom", "--secret", "--security-opt", "--shm-size",
    "--ssh", "-t", "--tag", "--target", "--ulimit",
)
_DOCKER_BUILD_FLAGS = _opts(
    "--check", "--compress", "--disable-content-trust", "--force-rm", "--load", "--no-cache", "--pull",
    "--push", "-q", "--quiet", "--rm", "--squash",
)
_BUILT_DOUBT = (
    "kimi-lsp only guesses this is the launch: `{image}` is built by `docker build` in this file from "
    "{dockerfile}, whose ENTRYPOINT runs the server with these words (the directory the commands run "
    "in decides which Dockerfile that is)"
)


@dataclass(frozen=True)
class _Build:
    """``docker build -t TAG [-f FILE] [--target STAGE] CONTEXT`` seen earlier in the same text."""

    dockerfile: Path
    target: str | None


def _image_ref(name: str) -> str:
    """``name`` as docker resolves it: an untagged, undigested name means ``:latest``."""
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last or "@" in name else name + ":latest"


def _note_build(words: Sequence[Word], j: int, ctx: LaunchContext) -> None:
    """Remember which Dockerfile each tag of a ``docker build`` comes from (``ctx.built``)."""
    options: list[tuple[str, Word]] = []
    k = _docker_options(words, j, _DOCKER_BUILD_VALUES, _DOCKER_BUILD_FLAGS, options)
    if k is None or k + 1 != len(words):
        return  # an option we cannot read, no context, or more words than one context
    context = words[k].value
    values: dict[str, list[str]] = {}
    for option, word in options:
        value = word.value
        if value.startswith(option + "=") or (len(option) == 2 and value.startswith(option) and value != option):
            value = value[len(option) + (1 if value.startswith(option + "=") else 0) :]
        values.setdefault(option, []).append(value)
    tags = values.get("-t", []) + values.get("--tag", [])
    files = values.get("-f", []) + values.get("--file", [])
    targets = values.get("--target", [])
    if not tags or len(files) > 1 or len(targets) > 1 or context == "-" or "://" in context or context.startswith("git@"):
        return
    name = files[0] if files else os.path.join(context, "Dockerfile")
    if name == "-" or "$" in name:
        return
    for tag in tags:
        ctx.built[_image_ref(tag)] = _Build(Path(os.path.normpath(ctx.base_dir / name)), targets[0] if targets else None)


def _built_image_launches(
    target: Word, command: Sequence[Word], ctx: LaunchContext, env: list[EnvVar], head: int | None
) -> list[LaunchCommand]:
    """``docker run IMAGE WORDS...`` where the same text built IMAGE from a Dockerfile here whose
    exec-form ENTRYPOINT is a launch: the words are that launch's arguments. The ENTRYPOINT's
    words sit on the image word, not exact; the link is a guess (where the commands run decides
    the Dockerfile), so the launch carries a doubt."""
    build = ctx.built.get(_image_ref(target.value))
    if build is None or not command:
        return []
    from kimi_lsp.surfaces.dockerfile import image_entrypoint  # (dockerfile imports this module)

    from kimi_lsp.workspace import touched

    ctx.reads.append(build.dockerfile)
    touched(build.dockerfile)  # read around the Workspace: the --check result cache must key on it
    try:
        if not build.dockerfile.is_file() or build.dockerfile.stat().st_size > _MAX_DOCKERFILE:
            return []
        text = build.dockerfile.read_text("utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return []
    found = image_entrypoint(text, build.target)
    if found is None:
        return []
    at = target.token.span
    lead = [Word(Token(v, at, False), MappedSource(v, [at.start] * len(v), [at.end] * len(v), at.end)) for v in found[0]]
    image_env = [EnvVar(Located(e.name.value, at), None if e.value is None else Located(e.value.value, at)) for e in found[1]]
    launches = launches_from_words(lead + list(command), ctx, image_env + env, head)
    shown = os.path.relpath(build.dockerfile, ctx.path.parent)
    doubt = _BUILT_DOUBT.format(image=target.value, dockerfile=shown)
    return [replace(lc, doubt=lc.doubt or doubt) for lc in launches if any(t.span != at for t in lc.argv)]


_MAX_DOCKERFILE = 1 << 20  # a Dockerfile named by a build is read only when this small


# An image's entry-point script (`ENTRYPOINT ["/entrypoint.sh"]`, the CUDA images'
# nvidia_entrypoint.sh, a k8s `command: [/start.sh]`) given a launch as its arguments (CMD,
# `args:`, compose `command:`): such scripts set things up and `exec "$@"`, but the script
# decides, so the launch is a guess.
_ENTRY_SCRIPT = _regex.compile(r"[^\s$]*(?:entrypoint[^/\s]*|\.(?:ba)?sh)")
_ENTRY_SCRIPT_DOUBT = (
    "kimi-lsp only guesses this is the launch: it is given to the entry point `{script}`, which "
    "runs it only if it ends with exec \"$@\""
)


def entry_script_launches(
    words: Sequence[Word], ctx: LaunchContext, env: Sequence[EnvVar] = (), head: int | None = None
) -> list[LaunchCommand]:
    """The launch an entry-point script is handed as its arguments (``/entrypoint.sh python3 -m
    sglang.launch_server ...``), with a doubt; none when the first word is no such script."""
    if len(words) > 2 and basename(words[0].value) in SHELLS:
        words = words[1:]  # `bash /entrypoint.sh python3 -m ...`: the shell runs the script
    if len(words) < 2 or not _ENTRY_SCRIPT.fullmatch(words[0].value) or basename(words[0].value) in SHELLS:
        return []
    doubt = _ENTRY_SCRIPT_DOUBT.format(script=words[0].value)
    return [replace(lc, doubt=lc.doubt or doubt) for lc in launches_from_words(words[1:], ctx, env, head)]


# NVIDIA Dynamo's sglang worker (components/src/dynamo/sglang/args.py): Dynamo's own parser takes
# its flags with parse_known_args, the remaining words go to sglang's parser (``--config``
# included, through sglang's config merger). Dynamo's flags below are those of its runtime and
# dynamo-sglang argument groups; the set changes between Dynamo releases (and router flags are
# added), so the reading is a guess: the launch carries a doubt and is reported at most as warnings.
_DYNAMO_MODULE = "dynamo.sglang"
_DYNAMO_DOUBT = (
    "python -m dynamo.sglang: Dynamo takes its own flags first (which ones depends on the Dynamo "
    "release) and hands the rest to sglang; the words are read as sglang's"
)
_DYNAMO_VALUES = _opts(
    "--namespace", "--endpoint", "--kv-state-endpoint", "--discovery-backend", "--request-plane",
    "--response-plane", "--event-plane", "--dyn-tool-call-parser", "--dyn-reasoning-parser",
    "--dyn-default-thinking-mode", "--dyn-structural-tag-scope", "--dyn-structural-tag-schema",
    "--custom-jinja-template", "--endpoint-types", "--dyn-endpoint-types", "--dump-config-to",
    "--multimodal-embedding-cache-capacity-gb", "--media-output-fs-url", "--media-output-http-url",
    "--health-check-payload", "--engine-request-limit", "--tcp-tls-cert-path", "--tcp-tls-key-path",
    "--tcp-tls-ca-cert-path", "--tcp-tls-server-name", "--tcp-tls-handshake-timeout",
    "--tcp-tls-client-cert-path", "--tcp-tls-client-key-path", "--tcp-tls-client-ca-cert-path",
    "--nats-tls-ca-cert-path", "--nats-tls-client-cert-path", "--nats-tls-client-key-path",
    "--disagg-config", "--disagg-config-key", "--afd-attention-ratio", "--afd-ffn-endpoint",
    "--afd-microbatch-size", "--afd-sync-timeout-ms",
)
_DYNAMO_LISTS = _opts("--connector", "--output-modalities")  # nargs="*"
_DYNAMO_OPTIONAL = _opts("--dyn-structural-tag")  # nargs="?"
_DYNAMO_BOOLS = frozenset(
    spelling
    for name in (
        "fpm-trace", "exclude-tools-when-tool-choice-none", "multimodal-embedding-cache-publisher",
        "tcp-tls-insecure", "nats-tls-insecure", "use-sglang-tokenizer", "multimodal-processor",
        "multimodal-encode-worker", "multimodal-worker", "embedding-worker", "image-diffusion-worker",
        "video-generation-worker", "dyn-enable-structural-tag",
    )
    for spelling in (f"--{name}", f"--no-{name}")
) | _opts("--version")


def dynamo_worker(launch: LaunchCommand) -> LaunchCommand:
    """A ``python -m dynamo.sglang`` worker: Dynamo's own flags left out, the rest sglang's, with a doubt."""
    return replace(launch, argv=_without_dynamo_flags(launch.argv), doubt=_DYNAMO_DOUBT)


def _without_dynamo_flags(argv: Sequence[Token]) -> tuple[Token, ...]:
    """The words Dynamo hands to sglang: its own flags and their values taken out."""
    out: list[Token] = []
    k, n = 0, len(argv)
    while k < n:
        v = argv[k].value
        name, eq, _ = v.partition("=")
        if eq and (name in _DYNAMO_VALUES or name in _DYNAMO_OPTIONAL or name in _DYNAMO_LISTS):
            k += 1
        elif v in _DYNAMO_VALUES:
            k += 2
        elif v in _DYNAMO_BOOLS:
            k += 1
        elif v in _DYNAMO_OPTIONAL:
            k += 2 if k + 1 < n and not argv[k + 1].value.startswith("-") else 1
        elif v in _DYNAMO_LISTS:
            k += 1
            while k < n and not argv[k].value.startswith("-"):
                k += 1
        elif v.startswith("--router-"):
            # the worker's router advertisement flags (a set of its own; sglang has none named so):
            # a following word that is no option can only be the flag's value
            k += 1 if eq or k + 1 >= n or argv[k + 1].value.startswith("-") else 2
        else:
            out.append(argv[k])
            k += 1
    return tuple(out)


@dataclass
class LaunchContext:
    """What a launch found in a file needs besides its words."""

    path: Path
    surface: Surface
    base_dir: Path
    own_pins: bool = False
    problems: list[SyntaxProblem] = field(default_factory=list)
    depth: int = 0
    image: Located[str] | None = None  # the container image the launches run in (FROM, docker run)
    built: dict[str, _Build] = field(default_factory=dict)  # `docker build -t TAG`: TAG's Dockerfile
    reads: list[Path] = field(default_factory=list)  # files read from disk (SurfaceResult.reads)



def _cover(spans: Sequence[Span]) -> Span:
    return Span(min(s.start for s in spans), max(s.end for s in spans))


def _make_launch(
    words: Sequence[Word],
    first: int,
    prog_start: int,
    prog_end: int,
    argv_start: int,
    entry: Entry,
    ctx: LaunchContext,
    env: Sequence[EnvVar],
    head: int | None,
) -> LaunchCommand:
    prog_words = words[prog_start : prog_end + 1]
    program = Located(" ".join(w.value for w in prog_words), _cover([w.token.span for w in prog_words]))
    argv = tuple(w.token for w in words[argv_start:])
    spans = [w.token.span for w in words[first:]]
    span = _cover(spans)
    if head is not None and head <= span.start:
        span = Span(head, span.end)
    return LaunchCommand(
        path=ctx.path,
        surface=ctx.surface,
        entry=entry,
        program=program,
        argv=argv,
        span=span,
        base_dir=ctx.base_dir,
        env=tuple(env),
        own_pins=ctx.own_pins,
        image=ctx.image,
    )


_MODEL_FLAGS = ("--model-path", "--model")


def _llm_serve(launch: LaunchCommand) -> list[LaunchCommand]:
    """The ``sglang serve`` launch unless a plugin backend serves it (``--model-type X``: not sglang's
    arguments). A diffusion model's launch is kept: launch.py checks it against the release's
    diffusion server (``--model-type diffusion``, or a model sglang would detect as one)."""
    vals = [t.value for t in launch.argv]
    model_type = model = None
    for k, v in enumerate(vals):
        nxt = vals[k + 1] if k + 1 < len(vals) else None
        if v == "--model-type":
            model_type = nxt
        elif v.startswith("--model-type="):
            model_type = v.split("=", 1)[1]
        elif v in _MODEL_FLAGS and model is None:
            model = nxt
        elif v.startswith(tuple(f + "=" for f in _MODEL_FLAGS)) and model is None:
            model = v.split("=", 1)[1]
    if model is None and vals and not vals[0].startswith("-"):
        model = vals[0]  # a bare first word is the model path
    if model_type == "auto":
        model_type = None  # what sglang does without the option
    if model_type is not None and model_type not in ("llm", "diffusion"):
        return []  # a plugin backend: not sglang's server arguments
    return [launch]


def _skip_wrapper(words: Sequence[Word], i: int, spec: _Wrapper, env: list[EnvVar]) -> int:
    """Index of the command a wrapper at ``words[i]`` runs (``len(words)`` when there is none)."""
    n = len(words)
    j = i + 1
    if spec.subcommand is not None:
        if j >= n or words[j].value != spec.subcommand:
            return n
        j += 1
    while j < n:
        v = words[j].value
        if v == "--":
            j += 1
            break
        if spec.env_words and ASSIGN_RE.match(v):
            found = env_from_word(words[j])
            if found is not None:
                env.append(found)
            j += 1
            continue
        if not v.startswith("-") or v == "-":
            break
        name, eq, _ = v.partition("=")
        if eq and name.startswith("--"):
            j += 1
        elif v in spec.two_values:
            if v in ("-genv", "-env", "--genv") and j + 2 < n:
                nm, val = words[j + 1], words[j + 2]
                env.append(EnvVar(Located(nm.value, nm.token.span), Located(val.value, val.token.span)))
            j += 3
        elif v in spec.with_value:
            if v == "-x" and j + 1 < n:  # mpirun -x NAME=value exports to the ranks
                found = env_from_word(words[j + 1])
                if found is not None:
                    env.append(found)
            j += 2
        else:
            j += 1
    if spec is _WRAPPERS["taskset"] and any(w.value in ("-p", "--pid") for w in words[i + 1 : j]):
        return n  # taskset -p changes a running process
    return j + spec.positionals


def _python_launch(
    words: Sequence[Word], i: int, first: int, ctx: LaunchContext, env: list[EnvVar], head: int | None
) -> list[LaunchCommand]:
    n = len(words)
    j = i + 1
    module: str | None = None
    module_idx = -1
    while j < n:
        v = words[j].value
        if v == "-m":
            if j + 1 < n:
                module, module_idx = words[j + 1].value, j + 1
            break
        if v.startswith("-m") and not v.startswith("--"):
            module, module_idx = v[2:], j  # -msglang.launch_server
            break
        if v in ("-X", "-W", "--check-hash-based-pycs"):
            j += 2
            continue
        if v.startswith("--"):
            j += 1
            continue
        if v.startswith("-") and len(v) > 1:
            flags = v[1:]
            if flags[0] in "XW":
                j += 1
                continue
            if "c" in flags:
                return []  # inline code
            if flags.endswith("m"):  # -um MODULE
                if j + 1 < n:
                    module, module_idx = words[j + 1].value, j + 1
                break
            j += 1
            continue
        return []  # a script path or "-" (stdin)
    if module is None:
        return []
    entry = LAUNCH_MODULES.get(module)
    if entry is not None:
        return [_make_launch(words, first, i, module_idx, module_idx + 1, entry, ctx, env, head)]
    if module == _DYNAMO_MODULE:
        return [dynamo_worker(_make_launch(words, first, i, module_idx, module_idx + 1, Entry.LAUNCH_SERVER, ctx, env, head))]
    if module in _SERVE_MODULES and module_idx + 1 < n and words[module_idx + 1].value == "serve":
        return _llm_serve(_make_launch(words, first, i, module_idx + 1, module_idx + 2, Entry.SERVE, ctx, env, head))
    if module in _TORCHRUN_MODULES:
        return _torchrun_launch(words, module_idx + 1, first, i, ctx, env, head)
    return []


def _torchrun_launch(
    words: Sequence[Word], j: int, first: int, prog: int, ctx: LaunchContext, env: list[EnvVar], head: int | None
) -> list[LaunchCommand]:
    n = len(words)
    as_module = no_python = False
    while j < n:
        v = words[j].value
        if v == "--":
            j += 1
            break
        if not v.startswith("-"):
            break
        if v in _TORCHRUN_MODULE_FLAGS:
            as_module = True
        elif v in ("--no-python", "--no_python"):
            no_python = True
        elif "=" not in v and v in _TORCHRUN_VALUES:
            j += 1
        j += 1
    if j >= n:
        return []
    if no_python:
        return launches_from_words(words[j:], ctx, env, head)
    entry = LAUNCH_MODULES.get(words[j].value) if as_module else None
    if entry is None:
        return []
    return [_make_launch(words, first, prog, j, j + 1, entry, ctx, env, head)]


def _shell_c_launches(words: Sequence[Word], i: int, ctx: LaunchContext, env: list[EnvVar]) -> list[LaunchCommand]:
    n = len(words)
    j = i + 1
    has_c = False
    while j < n:
        v = words[j].value
        if v == "--":
            j += 1
            break
        if v.startswith("--"):
            j += 2 if v in ("--rcfile", "--init-file") else 1
            continue
        if len(v) > 1 and v[0] in "-+":
            cluster = v[1:]
            if v[0] == "-" and "c" in cluster:
                has_c = True
            j += 2 if ("o" in cluster or "O" in cluster) else 1
            continue
        break
    if not has_c or j >= n or ctx.depth >= MAX_NESTING:
        return []
    return launches_in_source(words[j].chars, ctx, env, nested=True)


_EMPTY_DEFAULT = _regex.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?-\}")


def launches_from_words(
    words: Sequence[Word], ctx: LaunchContext, env: Sequence[EnvVar] = (), head: int | None = None
) -> list[LaunchCommand]:
    """The launches one command (its argv as words) runs, looking through wrappers and ``sh -c``.

    ``head`` is the file offset where the command starts (prefix assignments included).
    """
    env_list = list(env)
    n = len(words)
    i = 0
    for _ in range(32):  # each round strips one wrapper
        if i >= n:
            return []
        w = words[i]
        b = basename(w.value)
        if _PYTHON_RE.fullmatch(b) or (
            # "$PYTHON" -m sglang.launch_server: an interpreter we cannot name, but the module says it
            not w.token.exact
            and "$" in w.value
            and i + 2 < n
            and words[i + 1].value == "-m"
            and words[i + 2].value in LAUNCH_MODULES
        ):
            return _python_launch(words, i, 0, ctx, env_list, head)
        if b == "sglang":
            if i + 1 < n and words[i + 1].value == "serve":
                return _llm_serve(_make_launch(words, 0, i, i + 1, i + 2, Entry.SERVE, ctx, env_list, head))
            return []
        if b in SHELLS:
            return _shell_c_launches(words, i, ctx, env_list)
        if b in _DOCKERS:
            return _docker_launches(words, i, ctx, env_list, head)
        if b == "torchrun":
            return _torchrun_launch(words, i + 1, 0, i, ctx, env_list, head)
        if not w.token.exact and _EMPTY_DEFAULT.fullmatch(w.value):
            i += 1  # `${LAUNCH_PREFIX:-} python3 -m ...`: empty unless set, and a wrapper if set
            continue
        spec = _WRAPPERS.get(b)
        if spec is None:
            return _through_script(words, i, ctx, env_list, head)
        i = _skip_wrapper(words, i, spec, env_list)
        if i < n and not spec.env_words and b != "time" and ASSIGN_RE.match(words[i].value):
            return _assignment_as_program(words[i:], b, ctx, env_list, head)
    return []


# `/opt/env/run-with-new-libstdc.sh python3 -m sglang.launch_server ...`: a script of the user's
# own that sets something up and runs its arguments (`exec "$@"`) — the usual reason to write one
_SCRIPT_WRAPPER = _regex.compile(r"[^\s/]*\.(?:sh|bash)")


def _through_script(
    words: Sequence[Word], i: int, ctx: LaunchContext, env: list[EnvVar], head: int | None
) -> list[LaunchCommand]:
    """A launch handed to a shell script kimi-lsp does not read (``./with-env.sh python3 -m
    sglang.launch_server ...``): read as that launch, with a doubt naming the script, when the
    word after the script is an interpreter or ``sglang``; anything else is no launch."""
    w = words[i]
    if i + 1 >= len(words) or not w.token.exact or not _SCRIPT_WRAPPER.fullmatch(basename(w.value)):
        return []
    nxt = basename(words[i + 1].value)
    if not (_PYTHON_RE.fullmatch(nxt) or nxt == "sglang"):
        return []
    doubt = (f"kimi-lsp only guesses this is the launch: it is handed to `{w.value}`, which kimi-lsp "
             "does not read, as if the script runs its arguments")
    return [lc if lc.doubt is not None else replace(lc, doubt=doubt)
            for lc in launches_from_words(words[i + 1 :], ctx, env, head)]


def _assignment_as_program(
    words: Sequence[Word], wrapper: str, ctx: LaunchContext, env: list[EnvVar], head: int | None
) -> list[LaunchCommand]:
    """``numactl --cpunodebind=0 NAME=value python3 -m sglang.launch_server ...``: the wrapper is no
    shell, it runs ``NAME=value`` as the program (not found: the launch never starts). The launch
    meant is read, its assignments as its environment, with a doubt that says it does not run so."""
    k = 0
    while k < len(words) and ASSIGN_RE.match(words[k].value):
        found = env_from_word(words[k])
        if found is not None:
            env.append(found)
        k += 1
    name = words[0].value.partition("=")[0]
    doubt = (f"kimi-lsp only guesses this is the launch: {wrapper} is no shell and runs the word "
             f"`{name}=...` as the program, so the command fails as written (put the assignments "
             f"before {wrapper}, or use env)")
    return [replace(lc, doubt=lc.doubt or doubt) for lc in launches_from_words(words[k:], ctx, env, head)]


def is_pip_install(words: Sequence[Word]) -> bool:
    """``pip install``, ``python -m pip install``, ``uv pip install`` (the pin readers read them)."""
    values = [basename(w.value) for w in words[:8]]
    if "install" not in values:
        return False
    return any(_PIP_RE.fullmatch(v) for v in values[: values.index("install")])


def launches_from_commands(
    commands: Sequence[Command],
    ctx: LaunchContext,
    env: Sequence[EnvVar] = (),
    functions: Sequence[tuple[str, Span]] = (),
) -> list[LaunchCommand]:
    """Launches of a script, in order; ``export``/``VAR=x`` lines feed the env of later launches.

    ``functions``: the script's shell functions (``syntax.shell.function_spans``): a function
    whose body launches with ``"$@"`` is a launch wherever it is called with more flags."""
    # One value per name, in the order of the latest assignment: what the launch will see.
    running: dict[str, EnvVar] = {}
    for var in env:
        _assign(running, var)
    out: list[LaunchCommand] = []
    arrays: dict[str, _Array] = {}
    strings: dict[str, _String] = {}
    aliases: dict[str, _String] = {}
    bodies: dict[str, Sequence[Word]] = {}
    unrun: dict[str, tuple[_Array | _String, list[EnvVar]]] = {}  # kept launches not named since set
    for command in commands:
        words: Sequence[Word] = command.words
        if not words or (words[0].value in DECLARE and words[0].token.exact):
            for var in command.assignments:
                _assign(running, var)
            for array in command.arrays:
                _assign_array(arrays, array, command)
            _assign_strings(strings, command)
            _note_unrun(unrun, command, arrays, strings, list(running.values()))
            continue
        words, spliced_doubt = _splice_arrays(words, arrays, command)
        first = words[0]
        if first.token.exact and first.value == "alias":
            _define_aliases(aliases, words[1:], command)
            continue
        if first.token.exact and first.value in aliases:
            # `alias serve='python -m sglang.launch_server --host 0.0.0.0'`, then `serve --tp 8`
            out.extend(_run_kept(aliases[first.value], words[1:], ctx, [*running.values(), *command.assignments],
                                 command, split=False))
            continue
        called = _called(words, strings, bodies, ctx, [*running.values(), *command.assignments], command)
        if called is not None:
            _ran(unrun, command)
            out.extend(called)
            continue
        if first.value == "unset":
            for w in words[1:]:
                running.pop(w.value, None)
            continue
        if first.value == "cd" and len(words) == 2 and words[1].token.exact:
            target = words[1].value
            if target and target[0] not in "/~-$":  # relative: we know where that is
                ctx.base_dir = Path(os.path.normpath(ctx.base_dir / target))
            continue
        if is_pip_install(words):
            ctx.own_pins = True
        found = launches_from_words(words, ctx, [*running.values(), *command.assignments], command.span.start)
        if words is not command.words:
            # array elements sit where the array is written; the launch is the line that runs it
            found = [replace(launch, span=command.span, doubt=launch.doubt or spliced_doubt) for launch in found]
        if found:
            _ran(unrun, command)
        if found and functions and any(_all_args(w) for w in words):
            name = _function_at(functions, command.span.start)
            if name is not None:
                bodies[name] = words
        out.extend(found)
    for kept, kept_env in unrun.values():
        out.extend(_unrun_launches(kept, ctx, kept_env))
    return out


# `$NAME`, `${NAME}`, `${NAME[@]}`, `${NAME[*]}`, `${NAME:-...}`: a variable named in a command
_REF_RE = _regex.compile(r"\$(?:\{!?([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*))")


def _ran(unrun: dict[str, tuple[_Array | _String, list[EnvVar]]], command: Command) -> None:
    """The kept launches a command that launches names are read there: no launch of their own.
    (A command that launches nothing we read — ``echo "$CMD"``, a dry-run printer, ``ssh host
    "${CMD[@]}"`` — leaves them to be read where they are written.)"""
    for word in command.words:
        for m in _REF_RE.finditer(word.value):
            unrun.pop(m.group(1) or m.group(2), None)
_UNRUN_DOUBT = ("kimi-lsp only guesses this is a launch: the command is kept in a variable that nothing "
                "kimi-lsp can follow runs (it is read where it is written)")


def _note_unrun(
    unrun: dict[str, tuple[_Array | _String, list[EnvVar]]],
    command: Command,
    arrays: dict[str, _Array],
    strings: dict[str, _String],
    env: list[EnvVar],
) -> None:
    """A launch kept in a variable just set or grown: a launch of its own unless a later command
    names the variable (``CMD=(python -m sglang.launch_server ...)`` printed by a dry-run helper,
    ``SGLANG_CMD='python3 -m ...'`` in a document that says to set it)."""
    for name in {a.name.value for a in command.assignments}:
        array, kept = arrays.get(name), strings.get(name)
        if array is not None and _is_launch_array(array.words):
            unrun[name] = (array, env)
        elif kept is not None:
            unrun[name] = (kept, env)
        else:
            unrun.pop(name, None)


def _unrun_launches(kept: _Array | _String, ctx: LaunchContext, env: list[EnvVar]) -> list[LaunchCommand]:
    if ctx.depth >= MAX_NESTING:
        return []
    if isinstance(kept, _Array):
        words = [*kept.words, *([] if kept.complete else [_unknown_word(kept.words[-1].chars)])]
        found = launches_from_words(words, ctx, env, None)
    else:
        commands, problems = lex(kept.chars)
        ctx.problems.extend(problems)
        if len(commands) != 1 or not commands[0].words:
            return []
        tail = [_unknown_word(kept.chars)] if kept.incomplete else []
        program, kept_env = _expanded_prefix(commands[0].words)
        found = launches_from_words([*program, *tail], ctx, [*env, *commands[0].assignments, *kept_env], None)
    return [replace(lc, doubt=lc.doubt or _UNRUN_DOUBT) for lc in found]


@dataclass(frozen=True)
class _Where:
    """On which paths a kept command (a string or an array) holds what we read."""

    # the branches it was set in (``Command.block``); () on every path; None: after ``&&``/``||``
    block: tuple[int, ...] | None = ()
    condition: str = ""  # what the innermost of those branches needs
    replaced: str = ""  # replaced by something we cannot read on some paths: when


def _where(command: Command) -> _Where:
    if not command.conditional:
        return _Where()
    return _Where(None if command.and_or else command.block, command.condition)


def _visible(where: _Where, command: Command) -> bool:
    """Whether every path that runs ``command`` set the kept command (it is in the same branch)."""
    return where.block is not None and command.block[: len(where.block)] == where.block


def _covers(command: Command, where: _Where) -> bool:
    """Whether ``command`` runs on every path that set the kept command (in the same branch or
    in one around it, after it), so what it does to the kept command is certain."""
    if command.and_or:
        return False
    return not command.block or (where.block is not None and where.block[: len(command.block)] == command.block)


def _some_paths(command: Command) -> str:
    return "when a test before `&&` or `||` decides" if command.and_or else command.condition


_KEPT = "kimi-lsp only guesses this is the launch: the command is kept in a variable"


def _kept_doubt(where: _Where, command: Command) -> str | None:
    """The doubt a launch run from a kept command carries: set on some paths and run on others
    (set and run inside the same branch, the usual case, is no doubt)."""
    if where.replaced:
        return f"{_KEPT} that is replaced on some paths ({where.replaced})"
    if where.block is None:
        return None if command.conditional else _STRING_DOUBT
    if _visible(where, command):
        return None
    return f"{_STRING_DOUBT} ({where.condition})"


@dataclass(frozen=True)
class _String:
    """``CMD="python -m sglang.launch_server ..."``: a command kept in a variable, run later as
    ``$CMD`` or ``eval "$CMD"``; ``chars`` locates the value's characters in the file."""

    chars: Source
    where: _Where  # the paths it is set on
    # grown on some paths (``CMD="$CMD --nnodes 2"`` inside an ``if``): words we cannot know follow
    incomplete: bool = False


_VAR_WORD_RE = _regex.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_ALL_ARGS = frozenset({"$@", "${@}", "$*", "${*}"})
_STRING_DOUBT = "kimi-lsp only guesses this is the launch: the command is kept in a variable set on some paths only"
_SPLIT_DOUBT = ("kimi-lsp only guesses this is the launch: an unquoted variable is split at spaces and its quotes "
                "are kept, so the words may differ from the ones shown")


def _all_args(word: Word) -> bool:
    return not word.token.exact and word.value in _ALL_ARGS


def _function_at(functions: Sequence[tuple[str, Span]], offset: int) -> str | None:
    """The innermost function whose definition holds ``offset``."""
    best: tuple[str, Span] | None = None
    for name, span in functions:
        if span.start <= offset < span.end and (best is None or span.start >= best[1].start):
            best = (name, span)
    return best[0] if best is not None else None


def _assign_strings(strings: dict[str, _String], command: Command) -> None:
    for word in command.assignment_words:
        m = ASSIGN_RE.match(word.value)
        if m is None:
            continue
        name, value = m.group(1), word.value[m.end():]
        if any(a.name.value == name for a in command.arrays):
            strings.pop(name, None)  # `CMD=(...)`, `CMD+=(...)`: an array (read as one), no string
            continue
        known = strings.get(name)
        grows = _SELF_RE.match(value)
        appends = "+=" in word.value[: m.end()]
        if appends or (grows is not None and (grows.group(1) or grows.group(2)) == name):
            # `CMD="$CMD --more"`, `CMD+=" --more"`: on every path, the kept command and these
            # words; on some paths only, the kept command and words we cannot know
            if known is None:
                strings.pop(name, None)
                continue
            if not _covers(command, known.where):
                strings[name] = replace(known, incomplete=True)
            else:
                rest = m.end() if appends else m.end() + grows.end() if grows is not None else m.end()
                strings[name] = _String(_joined(known.chars, word, rest), known.where, known.incomplete)
            continue
        if not _LAUNCH_WORDS_RE.search(value):
            if known is not None and not _covers(command, known.where):
                # `if [ $# -gt 0 ]; then CMD="$@"; fi` (was a launch): the launch on the other paths
                strings[name] = replace(known, where=replace(known.where, replaced=_some_paths(command)))
                continue
            strings.pop(name, None)  # appended to, or not a launch: nothing we follow
            continue
        units = [(k, k + 1) for k in range(m.end(), len(word.value))]
        strings[name] = _String(word.chars.sub(value, units), _where(command))


def _define_aliases(aliases: dict[str, _String], words: Sequence[Word], command: Command) -> None:
    for word in words:
        name, eq, value = word.value.partition("=")
        if not eq:
            continue
        if not _LAUNCH_WORDS_RE.search(value):
            aliases.pop(name, None)
            continue
        start = len(name) + 1
        units = [(k, k + 1) for k in range(start, len(word.value))]
        aliases[name] = _String(word.chars.sub(value, units), _where(command))


# `$CMD ...` / `${CMD} ...` at the start of an assignment's value
_SELF_RE = _regex.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _joined(kept: Source, word: Word, start: int) -> MappedSource:
    """The kept command followed by the rest of ``word`` from ``start``, each character where it is written."""
    n = len(kept.text)
    rest = word.value[start:]
    text = kept.text + rest
    starts = [kept.start(i) for i in range(n)] + [word.chars.start(k) for k in range(start, len(word.value))]
    ends = [kept.end(i) for i in range(n)] + [word.chars.end(k) for k in range(start, len(word.value))]
    return MappedSource(text, starts, ends, word.chars.anchor())


_SHELL_C_RE = _regex.compile(r"-[a-zA-Z]*c[a-zA-Z]*")  # -c, -lc, -ec, -xc: the script follows
_LAUNCH_WORDS_RE = _regex.compile(r"sglang\.(?:launch_server|cli\.main)|sglang[ \t]+serve\b")


def _called(
    words: Sequence[Word],
    strings: dict[str, _String],
    bodies: dict[str, Sequence[Word]],
    ctx: LaunchContext,
    env: list[EnvVar],
    command: Command,
) -> list[LaunchCommand] | None:
    """What a command that runs a kept command runs: ``$CMD --more``, ``eval "$CMD"``, ``eval
    "python -m ..."``, or a function that launches with ``"$@"`` called with flags. None: it is
    none of these (the command is read as it is)."""
    first = words[0]
    for k in range(len(words)):
        # `setsid bash -c "$CMD"`, `nohup sh -lc "$CMD" &`: the shell runs the kept command (the
        # shell at the command's head or behind plain wrappers, never an argument: `echo bash -c`);
        # `exec $CMD`, `nohup $CMD &`: the kept command split at spaces, behind plain wrappers
        head = basename(words[k].value)
        if k and not words[k - 1].value.startswith("-"):
            kept = _kept(words[k], strings)
            if kept is not None:
                return _run_kept(kept, words[k + 1 :], ctx, env, command, split=True)
        if head in SHELLS and k + 2 < len(words) and _SHELL_C_RE.fullmatch(words[k + 1].value):
            kept = _kept(words[k + 2], strings)
            if kept is not None:
                return _run_kept(kept, (), ctx, env, command, split=False)
            break
        if not (words[k].token.exact and head in _WRAPPERS):
            break
    if first.token.exact and first.value in bodies:
        body = bodies[first.value]
        spliced: list[Word] = []
        for w in body:
            spliced.extend(words[1:] if _all_args(w) else [w])
        found = launches_from_words(spliced, ctx, env, None)
        # the launch is the call: its flags are there (the program stays where the body has it)
        return [replace(lc, span=command.span) for lc in found]
    if first.token.exact and first.value == "eval" and len(words) >= 2:
        target = words[1]
        kept = _kept(target, strings)
        if kept is not None:
            return _run_kept(kept, words[2:], ctx, env, command, split=False)
        if target.token.exact and len(words) == 2 and _LAUNCH_WORDS_RE.search(target.value):
            if ctx.depth >= MAX_NESTING:
                return []
            return launches_in_source(target.chars, ctx, env, nested=True)
        return None
    kept = _kept(first, strings)
    if kept is not None:
        return _run_kept(kept, words[1:], ctx, env, command, split=True)
    return None


_VAR_ONLY = _regex.compile(r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=+][^}]*)?\}|[A-Za-z_][A-Za-z0-9_]*)")


def _expanded_prefix(words: Sequence[Word]) -> tuple[Sequence[Word], list[EnvVar]]:
    """A kept command's leading words that were expanded when it was assigned: ``CMD="A=1 ${EXTRA_ENV}
    B=2 python3 -m ..."`` holds ``VAR=value`` text (or nothing) where ``${EXTRA_ENV}`` is, and the
    shell that runs it reads the assignments after it as assignments. Those words are the launch's
    environment, not its program."""
    env: list[EnvVar] = []
    k = 0
    while k < len(words) - 1:
        w = words[k]
        if not w.token.exact and _VAR_ONLY.fullmatch(w.value):
            k += 1
            continue
        var = env_from_word(w) if ASSIGN_RE.match(w.value) else None
        if var is None:
            break
        env.append(var)
        k += 1
    return (words[k:], env) if k else (words, env)


def _unknown_word(chars: Source) -> Word:
    """A word whose value is known only when the script runs, at the end of ``chars``."""
    at = chars.anchor()
    return Word(Token("$_", Span(at, at), exact=False), MappedSource("$_", [at, at], [at, at], at), ((0, 2),))


def _kept(word: Word, strings: dict[str, _String]) -> _String | None:
    if word.token.exact or not strings:
        return None
    m = _VAR_WORD_RE.fullmatch(word.value)
    return strings.get(m.group(1) or m.group(2)) if m is not None else None


def _run_kept(
    kept: _String, extra: Sequence[Word], ctx: LaunchContext, env: list[EnvVar], command: Command, *, split: bool
) -> list[LaunchCommand]:
    if ctx.depth >= MAX_NESTING:
        return []
    commands, problems = lex(kept.chars)
    ctx.problems.extend(problems)
    ctx.depth += 1
    try:
        if len(commands) == 1 and commands[0].words:
            tail = [_unknown_word(kept.chars)] if kept.incomplete else []
            words, kept_env = _expanded_prefix(commands[0].words)
            found = launches_from_words([*words, *tail, *extra], ctx, [*env, *commands[0].assignments, *kept_env], None)
        else:
            found = launches_from_commands(commands, ctx, env)
    finally:
        ctx.depth -= 1
    doubt = _kept_doubt(kept.where, command) or (
        _SPLIT_DOUBT if split and any(c in kept.chars.text for c in "'\"\\") else None)
    return [replace(lc, span=command.span, doubt=lc.doubt or doubt) for lc in found]


@dataclass(frozen=True)
class _Array:
    words: tuple[Word, ...]  # the elements we know, each where it is written
    complete: bool  # False: grown on a path we cannot follow (``ARGS+=(...)`` inside an ``if``)
    where: _Where = _Where()  # the paths it is set on


def _is_launch_array(words: Sequence[Word]) -> bool:
    return bool(_LAUNCH_WORDS_RE.search(" ".join(w.value for w in words)))


_ARRAY_ALL_RE = _regex.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[@\]\}")


def _assign_array(arrays: dict[str, _Array], array: ArrayAssignment, command: Command) -> None:
    name = array.name.value
    known = arrays.get(name)
    if array.append:
        if known is None:
            return  # grows an array we do not know (set elsewhere, or not an array)
        # grown on every path that set it: these words; on some paths only: what we knew stays,
        # the rest is unknown words
        words = known.words + array.words if _covers(command, known.where) else known.words
        arrays[name] = replace(known, words=words, complete=known.complete and _covers(command, known.where))
        return
    if command.and_or:
        arrays.pop(name, None)  # `[ -n "$X" ] && ARGS=(...)`: a path we cannot name
        return
    if known is not None and not _covers(command, known.where) and not _is_launch_array(array.words):
        if _is_launch_array(known.words):
            # `if X; then CMD=(python -m sglang.launch_server); else CMD=(./wrapper.py); fi`: the
            # launch stays, on the paths that keep it
            arrays[name] = replace(known, where=replace(known.where, replaced=_some_paths(command)))
            return
    # Set in a branch (`if ...; then CMD=(python -m sglang.launch_server); else ...`): certain
    # where it is run in that branch, a doubt naming the branch's test where it is run after it.
    arrays[name] = _Array(array.words, True, _where(command))


def _splice_arrays(
    words: Sequence[Word], arrays: dict[str, _Array], command: Command
) -> tuple[Sequence[Word], str | None]:
    """``"${ARGS[@]}"`` replaced by the array's elements, each with the span where it is written,
    and the doubt that comes with them.

    An array grown where we cannot follow keeps the original word after its known elements: a
    word whose value is unknown, so rules that need the complete command stay silent. An array
    set on some paths only and run on others is spliced only when it holds the launch itself (a
    doubt naming the test); its arguments alone stay one unknown word, as if never set.
    """
    if not arrays:
        return words, None
    out: list[Word] = []
    changed = False
    doubt: str | None = None
    for word in words:
        m = _ARRAY_ALL_RE.fullmatch(word.value)
        array = arrays.get(m.group(1)) if m is not None and not word.token.exact else None
        if array is not None and not array.where.replaced and _visible(array.where, command):
            found = None
        elif array is not None and _is_launch_array(array.words):
            found = _kept_doubt(array.where, command)
        else:
            array = None
        if array is None:
            out.append(word)
            continue
        doubt = doubt or found
        changed = True
        out.extend(array.words)
        if not array.complete:
            out.append(word)
    return (out, doubt) if changed else (words, None)


def _assign(running: dict[str, EnvVar], var: EnvVar) -> None:
    running.pop(var.name.value, None)
    running[var.name.value] = var


def launches_in_source(
    src: Source, ctx: LaunchContext, env: Sequence[EnvVar] = (), *, escape: str = "\\", nested: bool = False
) -> list[LaunchCommand]:
    """Lex ``src`` as a script and return its launches; lexer problems go to ``ctx.problems``."""
    commands, problems = lex(src, escape=escape)
    ctx.problems.extend(problems)
    functions = function_spans(src)
    if nested:
        ctx.depth += 1
        try:
            return launches_from_commands(commands, ctx, env, functions)
        finally:
            ctx.depth -= 1
    return launches_from_commands(commands, ctx, env, functions)


def find_launches(
    text: str, path: Path, surface: Surface, base: int = 0, env: tuple[EnvVar, ...] = ()
) -> list[LaunchCommand]:
    """The launches in a shell text (a script, or a script embedded at ``base`` in another file)."""
    ctx = LaunchContext(path, surface, path.parent)
    return launches_in_source(FlatSource(text, base), ctx, env)


WRITTEN_DOUBT = "kimi-lsp only guesses this is a launch: it is text written to a file that is not named as a script"
# `> start.sh`, `>> /opt/run.bash`, `tee start.sh`: the file a command writes is a script
SCRIPT_TARGET = _regex.compile(r"(?:>>?|\btee(?:[ \t]+-a)?)[ \t]*[\"']?[^\s;&|\"']+\.(?:sh|bash)\b")
_ECHOES = frozenset({"echo", "printf"})
_ELEVATORS = frozenset({"sudo", "doas"})  # `sudo tee FILE <<EOF`
_WRITER_HEAD = _regex.compile(r"\b(?:cat|tee)\b")
_UNIT_TARGET = _regex.compile(r"\.service\b")


def written_launches(src: Source, commands: Sequence[Command], ctx: LaunchContext) -> list[LaunchCommand]:
    """Launches in a script that a script writes: a ``cat > start.sh <<EOF`` (or ``tee``) heredoc
    body, and ``echo "python -m sglang.launch_server ..." > start.sh``. Only where ``src`` is the
    file's own text (a ``FlatSource``: a script, a documentation block), where a command's span
    gives back its text. Written to a file not named as a script, a heredoc's launch is a doubt."""
    if not isinstance(src, FlatSource) or ctx.depth >= MAX_NESTING:
        return []
    text, base = src.text, src.base
    if not _LAUNCH_WORDS_RE.search(text):
        return []
    out: list[LaunchCommand] = []
    if "<<" in text:
        for mark in heredocs(src):
            if (mark.is_written or (mark.runner in _ELEVATORS and not mark.is_script)
                    or (mark.runner is not None and basename(mark.runner) in _KUBE_CLIENTS)):
                out.extend(_heredoc_launches(text, base, mark, ctx))
    for command in commands:
        words = command.words
        if len(words) < 2 or not (words[0].token.exact and words[0].value in _ECHOES):
            continue
        if not SCRIPT_TARGET.search(text, command.span.start - base, command.span.end - base):
            continue
        for word in words[1:]:
            if _LAUNCH_WORDS_RE.search(word.value):
                out.extend(launches_in_source(word.chars, ctx, nested=True))
    return out


def _heredoc_launches(text: str, base: int, mark: Heredoc, ctx: LaunchContext) -> list[LaunchCommand]:
    i = mark.span.end - base
    eol = text.find("\n", i)
    if i < 0 or eol < 0:
        return []
    head = text[text.rfind("\n", 0, i) + 1 : eol]
    start = k = eol + 1
    while k < len(text):
        e = text.find("\n", k)
        e = len(text) if e < 0 else e
        if is_heredoc_end(text[k:e], mark):
            break
        k = e + 1
    body = text[start : min(k, len(text))]
    if not _LAUNCH_WORDS_RE.search(body):
        return []
    if _KUBE_APPLY.search(head):
        return _manifest_launches(body, base + start, ctx)
    if _UNIT_TARGET.search(head) and "ExecStart" in body:
        # `sudo tee /etc/systemd/system/sglang.service <<EOF`: a unit, its launch in ExecStart=
        from kimi_lsp.surfaces.other_files import unit_launches

        return unit_launches(ctx.path, text, Span(start, start + len(body)), ctx.surface, base)
    if not _WRITER_HEAD.search(head):
        return []  # `sudo <<EOF`, `sudo -u x <<EOF`: not a file being written
    found = launches_in_source(FlatSource(body, base + start), ctx, nested=True)
    doubt = None if SCRIPT_TARGET.search(head) else WRITTEN_DOUBT
    return [replace(lc, doubt=lc.doubt or doubt) for lc in found]


# `cat <<EOF | kubectl apply -f -`, `kubectl create -f - <<EOF`: the body is a Kubernetes manifest
# applied as it stands (how documentation writes one down inside a shell block)
_KUBE_CLIENTS = frozenset({"kubectl", "oc"})
_KUBE_APPLY = _regex.compile(r"\b(?:kubectl|oc)\b[^\n|;&]*?\b(?:apply|create|replace)\b[^\n|;&]*?(?:-f|--filename)(?:\s+|=)?-(?=\s|$)")


def _manifest_launches(body: str, offset: int, ctx: LaunchContext) -> list[LaunchCommand]:
    """The launches of a manifest written in a heredoc: read as the Kubernetes YAML it is. Line
    breaks stand in for the text before it, so that every span is the file's own offset."""
    from kimi_lsp.surfaces.yaml_embedded import read_embedded
    from kimi_lsp.syntax import yaml as syntax_yaml

    padded = "\n" * offset + body
    loaded = syntax_yaml.load(padded)
    if not loaded.docs:
        return []  # not YAML (or a broken manifest): kubectl would refuse it, nothing runs
    return list(read_embedded(ctx.path, padded, loaded, Surface.KUBERNETES).launches)


def read_shell(path: Path, text: str) -> SurfaceResult:
    """A whole shell script (``*.sh``, ``*.sbatch``, a file with a shell shebang)."""
    ctx = LaunchContext(path, Surface.SHELL, path.parent)
    src = FlatSource(text)
    commands, problems = lex(src)
    launches = launches_from_commands(commands, ctx, functions=function_spans(src))
    launches.extend(written_launches(src, commands, ctx))
    problems = [*problems, *ctx.problems]
    prose = prose_lines(text, commands)
    if prose:
        # Notes kept in a `.sh` file (prose, logs, pasted launches): nobody runs it, so its shell
        # syntax is no claim worth making, and its launches are copies whose context is unknown.
        shown = ", ".join(str(n + 1) for n in prose[:3]) + (", …" if len(prose) > 3 else "")
        doubt = f"the file reads as notes, not a script: sentences at lines {shown}"
        launches = [lc if lc.doubt is not None else replace(lc, doubt=doubt) for lc in launches]
        return SurfaceResult(launches=tuple(launches), is_launch_file=bool(launches) or mentions_sglang(text),
                             reads=tuple(dict.fromkeys(ctx.reads)))
    return SurfaceResult(
        launches=tuple(launches),
        problems=tuple(problems),
        is_launch_file=bool(launches) or (bool(problems) and mentions_sglang(text)),
        reads=tuple(dict.fromkeys(ctx.reads)),
    )
