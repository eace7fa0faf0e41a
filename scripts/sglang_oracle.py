#!/usr/bin/env python3
"""Ground truth from sglang's own argparse parser, for differential tests of kimi-lsp.

    python3 scripts/sglang_oracle.py 0.5.23            # schema dump + argparse probes
    python3 scripts/sglang_oracle.py 0.5.23 --argv '["--tp", "2"]' '["--pp", "1"]'
    python3 scripts/sglang_oracle.py 0.5.23 --batch cases.jsonl   # whole launches (bench/differential)

It builds, once, a light virtual environment in ~/.cache/kimi-lsp/oracle-venv (reference
shared/reference/sglang.md §2.5: sglang's light dependencies, torch and triton replaced by stub
modules served from a sys.meta_path finder), unpacks the release's wheel next to it, runs the
real `ServerArgs.add_cli_args` on an `argparse.ArgumentParser(prog="sglang serve")` exactly as
`prepare_server_args` does, and writes

  tests/data/oracle/sglang-<VERSION>.json           every action, in the extractor's JSON shape
  tests/data/oracle/argparse-probes-<VERSION>.json  how that parser treats option tokens, values,
                                                    argv vectors and `--config` YAML mappings

With --argv it prints the parse result (or argparse's error) of each given JSON argv instead.
With --batch it runs whole launches, one JSON object a line (see `run_batch`), through sglang's
own `prepare_server_args` and the model-independent resolution steps, and prints one outcome a line.
Nothing here is imported by kimi-lsp; tests read only the committed dumps.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("KIMI_LSP_CACHE", Path.home() / ".cache" / "kimi-lsp"))
VENV = CACHE / "oracle-venv"
OUT = REPO / "tests" / "data" / "oracle"
# What `import sglang.srt.server_args` needs once torch and triton are stubbed (reference §2.5).
# Releases 0.4.x-0.5.6 import more of them at that point (the OpenAI protocol models, transformers'
# processor classes, dill, partial_json_parser, fastapi); none needs torch. With these, the
# oracle runs for 71 of the 92 releases from 0.4.0 to 0.5.23 (0.4.0-0.4.3, 0.4.4.post2-0.5.3.post3,
# 0.5.4.post2-0.5.10.post1, 0.5.21-0.5.23); 0.4.3.post1-0.4.4.post1, 0.5.4, 0.5.4.post1 and
# 0.5.11-0.5.20 need a transformers or pydantic of their own day. Adding them did not change the
# 0.5.21-0.5.23 dumps.
LIGHT_DEPS = ["msgspec", "pyyaml", "numpy", "orjson", "psutil", "pybase64", "requests", "packaging",
              "pillow", "starlette", "pydantic", "pyzmq", "tqdm", "ipython", "aiohttp",
              "openai", "transformers", "dill", "partial-json-parser", "fastapi"]


# ---------------------------------------------------------------------------------------------
# Outer side: venv, wheel, re-run inside the venv
# ---------------------------------------------------------------------------------------------


def venv_python() -> Path:
    py = VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *LIGHT_DEPS], check=True)
    return py


def unpacked_wheel(version: str) -> Path:
    sys.path.insert(0, str(REPO / "scripts"))
    from extract_sglang_schema import fetch_wheel  # one download path for both scripts

    dest = CACHE / "oracle-src" / version
    if not (dest / "sglang" / "srt" / "server_args.py").exists():
        dest.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(fetch_wheel(version)) as zf:
            zf.extractall(dest)
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("version")
    ap.add_argument("--argv", nargs="+", metavar="JSON", help="answer these argv vectors (JSON lists) and exit")
    ap.add_argument("--batch", type=Path, metavar="JSONL", help="run these launches (one JSON case a line) and exit")
    ap.add_argument("--out-dir", type=Path, default=OUT)
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.inner:
        return inner(args)
    src = unpacked_wheel(args.version)
    cmd = [str(venv_python()), str(Path(__file__).resolve()), args.version, "--inner",
           "--out-dir", str(args.out_dir)]
    if args.argv:
        cmd += ["--argv", *args.argv]
    if args.batch:
        cmd += ["--batch", str(args.batch.resolve())]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(REPO / "server")]), "PYTHONHASHSEED": "0"}
    # Environment that changes the parser (extra choices) would make the dump machine-dependent.
    for name in [n for n in env if n.startswith("SGLANG_")]:
        del env[name]
    roots = list(STUB_ROOTS)
    if args.batch:
        # parallel_hook's import chain (the resolution steps) reaches torchvision; stubbed like torch.
        roots.append("torchvision")
    while True:
        env["KIMI_LSP_ORACLE_STUBS"] = ",".join(roots)
        proc = subprocess.run(cmd, env=env, check=False, stdout=subprocess.PIPE, text=True)
        missing = proc.stdout.startswith("MISSING ") and proc.stdout.split()[1]
        if proc.returncode != MISSING_EXIT or not missing or missing in roots or len(roots) > 30:
            sys.stdout.write(proc.stdout)
            return proc.returncode
        print(f"sglang {args.version}: stubbing {missing} (its import chain needs it)", file=sys.stderr)
        roots.append(missing)


# ---------------------------------------------------------------------------------------------
# Inner side (runs in the oracle venv, with the wheel's sglang on sys.path)
# ---------------------------------------------------------------------------------------------


# Packages served as stubs: torch and triton always; more (huggingface_hub, transformers, ...) only
# when a release's `server_args` import chain fails without them (see main's retry loop), so that
# optional imports sglang guards with `try/except ImportError` keep behaving as on a light install.
STUB_ROOTS = ("torch", "triton")
MISSING_EXIT = 3


def install_stubs() -> None:
    """Serve `torch`, `triton` and their submodules as stubs (reference §2.5)."""
    import abc
    import importlib.abc
    import importlib.machinery
    import types

    class StubMeta(abc.ABCMeta):
        """Stub classes: subclassable, and any class attribute (`ReduceOp.SUM`) is a stub."""

        def __getattr__(cls, name: str) -> Any:
            if name.startswith("__") and name.endswith("__"):
                raise AttributeError(name)
            return _new(f"{cls.__module__}.{cls.__name__}.{name}")

        def register(cls, *args: Any, **kwargs: Any) -> Any:
            # `AutoConfig.register(name, cls)` (transformers), not ABCMeta's one-argument form.
            return args[-1] if args else None

    def _instance_attr(self: Any, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name == "name":  # `lib.m.name` is fed to getattr()/hasattr(), which want a str
            return f"{type(self).__name__.lower()}_stub"
        return _new(f"{type(self).__module__}.{type(self).__name__}.{name}")

    def _any_schema(cls: Any, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.any_schema()

    ABSENT_DEVICES = {"npu", "musa", "mlu", "hpu"}  # probed with hasattr(); the rest answer falsy

    class StubModule(types.ModuleType):
        __version__ = "2.9.0"
        __path__: list[str] = []

        def __getattr__(self, name: str) -> Any:
            if name.startswith("__") and name.endswith("__"):
                raise AttributeError(name)
            if self.__name__ == "torch" and name in ABSENT_DEVICES:
                raise AttributeError(name)  # `hasattr(torch, "npu")` must say no such platform
            if self.__name__ == "torch.version":
                return None  # no cuda, hip, musa: the platform probes all answer "not this one"
            if name == "name":  # `lib.m.name` is fed to getattr()/hasattr(), which want a str
                return self.__name__.replace(".", "_")
            if self.__name__ == "triton.runtime.driver" and name == "active":
                # What triton says on a machine without a GPU; device probes then answer "cpu".
                raise RuntimeError("0 active drivers ([]). There should only be one.")
            full = f"{self.__name__}.{name}"
            if name[:1].isupper() and not name.isupper():
                value: Any = StubMeta(name, (), {"__module__": self.__name__,
                                                 "__init__": lambda self, *a, **k: None,
                                                 "__call__": lambda self, *a, **k: None,
                                                 "__getattr__": _instance_attr,
                                                 # a pydantic model field typed with a stub class
                                                 # (0.5.19: xgrammar.StructuralTag) takes anything
                                                 "__get_pydantic_core_schema__": classmethod(_any_schema)})
            else:
                value = sys.modules.get(full) or _new(full)
            setattr(self, name, value)
            return value

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            # Used as a decorator (`@torch.compile`, `@triton.jit`) or decorator factory.
            if len(args) == 1 and callable(args[0]) and not kwargs:
                return args[0]
            return self

        def __iter__(self):  # noqa: ANN204
            return iter(())

        def __bool__(self) -> bool:
            return False

        def __mro_entries__(self, bases: tuple) -> tuple:
            return (object,)

        def __getitem__(self, key: Any) -> Any:
            return self

        def __int__(self) -> int:
            return 0

        def __float__(self) -> float:
            return 0.0

        def __index__(self) -> int:
            return 0

        def __len__(self) -> int:
            return 0

        def _same(self, *args: Any) -> Any:
            return self

        def _false(self, *args: Any) -> bool:
            return False

    # Module-level constants computed from stub dtypes (`-torch.finfo(...).max`) just need to exist.
    for _op in ("neg", "pos", "abs", "invert", "add", "radd", "sub", "rsub", "mul", "rmul", "truediv",
                "rtruediv", "floordiv", "rfloordiv", "mod", "rmod", "pow", "rpow", "and", "rand", "or",
                "ror", "xor", "rxor", "lshift", "rshift", "matmul"):
        setattr(StubModule, f"__{_op}__", StubModule._same)
    for _op in ("lt", "le", "gt", "ge"):
        setattr(StubModule, f"__{_op}__", StubModule._false)

    def _new(name: str) -> StubModule:
        mod = StubModule(name)
        mod.__spec__ = importlib.machinery.ModuleSpec(name, _Finder(), is_package=True)
        sys.modules[name] = mod
        return mod

    class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        roots = tuple(os.environ.get("KIMI_LSP_ORACLE_STUBS", ",".join(STUB_ROOTS)).split(","))

        def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
            if fullname.split(".")[0] in self.roots:
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec: Any) -> Any:
            mod = StubModule(spec.name)
            return mod

        def exec_module(self, module: Any) -> None:
            module.__path__ = []

    sys.meta_path.insert(0, _Finder())


def build_parser() -> tuple[argparse.ArgumentParser, Any]:
    from sglang.srt.server_args import ServerArgs

    # The same construction as prepare_server_args (server_args.py).
    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    return parser, ServerArgs


def jsonable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(jsonable(v) for v in value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return {"__repr__": repr(value)}


def type_name(tp: Any) -> str | None:
    from kimi_lsp.knowledge.schema import TYPE_NAMES

    if tp is None:
        return None
    name = getattr(tp, "__name__", repr(tp))
    mod = getattr(tp, "__module__", "") or ""
    key = f"{mod}.{name}" if mod == "json" else name
    return TYPE_NAMES.get(key, name)


def config_merger_module() -> Any:
    """sglang's `--config` merger module, or None for releases before it existed (~0.5.0)."""
    import importlib

    for name in ("sglang.srt.utils.server_args_config_parser", "sglang.srt.server_args_config_parser"):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as err:
            if not (err.name and name.startswith(err.name)):
                raise
    return None


def make_merger(scp: Any, parser: argparse.ArgumentParser) -> Any:
    """The merger exactly as this release's prepare_server_args builds it."""
    import inspect

    from sglang.srt import server_args as sa

    source = inspect.getsource(sa.prepare_server_args)
    if "ConfigArgumentMerger(boolean_actions=" in source:
        # The legacy call site: run its own collection loop on this parser.
        boolean_actions = []
        for action in parser._actions:
            if hasattr(action, "dest") and hasattr(action, "action"):
                if action.action in ["store_true", "store_false"]:
                    boolean_actions.append(action.dest)
        if "hasattr(action, \"action\")" not in source:
            raise SystemExit("prepare_server_args collects boolean actions in an unknown way")
        return scp.ConfigArgumentMerger(boolean_actions=boolean_actions)
    return scp.ConfigArgumentMerger(parser)


def config_rule_of(module: Any, merger: Any = None) -> dict[str, str]:
    if module is None:
        return {"keys": "none", "accepts": "none"}
    if merger is not None and not hasattr(merger, "unsupported_actions"):
        return {"keys": "verbatim", "accepts": "any"}
    return {"keys": "dest_and_long_options" if hasattr(module, "_config_keys") else "dest",
            "accepts": "store_true_or_single_value" if hasattr(module, "_takes_one_value") else "store_true_or_store"}


def dump_schema(parser: argparse.ArgumentParser, version: str) -> dict[str, Any]:
    from kimi_lsp.knowledge.schema import ACTION_NAMES

    scp = config_merger_module()
    merger = make_merger(scp, parser) if scp is not None else None
    rule = config_rule_of(scp, merger)
    unsupported = getattr(merger, "unsupported_actions", {})
    refused_actions = {id(a) for a in unsupported.values()}
    flags = []
    for a in parser._actions:
        cls = type(a).__name__
        choices = a.choices
        if isinstance(choices, (set, frozenset)):
            choices = sorted(choices)
        elif choices is not None:
            choices = list(choices)
        const = a.const_value if cls == "DeprecatedStoreConstAction" else a.const
        flags.append({
            "dest": a.dest, "options": list(a.option_strings), "action": ACTION_NAMES.get(cls, cls),
            "type": type_name(a.type), "choices": jsonable(choices), "default": jsonable(a.default),
            "nargs": a.nargs, "const": jsonable(const), "required": bool(a.required),
            "help": None if a.help == argparse.SUPPRESS else a.help, "hidden": a.help == argparse.SUPPRESS,
            "deprecated": getattr(a, "new_flag", None),
            "config_refused": cls if id(a) in refused_actions else None,
        })
    store_true = getattr(merger, "store_true_actions", None) or getattr(merger, "boolean_actions", None) or []
    config = {**rule, "store_true_keys": sorted(set(store_true)),
              "refused_keys": {k: type(v).__name__ for k, v in sorted(unsupported.items())}}
    return {"format": 1, "version": version, "flags": flags, "config": config,
            "choice_lists": choice_lists(), "type_data": type_data(),
            "stubbed_modules": sorted(os.environ.get("KIMI_LSP_ORACLE_STUBS", ",".join(STUB_ROOTS)).split(","))}


def choice_lists() -> dict[str, list[Any]]:
    try:
        from sglang.srt.arg_groups import choices as mod
    except ImportError:
        return {}  # before the choice lists had a module of their own

    out = {}
    for name, value in vars(mod).items():
        if name.isupper() and (name.endswith("CHOICES") or name.startswith("RADIX_SUPPORTED")):
            if isinstance(value, (list, tuple, set, frozenset)):
                out[name] = jsonable(value)
    return out


def type_data() -> dict[str, Any]:
    try:
        from sglang.srt.model_executor import cuda_graph_config as cg
    except ImportError:
        return {}
    if not hasattr(cg, "ALLOWED_KEYS_PER_PHASE"):
        return {}

    try:  # behaviour, not source: does the JSON form reject the retired backend?
        cg.parse_cuda_graph_config_arg('{"decode": {"backend": "tc_piecewise"}}')
        rejects = False
    except argparse.ArgumentTypeError:
        rejects = True
    return {"cuda_graph_config": {"phases": list(cg.Phase.ALL),
                                  "allowed_keys": {k: list(v) for k, v in cg.ALLOWED_KEYS_PER_PHASE.items()},
                                  "rejects_tc_piecewise": rejects}}


class ProbeError(Exception):
    pass


class ProbeParser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise ProbeError(message)

    def exit(self, status: int = 0, message: str | None = None):  # type: ignore[override]
        raise ProbeError(f"exit {status}")


def probe_parser() -> ProbeParser:
    from sglang.srt.server_args import ServerArgs

    parser = ProbeParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    return parser


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> dict[str, Any]:
    import contextlib
    import io
    import logging

    logging.disable(logging.CRITICAL)  # deprecated actions log warnings
    defaults = {a.dest: a.default for a in parser._actions}
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            ns = parser.parse_args(argv)
    except ProbeError as e:
        return {"error": str(e)}
    values = {k: jsonable(v) for k, v in vars(ns).items() if k not in defaults or v != defaults[k]}
    return {"error": None, "values": values}


def match_probe(parser: argparse.ArgumentParser, token: str) -> dict[str, Any]:
    if token == "--":
        # parse_args never asks _parse_optional about "--": it ends the options.
        return {"kind": "match", "token": token, "result": "end_of_options"}
    try:
        got = parser._parse_optional(token)
    except ProbeError as e:
        msg = str(e)
        matches = msg.split(" could match ", 1)[1].split(", ") if " could match " in msg else []
        return {"kind": "match", "token": token, "result": "ambiguous", "matches": matches, "error": msg}
    if got is None:
        return {"kind": "match", "token": token, "result": "positional"}
    action, option, explicit = got
    if action is None:
        return {"kind": "match", "token": token, "result": "unknown"}
    return {"kind": "match", "token": token, "result": "flag", "dest": action.dest, "option": option,
            "explicit_arg": explicit}


def match_tokens(parser: argparse.ArgumentParser) -> list[str]:
    longs = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    tokens = ["--tp", "--dp", "--pp", "--dcp", "--ep", "--mem-fraction", "--decode-attention", "--attention",
              "--prefill-attention", "--conf", "--config=x.yaml", "--h", "--he", "--hel", "-h", "-hx", "-h=1",
              "-x", "-tp", "-", "--", "---tp-size", "--tp_size", "--tp-size=2", "--tp-size=", "--tp=2", "--model",
              "--model=foo", "--mod", "--mode", "--no-dcp", "--no-dcp-replicate-q-proj", "--no-dcp-replicate",
              "--dcp-replicate", "--enable-hi", "--enable-hicache", "--enable-hierarchical", "--disable-cuda",
              "--disable-cuda-graph", "--monokernel", "--kv-cache", "--kv-cache-dtype", "--cuda-graph-bs",
              "--tool-call", "--reasoning", "--lora-path", "--lora-paths", "--lora", "--speculative-draft",
              "--no-such-flag", "--no", "--enable", "--trust", "--host=0.0.0.0", "--port", "--po", "-1", "-1.5",
              "--1", "--attention-backend=cutedsl_mla", "--decode-attention-backend", "--dcp-size=8", "--dcp-s",
              "--dcp-c", "--Tp-size", "--tp-size ", "--tp size", "--ATTENTION-BACKEND", "--enable-dp-attention",
              "--enable-dp", "--attn-dp", "--attn-dp-size", "--nnodes", "--nn", "--log", "--log-level"]
    # A spread of prefixes of the real options: full, minus one char, a few short stems.
    for i, opt in enumerate(longs):
        if i % 3 == 0:
            tokens += [opt, opt[:-1], opt + "=1"]
        if i % 7 == 0:
            tokens += [opt[: max(3, len(opt) // 2)], opt[:6]]
    seen: set[str] = set()
    return [t for t in tokens if not (t in seen or seen.add(t))]


def value_cases(parser: argparse.ArgumentParser) -> list[tuple[argparse.Action, str]]:
    by_type: dict[str, int] = {}
    out: list[tuple[argparse.Action, str]] = []
    samples = {
        "int": ["x", "2.0", "1_000", " 7 ", "-3", "\u0663", "0x10", "+4", "", "None", "true"],
        "float": ["x", "1e3", "nan", "inf", "-0.5", "1_0.5", ".5", "", "None"],
        "human_readable_int": ["128k", "1Mi", "1.5Ki", "25.6k", "1K", "abc", " 64 ", "1_024", "2.5", "0",
                               "1Ti", "3G", "1.0M", "", "-5", "1e3"],
        "json": ['{"a": 1}', "{bad", "NaN", "[1, 2]", "", "null", "'x'"],
        "json_list": ['["a", "b"]', "[1,", "NaN", "99999999999999999999999", "{}", "", "x", "[1, 2]", "Infinity"],
        "cuda_graph_config": ['{"decode": {"backend": "full", "max_bs": 256}}', '{"decode": {"backend": "tc_piecewise"}}',
                              '{"extend": {}}', '{"decode": 1}', "[1]", "{bad", '{"prefill": {"max_seq_len": 4}}',
                              '{"decode": {"max_context_size": 4}}', "", '{"decode": {"tc_compiler": "eager"}}'],
        "cuda_graph_backend": ["tc_piecewise", "full", "bogus", "breakable", "disabled", ""],
        "nullable_str": ["None", "", "x"],
        "str": ["x"],
    }
    for a in parser._actions:
        if not a.option_strings or a.nargs == 0 or a.dest == "help":
            continue
        tname = type_name(a.type) or "none"
        if a.choices is not None:
            choices = sorted(a.choices) if isinstance(a.choices, (set, frozenset)) else list(a.choices)
            values = ["bogus", str(choices[0]), "None", str(choices[-1]).upper()]
            if isinstance(a.choices, (set, frozenset)):
                values = [str(choices[0])]  # the error lists a set in hash order: not reproducible
            out += [(a, v) for v in values]
            if tname in ("int", "float", "cuda_graph_backend"):
                out += [(a, v) for v in samples[tname]]
            continue
        count = by_type.get(tname, 0)
        by_type[tname] = count + 1
        if tname in ("int", "float") and count >= 4:
            continue  # a few of each plain numeric flag is plenty
        if tname in ("str", "none") and count >= 3:
            continue
        out += [(a, v) for v in samples.get(tname, ["x"])]
    return out


def argv_cases() -> list[list[str]]:
    m = ["--model-path", "m"]
    return [
        [], m, ["--model", "m"], ["--model=m"], ["--mod", "m"], m + ["--tp", "8"], m + ["--tp-size=8"],
        m + ["--tensor-parallel-size", "4"], m + ["--tp", "2", "--tp", "4"], m + ["--tp"], m + ["--tp", "x"],
        m + ["--pp", "2"], m + ["--dcp", "8"], m + ["--dcp-size", "8", "--dcp-comm-backend", "a2a"],
        m + ["--dcp-replicate-q-proj"], m + ["--no-dcp-replicate-q-proj"], m + ["--dcp-replicate-q-proj", "true"],
        m + ["--decode-attention", "cutedsl_mla"], m + ["--attention-backend", "tokenspeed_mla"],
        m + ["--attention-backend=None"], m + ["--attention-backend", "None"], m + ["--attention-backend"],
        m + ["--disable-radix-cache"], m + ["--disable-radix-cache", "true"], m + ["--disable-radix-cache=1"],
        m + ["--disable-cuda-graph"], m + ["--enable-dp-attention", "--dp-size", "2"],
        m + ["--monokernel-backend", "amd"], m + ["--monokernel-backend", "nvidia"], m + ["--monokernel-backend"],
        m + ["--cuda-graph-bs", "1", "2", "4"], m + ["--cuda-graph-bs"], m + ["--cuda-graph-bs", "1", "x"],
        m + ["--lora-paths"], m + ["--lora-paths", "a", "b=c"], m + ["--context-length", "128k"],
        m + ["--context-length", "1.5Ki"], m + ["--context-length=1Mi"], m + ["--json-model-override-args", '{"a": 1}'],
        m + ["--json-model-override-args", "{bad"], m + ["--cuda-graph-backend-decode", "tc_piecewise"],
        m + ["--cuda-graph-config", '{"decode": {"backend": "full"}}'], m + ["--tool-call-parser", "qwen25"],
        m + ["--reasoning-parser", "kimi_k3"], m + ["--reasoning-parser", "nope"], m + ["--kv-canary-real-data", "all"],
        m + ["--config", "x.yaml"], m + ["--config=x.yaml"], m + ["--conf", "x.yaml"], m + ["--no-such-flag", "1"],
        m + ["--tp_size", "2"], m + ["extra"], m + ["--tp", "-2"], m + ["--mem-fraction-static", "-0.5"],
        m + ["--host=::"], m + ["--port", "--tp", "2"], m + ["--enable-hi"], m + ["-h=1"], m + ["-x"],
        m + ["--", "--tp", "2"], m + ["--tp", "2", "--"], m + ["--served-model-name="], m + ["--api-key", ""],
    ]


CONFIG_CASES: list[dict[str, Any]] = [
    {"tp-size": 2}, {"tensor-parallel-size": 4}, {"tp": 2}, {"tp_size": 2}, {"--tp-size": 2},
    {"disable-radix-cache": True}, {"disable-radix-cache": False}, {"disable_radix_cache": True},
    {"disable-radix-cache": "true"}, {"disable-radix-cache": 1}, {"tp-size": True}, {"tp-size": None},
    {"attention-backend": None}, {"tp-size": 2.0}, {"tp-size": "2"}, {"tp-size": [2, 4]},
    {"cuda-graph-bs": [1, 2, 4]}, {"cuda-graph-bs": []}, {"json-model-override-args": {"a": 1}},
    {"dcp-replicate-q-proj": True}, {"no-dcp-replicate-q-proj": True}, {"dcp_replicate_q_proj": False},
    {"disable-cuda-graph": True}, {"enable-dp-attention": True}, {"lora-paths": ["a"]},
    {"enable-hicache": True}, {"enable-hierarchical-cache": True}, {"monokernel-backend": "amd"},
    {"enable-amd-monokernel": True}, {"no-such-flag": 1}, {"model-path": "m"}, {"model": "m"},
    {"decode-attention-backend": "cutedsl_mla", "dcp-size": 8}, {"dcp": 8}, {"pp": 2},
    {"enable-tf32-matmul": True}, {"context-length": "128k"}, {"config": "other.yaml"},
]


def config_probe(parser: argparse.ArgumentParser, mapping: dict[str, Any]) -> dict[str, Any]:
    merger = make_merger(config_merger_module(), parser)
    try:
        args = merger._convert_config_to_args(mapping)
    except ValueError as e:
        return {"kind": "config", "yaml": mapping, "merged": None, "error": str(e)}
    result = parse(parser, args + (["--model-path", "m"] if not any(k.startswith("model") for k in mapping) else []))
    return {"kind": "config", "yaml": mapping, "merged": args, "error": None, "parse": result}


def run_probes(version: str) -> dict[str, Any]:
    parser = probe_parser()
    probes: list[dict[str, Any]] = [match_probe(parser, t) for t in match_tokens(parser)]
    for action, value in value_cases(parser):
        option = action.option_strings[0]
        argv = ["--model-path", "m", option, value]
        res = parse(parser, argv)
        entry = {"kind": "value", "option": option, "dest": action.dest, "value": value,
                 "error": res["error"]}
        if res["error"] is None:
            entry["parsed"] = res["values"].get(action.dest, jsonable(action.default))
        probes.append(entry)
    for argv in argv_cases():
        probes.append({"kind": "argv", "argv": argv, **parse(parser, argv)})
    if config_merger_module() is not None:
        probes += [config_probe(parser, c) for c in CONFIG_CASES]
    return {"format": 1, "version": version, "python": sys.version.split()[0], "probes": probes}


def inner(args: argparse.Namespace) -> int:
    install_stubs()
    try:
        import sglang.srt.server_args  # noqa: F401
    except ModuleNotFoundError as err:
        if err.name and not err.name.startswith("sglang"):
            print(f"MISSING {err.name.split('.')[0]}")  # the outer side stubs it and runs again
            return MISSING_EXIT
        raise
    if args.batch:
        return run_batch(args.batch)
    if args.argv:
        parser = probe_parser()
        for raw in args.argv:
            print(json.dumps({"argv": json.loads(raw), **parse(parser, json.loads(raw))}))
        return 0
    parser, _ = build_parser()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    schema = dump_schema(parser, args.version)
    (args.out_dir / f"sglang-{args.version}.json").write_text(json.dumps(schema, indent=1) + "\n")
    probes = run_probes(args.version)
    (args.out_dir / f"argparse-probes-{args.version}.json").write_text(
        json.dumps(probes, indent=None, separators=(",", ":")).replace('},{"kind"', '},\n{"kind"') + "\n")
    print(f"{args.version}: {len(schema['flags'])} actions, {len(probes['probes'])} probes", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------------------------
# Batch mode: whole launches through sglang's own code (bench/differential/run)
# ---------------------------------------------------------------------------------------------

K3_ARCH = "KimiK3ForConditionalGeneration"


def _flashinfer_stub(kind: str) -> None:
    """What `from flashinfer.decode import trtllm_batch_decode_with_kv_cache_mla` finds.

    kind: "enable_dcp" (0.6.17rc1 and later), "no_enable_dcp" (0.6.16.post4 and earlier), or
    "absent" (not installed). Only the signature matters to sglang's probe (kimi_k3.py)."""
    import types

    for name in ("flashinfer", "flashinfer.decode"):
        sys.modules.pop(name, None)
    if kind == "absent":
        sys.modules["flashinfer"] = None  # type: ignore[assignment]  # import raises ImportError
        return
    pkg = types.ModuleType("flashinfer")
    pkg.__path__ = []  # type: ignore[attr-defined]
    dec = types.ModuleType("flashinfer.decode")
    if kind == "enable_dcp":
        def trtllm_batch_decode_with_kv_cache_mla(query, kv_cache, workspace_buffer, qk_nope_head_dim,  # noqa: ANN001,ANN202
                                                  kv_lora_rank, qk_rope_head_dim, block_tables, seq_lens,
                                                  max_seq_len, sparse_mla_top_k=0, out=None, enable_dcp=False):
            return None
    else:
        def trtllm_batch_decode_with_kv_cache_mla(query, kv_cache, workspace_buffer, qk_nope_head_dim,  # noqa: ANN001,ANN202
                                                  kv_lora_rank, qk_rope_head_dim, block_tables, seq_lens,
                                                  max_seq_len, sparse_mla_top_k=0, out=None):
            return None
    dec.trtllm_batch_decode_with_kv_cache_mla = trtllm_batch_decode_with_kv_cache_mla  # type: ignore[attr-defined]
    pkg.decode = dec  # type: ignore[attr-defined]
    sys.modules["flashinfer"] = pkg
    sys.modules["flashinfer.decode"] = dec


def _architecture(server_args: Any) -> str | None:
    """`hf_config.architectures[0]` as sglang would see it, without transformers: the model
    directory's config.json (relative to the case's directory), then a
    `--json-model-override-args` `architectures` (setattr()ed as written, model_config.py)."""
    model = str(getattr(server_args, "model_path", "") or "")
    arch: Any = None
    cfg = Path(model) / "config.json"
    if cfg.is_file():
        try:
            arch = (json.loads(cfg.read_text()).get("architectures") or [None])[0]
        except (ValueError, AttributeError, IndexError, TypeError):
            arch = None
    raw = getattr(server_args, "json_model_override_args", None)
    if raw:
        try:
            override = json.loads(raw)
        except ValueError:
            override = None
        if isinstance(override, dict) and "architectures" in override:
            value = override["architectures"]
            arch = value[0] if isinstance(value, (list, str)) and value else None
    return arch


def _outcome(stage: str, exc: BaseException, stderr: str) -> dict[str, Any]:
    if isinstance(exc, SystemExit):
        lines = [ln for ln in stderr.splitlines() if ln.strip()]
        message = lines[-1] if lines else f"exit {exc.code}"
        if exc.code in (0, None):
            return {"ok": True, "stage": stage, "exit": exc.code, "note": message}
        return {"ok": False, "stage": stage, "exc": "SystemExit", "message": message}
    return {"ok": False, "stage": stage, "exc": type(exc).__name__, "message": str(exc)[:500]}


def serve_argv(case: dict[str, Any]) -> list[str]:
    """The argv `prepare_server_args` gets: for `sglang serve` (case "entry"), what this release's
    cli/serve.py does first -- `--model-type` taken off (0.5.10 on), a bare first word made the
    model path (0.5.16 on) -- and its `get_model_path`, which raises when it finds no model. The
    model is taken to be a language model (detecting a diffusion one needs its files)."""
    argv = list(case["argv"])
    if case.get("entry") != "serve":
        return argv
    from sglang.cli import serve as sv
    from sglang.cli import utils as su

    if hasattr(sv, "_extract_model_type_override"):
        _, argv = sv._extract_model_type_override(argv)
    if hasattr(sv, "_normalize_positional_model_path"):
        argv, _ = sv._normalize_positional_model_path(argv)
    if not any(h in argv for h in ("-h", "--help")):
        su.get_model_path(argv)
    return list(argv)


def run_one(case: dict[str, Any]) -> dict[str, Any]:
    """One launch: `prepare_server_args(argv)` (argparse, the `--config` merger, the record
    constructor), then the resolution steps that need neither a GPU nor the model's files, in
    the order of arg_groups/pipeline.py: handle_deprecated_args (the attention-backend renames),
    handle_decode_context_parallelism, and, when the architecture is Kimi-K3, the
    `_kimi_k3_overrides` declaration provider (flashinfer served by `_flashinfer_stub`).
    Everything else in run_resolution_pipeline needs the HF config (transformers, model files)
    or the platform (GPU), so the outcome says nothing about those checks."""
    import contextlib
    import importlib
    import io

    from sglang.srt import server_args as sa

    stages = case.get("stages", ["parse"])
    saved_env = {k: os.environ.get(k) for k in case.get("env", {})}
    os.environ.update(case.get("env", {}))
    old_cwd = os.getcwd()
    os.chdir(case.get("cwd") or old_cwd)
    err = io.StringIO()
    stage = "parse"
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            if not hasattr(sa.ServerArgs, "resolve_once"):
                # Before resolution moved out of the constructor (~0.5.2x), ServerArgs'
                # __post_init__ resolves everything and asks for an accelerator first: stop
                # right after argparse (the --config merge included), the rest needs a GPU.
                real_from_cli = sa.ServerArgs.from_cli_args

                def stop(*_a: Any, **_k: Any) -> Any:
                    raise _ParsedOnly()

                sa.ServerArgs.from_cli_args = stop
                try:
                    sa.prepare_server_args(serve_argv(case))
                except _ParsedOnly:
                    pass
                finally:
                    sa.ServerArgs.from_cli_args = real_from_cli
                return {"id": case["id"], "ok": True, "stage": "parse", "arch": None,
                        "note": "stopped after argparse: this release resolves in ServerArgs.__post_init__"}
            server_args = sa.prepare_server_args(serve_argv(case))
            server_args._resolved_overrides = []
            if "dcp" in stages or "k3" in stages:
                stage = "deprecated"
                from sglang.srt.arg_groups.serving_hook import handle_deprecated_args

                handle_deprecated_args(server_args)
                stage = "dcp"
                ph = importlib.import_module("sglang.srt.arg_groups.parallel_hook")
                # The launch targets an NVIDIA box; the stubbed torch says "no CUDA" (which
                # would turn the DCP comm-backend default into ag_rs and refuse fi_a2a).
                patched = [m for m in (ph, sys.modules.get("sglang.srt.arg_groups.overrides"))
                           if m is not None and hasattr(m, "get_platform")]
                saved = [(m, m.get_platform) for m in patched]
                for m, real in saved:
                    m.get_platform = (lambda real=real: _CudaPlatform(real()))
                try:
                    # (0.5.19-0.5.20 validate DCP in handle_dcp_validation, same place in the pipeline)
                    dcp = getattr(ph, "handle_decode_context_parallelism", None) or ph.handle_dcp_validation
                    dcp(server_args)
                finally:
                    for m, real in saved:
                        m.get_platform = real
            arch = None
            if "k3" in stages:
                stage = "k3"
                arch = _architecture(server_args)
                model = str(server_args.model_path or "")
                if arch == K3_ARCH and model.lower() not in ("none", "dummy"):
                    from sglang.srt.arg_groups.model_overrides import kimi_k3

                    _flashinfer_stub(case.get("flashinfer", "enable_dcp"))
                    kimi_k3._kimi_k3_overrides(server_args, None)
        return {"id": case["id"], "ok": True, "stage": stage, "arch": arch}
    except BaseException as exc:  # noqa: BLE001  # argparse's SystemExit included
        if isinstance(exc, KeyboardInterrupt):
            raise
        return {"id": case["id"], **_outcome(stage, exc, err.getvalue())}
    finally:
        os.chdir(old_cwd)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class _ParsedOnly(Exception):
    """prepare_server_args got past argparse (old releases: where the oracle stops)."""


class _CudaPlatform:
    """The platform object with `is_cuda` answering yes (the launch's target is CUDA)."""

    def __init__(self, real: Any) -> None:
        self._real = real

    is_cuda = True
    is_hip = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def run_batch(path: Path) -> int:
    """Cases, one JSON object a line: {"id", "argv", "cwd", "env", "stages", "flashinfer"};
    prints {"id", "ok", "stage", "exc", "message"} a line, in the same order."""
    import importlib
    import logging

    logging.disable(logging.CRITICAL)
    # Import what the resolution steps need up front, so that a third-party module missing
    # from the light venv is stubbed by the outer retry loop rather than failing a case.
    for name in ("sglang.srt.arg_groups.serving_hook", "sglang.srt.arg_groups.parallel_hook",
                 "sglang.srt.arg_groups.model_overrides.kimi_k3"):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name and not err.name.startswith("sglang"):
                print(f"MISSING {err.name.split('.')[0]}")
                return MISSING_EXIT
            if not (err.name and name.startswith(err.name)):
                raise  # an older release without this module: its cases say so one by one
    import inspect

    from sglang.srt import server_args as sa

    out = sys.stdout
    # Facts about this release's entry that decide which kimi-lsp checks the outcome covers.
    source = inspect.getsource(sa.prepare_server_args)
    out.write(json.dumps({"id": "__facts__", "logging_in_prepare": "logging.basicConfig" in source,
                          "resolves_in_post_init": not hasattr(sa.ServerArgs, "resolve_once")}) + "\n")
    for line in path.read_text().splitlines():
        if line.strip():
            out.write(json.dumps(run_one(json.loads(line))) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
