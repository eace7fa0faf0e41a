"""The package's own bytecode, read from one file.

A one-file ``kimi-lsp --check`` imports ~100 of the package's modules. Through importlib each one
costs about ten system calls (the directory, the source, then open, fstat, ioctl, seek, two reads
and a close of the ``.pyc``) and its finders' Python code: ~4 ms of a 45 ms run on this machine.
So the bytecode CPython writes for them is also kept in one file, ``imports.marshal`` in the
user's cache directory (``_kept``: per interpreter, install and ``-O`` level, written 0600, only
read when this user's own), read once at start-up; a module found there costs one ``stat`` of its
source.

An entry is what the module's ``.pyc`` held, and it is used under the rule the ``.pyc`` is used
under: only while the source has the size and modification time it was compiled from (timestamp
``.pyc`` files; hash-based ones are left to importlib), and only where importlib would look for
the module (its parent package's ``__path__``). Anything else (no entry, a stale entry, another
interpreter's file, a damaged entry: each carries a CRC-32 checked before its bytes are decoded)
means the usual import, which reads or writes the ``.pyc``. The file is rewritten at exit when the
run imported one of the package's modules the usual way (the first run after an install, an
upgrade or an edit), never when bytecode is not written (``-B``, ``PYTHONDONTWRITEBYTECODE``);
nothing is ever written into the package.

All of this leans on importlib's internals (``_frozen_importlib_external``, ``_imp``), so it runs
only where ``_kept.FAST`` says so: the CPython versions it was tested on, without
``KIMI_LSP_PLAIN_STARTUP=1``. Elsewhere ``install`` and ``use_direct_imports`` do nothing and every
import is the interpreter's own.

The short commands (``--check``, ``rules``, ``explain``, ``export``: ``cli.main.entry``) go one
step further: ``use_direct_imports`` puts ``_import`` in ``builtins.__import__``, which makes a
module of the package from its kept entry itself (``_direct``: the attributes, order and checks
importlib's ``_find_and_load`` has, without its module locks, finder loop and
``module_from_spec``): ~17 us less a module (measured again for issue 32: 7.0 M instructions, ~1.6 ms,
of a one-file check; kept, behind ``_kept.FAST`` like the rest). Whatever it cannot vouch for, and every other
module, goes to the interpreter's own ``__import__``. The language server, ``verify`` and a
library user of the package never see it.
"""
from __future__ import annotations

import marshal
import os
import sys

from kimi_lsp import _kept

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

_PACKAGE = __name__.rpartition(".")[0]
_PREFIX = _PACKAGE + "."
_ROOT = os.path.dirname(os.path.abspath(__file__))  # the package directory
_EXT: Any = sys.modules.get("_frozen_importlib_external") if _kept.FAST else None
_MAGIC: bytes | None = getattr(_EXT, "MAGIC_NUMBER", None)
_IDENT = (_kept.FORMAT, "imports", sys.version, _MAGIC)  # what a kept file must say made it
_TAG = sys.implementation.cache_tag
# Paths with ``/`` their only separator (not Windows, whose paths may also use a backslash): the
# finder splits them itself. Where, moreover, importlib's cache_from_source is plain
# ``<dir>/__pycache__/<name>.<tag>.pyc`` (no ``PYTHONPYCACHEPREFIX``, no ``-O``), it writes that
# path itself too; else it asks cache_from_source.
_PLAIN_PATHS = os.sep == "/" and not os.altsep
_PLAIN_CACHE = _PLAIN_PATHS and sys.pycache_prefix is None and not sys.flags.optimize and _TAG is not None

# name -> (path relative to the package directory, source mtime, source size, start, end, is package, CRC)
_index: dict[str, tuple[str, int, int, int, int, bool, int]] = {}
_blob: Any = b""  # the file's bytes (an mmap)
_ModuleType = type(sys)
_builtin_import = __import__
_get_ident = sys.modules["_thread"].get_ident  # built in (threading is not imported)
_fix_co_filename = getattr(sys.modules.get("_imp"), "_fix_co_filename", None)  # built in, as importlib's own
_main_thread = -1  # the thread ``use_direct_imports`` was called in
_before: set[str] = set()  # the package's modules imported before ``install`` (this one, _kept)
if _fix_co_filename is None:  # pragma: no cover - an importlib without it: the plain path
    _EXT = _MAGIC = None


class _Loader(_EXT.SourceFileLoader if _EXT is not None else object):  # type: ignore[misc]
    """importlib's own loader for the module's source file, handed the kept bytecode."""

    def __init__(self, fullname: str, path: str, span: tuple[int, int, int]) -> None:
        super().__init__(fullname, path)
        self._span = span

    def get_code(self, fullname: str) -> Any:
        start, end, crc = self._span
        raw = memoryview(_blob)[start:end]
        if fullname != self.name or not _kept.sound(raw, crc):  # damaged: the .pyc or the source
            return super().get_code(fullname)
        code = marshal.loads(raw)
        _fix_co_filename(code, self.path)  # type: ignore[misc]  # as SourceLoader.get_code does
        return code


class _Finder:
    """On ``sys.meta_path`` ahead of importlib's path finder: the package's modules whose entry
    is valid, else None (importlib goes on as usual)."""

    @staticmethod
    def find_spec(fullname: str, path: Any = None, target: Any = None) -> Any:
        entry = _index.get(fullname)
        if entry is None or path is None:
            return None
        rel, mtime, size, start, end, is_package, crc = entry
        if _PLAIN_PATHS:  # os.path.join's and dirname's answers, without their calls
            origin = f"{_ROOT}/{rel}"
            directory, _, file_name = origin.rpartition("/")
            where = directory.rpartition("/")[0] if is_package else directory
        else:
            origin = os.path.join(_ROOT, rel)
            directory, file_name = os.path.dirname(origin), os.path.basename(origin)
            where = os.path.dirname(directory) if is_package else directory
        if list(path) != [where]:
            return None  # a parent __path__ of another shape: importlib searches it
        try:
            if _stamp(os.stat(origin)) != (mtime, size):
                return None
        except OSError:
            return None
        spec = sys.modules["_frozen_importlib"].ModuleSpec(
            fullname, _Loader(fullname, origin, (start, end, crc)), origin=origin, is_package=is_package)
        if is_package:
            spec.submodule_search_locations = [directory]
        if _PLAIN_CACHE and file_name.endswith(".py"):  # cache_from_source's answer, without its ~2 us
            spec.cached = f"{directory}/__pycache__/{file_name[:-3]}.{_TAG}.pyc"
        else:
            spec.cached = _EXT.cache_from_source(origin)
        spec.has_location = True
        return spec


def _direct(name: str) -> ModuleType | None:
    """``name`` (a module of the package) imported from its kept entry as importlib imports it,
    without importlib's machinery (its module locks, finders' loop, ``module_from_spec``): None
    when the entry cannot vouch for it (importlib then imports it the usual way)."""
    parent_name, _, child = name.rpartition(".")
    parent = sys.modules.get(parent_name)
    if parent is None:
        if parent_name not in _index or (parent := _direct(parent_name)) is None:
            return None
        done = sys.modules.get(name)
        if done is not None:  # the parent's __init__ imported it (importlib checks the same)
            return done
    spec = _Finder.find_spec(name, getattr(parent, "__path__", None))
    if spec is None:
        return None
    module = _ModuleType(name)
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__file__ = spec.origin
    module.__cached__ = spec.cached  # type: ignore[attr-defined]  # set by import on every module
    if spec.submodule_search_locations is not None:
        module.__package__ = name
        module.__path__ = spec.submodule_search_locations
    else:
        module.__package__ = parent_name
    code = spec.loader.get_code(name)
    sys.modules[name] = module
    spec._initializing = True
    try:
        exec(code, module.__dict__)  # noqa: S102 - the package's own bytecode, as importlib runs it
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        spec._initializing = False
    module = sys.modules[name]  # a module may put another object in its place, as import allows
    setattr(parent, child, module)
    return module


def _import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    """``__import__`` for the short commands: the package's own modules through ``_direct``,
    everything else (and anything ``_direct`` declines) through the interpreter's own."""
    if level == 0 and name.startswith(_PREFIX) and _get_ident() == _main_thread:
        module = sys.modules.get(name)
        if module is None and (name not in _index or (module := _direct(name)) is None):
            return _builtin_import(name, globals, locals, fromlist, level)
        if not fromlist:
            return sys.modules[_PACKAGE]
        if hasattr(module, "__path__"):
            for attr in fromlist:
                if attr == "*":  # submodules named in __all__: importlib's own _handle_fromlist
                    return _builtin_import(name, globals, locals, fromlist, level)
                if not hasattr(module, attr):
                    sub = f"{name}.{attr}"
                    if sys.modules.get(sub) is None and (sub not in _index or _direct(sub) is None):
                        return _builtin_import(name, globals, locals, fromlist, level)
        return module
    return _builtin_import(name, globals, locals, fromlist, level)


def use_direct_imports() -> None:
    """From now on the package's modules are imported by ``_direct`` in this thread (the short
    commands' start-up: ~17 us of importlib machinery a module, ~100 modules). Other threads
    (a process pool's) import the usual way: ``_direct`` takes no import lock."""
    global _main_thread
    import builtins

    if _index and builtins.__import__ is _builtin_import:
        _main_thread = _get_ident()
        builtins.__import__ = _import


def end_direct_imports() -> None:
    """Back to the interpreter's own ``__import__`` (a lint of many files, once started: every
    ``import`` a function runs then costs a call of ``_import``, ~1 us, and a large lint runs tens
    of thousands of them, while the few modules still to come cost ~17 us more each the usual way,
    through the kept file's finder)."""
    import builtins

    if builtins.__import__ is _import:
        builtins.__import__ = _builtin_import


def _stamp(st: os.stat_result) -> tuple[int, int]:
    """A source's modification time and size as a timestamp ``.pyc`` records them."""
    return int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF


def _read() -> tuple[dict[str, tuple[str, int, int, int, int, bool, int]], Any]:
    """The index and the bytes its spans point into; empty for a missing, foreign, damaged or
    untrusted file (``_kept.read``). Mapped, not read: a run touches only the pages of the modules
    it imports, and reading the whole ~2 MB into memory costs ~1 ms."""
    found = _kept.read(_kept.path_of("imports"), _IDENT)
    if found is None or type(found[0]) is not dict:
        return {}, b""
    index, blob = found
    out = {}
    for name, entry in index.items():
        try:
            rel, mtime, src_size, start, end, is_package, crc = entry
        except (TypeError, ValueError):
            return {}, b""
        if not (type(name) is str and type(rel) is str and 0 <= start <= end <= len(blob)):
            return {}, b""
        out[name] = (rel, mtime, src_size, start, end, bool(is_package), crc)
    return out, blob


def install() -> None:
    """Read the kept file and put the finder first on ``sys.meta_path`` (once; only where
    ``_kept.FAST``)."""
    global _index, _blob
    if _MAGIC is None or any(f is _Finder for f in sys.meta_path):
        return
    _index, _blob = _read()
    _before.update(name for name in sys.modules if name.startswith(_PREFIX))
    sys.meta_path.insert(0, _Finder)
    import atexit

    atexit.register(_save)


def _pyc_entry(mod: ModuleType) -> tuple[str, int, int, bytes, bool] | None:
    """(relative path, mtime, size, code, is package) from the module's ``.pyc``, when that file
    is a timestamp pyc of this interpreter that matches the source."""
    spec = getattr(mod, "__spec__", None)
    if spec is None or type(spec.loader) is not _EXT.SourceFileLoader or not spec.cached:
        return None
    origin = spec.origin
    if not (isinstance(origin, str) and origin.startswith(_ROOT + os.sep) and origin.endswith(".py")):
        return None
    try:
        mtime, size = _stamp(os.stat(origin))
        with open(spec.cached, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if not (data[:4] == _MAGIC and data[4:8] == b"\0\0\0\0" and int.from_bytes(data[8:12], "little") == mtime
            and int.from_bytes(data[12:16], "little") == size):
        return None
    return os.path.relpath(origin, _ROOT), mtime, size, data[16:], spec.submodule_search_locations is not None


def _save() -> None:
    """Rewrite the kept file when this run imported a module of the package the usual way:
    its entries, plus the previous file's sound entries whose sources are unchanged."""
    crc32 = _kept.crc32
    if sys.dont_write_bytecode or _MAGIC is None or crc32 is None:
        return
    fresh = {}
    for name, mod in list(sys.modules.items()):
        if not name.startswith(_PACKAGE + ".") or name in _before:
            continue  # (imported before the finder could serve them: the usual way, every run)
        if isinstance(getattr(getattr(mod, "__spec__", None), "loader", None), _Loader):
            continue  # served from the file: its entry is kept below
        entry = _pyc_entry(mod)  # new, or its entry was stale: imported the usual way
        if entry is not None:
            fresh[name] = entry
    if not fresh:
        return
    kept: dict[str, tuple[str, int, int, bytes, bool]] = {}
    for name, (rel, mtime, size, start, end, is_package, crc) in _index.items():
        if name in fresh:
            continue
        try:
            code = _blob[start:end]
            if _stamp(os.stat(os.path.join(_ROOT, rel))) == (mtime, size) and _kept.sound(code, crc):
                kept[name] = (rel, mtime, size, bytes(code), is_package)
        except OSError:
            continue
    kept.update(fresh)
    index, parts, offset = {}, [], 0
    for name, (rel, mtime, size, code, is_package) in sorted(kept.items()):
        index[name] = (rel, mtime, size, offset, offset + len(code), is_package, crc32(code))
        parts.append(code)
        offset += len(code)
    _kept.write(_kept.path_of("imports"), _IDENT, index, parts)


def pathlib_without_urllib() -> None:
    """Import pathlib without ``urllib.parse``, on the Pythons whose pathlib imports it at the top.

    pathlib before 3.13 imports ``urllib.parse`` for one function, ``quote_from_bytes``, which
    only ``Path.as_uri`` calls. ``urllib.parse`` (with ``ipaddress`` and its named tuples) is
    ~4.5 ms, a tenth of a one-file check that never makes a URI; 3.13's pathlib imports it in
    ``as_uri``. So pathlib is imported with a stand-in module under that name whose
    ``quote_from_bytes`` imports the real one when called, and the stand-in is gone from
    ``sys.modules`` before anything else can see it: a later ``import urllib.parse`` is the real
    module. If pathlib asks the stand-in for anything else, it is imported again the usual way."""
    if sys.version_info >= (3, 13) or "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    from types import ModuleType

    def quote_from_bytes(*args: Any, **kwargs: Any) -> Any:
        from urllib.parse import quote_from_bytes as real

        return real(*args, **kwargs)

    stand_in = ModuleType("urllib.parse", "pathlib's urllib.parse until Path.as_uri is called (kimi_lsp._imports)")
    stand_in.quote_from_bytes = quote_from_bytes  # type: ignore[attr-defined]
    sys.modules["urllib.parse"] = stand_in
    try:
        import pathlib  # noqa: F401
    except ImportError:
        pass
    finally:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]
        urllib = sys.modules.get("urllib")
        if urllib is not None and getattr(urllib, "parse", None) is stand_in:
            del urllib.parse
    if "pathlib" not in sys.modules:  # it asked for more than quote_from_bytes
        import pathlib  # noqa: F401,F811
