"""Start the kimi-lsp server bundled in the VS Code extension, with any Python 3.10 or newer.

    python -I launch.py [--storage DIR] [--] KIMI-LSP-ARGS...      e.g. `serve`, `--version`

The extension ships kimi-lsp and its dependencies as pure-Python wheels next to this file
(``../libs/*.whl``). They are unpacked once into ``DIR/server/<version>-<hash>/`` (the extension's
global storage): built in a temporary sibling and renamed into place, so two windows starting at
the same time never see half a directory, and kept, so the ``.pyc`` files Python writes there are
reused on the next start (importing from the zip files directly would compile every module on
every start, and kimi-lsp reads its data files from its package directory). The directory is put
first on ``sys.path`` and kimi-lsp runs as its console script would. Nothing is downloaded.

When DIR cannot be written, the wheels are unpacked into a temporary directory for this run only,
with a warning on stderr (the extension shows it). Lines on stderr that start with
``kimi-lsp-bundle: warning:`` or ``kimi-lsp-bundle: error:`` are meant for the user.

``-I`` (isolated mode) keeps the working directory (the user's workspace), ``PYTHONPATH`` and the
user site-packages off ``sys.path``, so only this bundle and the interpreter's own site-packages
are importable, in that order.

This file is read by old interpreters too (the version check below must be able to run), so it
uses no syntax newer than Python 2.7 can parse.
"""
import hashlib
import os
import shutil
import sys
import tempfile
import time
import zipfile

MIN_PYTHON = (3, 10)
PREFIX = "kimi-lsp-bundle"
MARKER = ".kimi-lsp-bundle-complete"
# A directory nobody has started from for this long belongs to an extension version that is gone.
STALE_SECONDS = 30 * 24 * 3600
# A half-built directory this old was left by a process that died while unpacking.
STALE_TMP_SECONDS = 3600


def warn(message):
    sys.stderr.write("%s: warning: %s\n" % (PREFIX, message))
    sys.stderr.flush()


def error(message):
    sys.stderr.write("%s: error: %s\n" % (PREFIX, message))
    sys.stderr.flush()


def wheels_dir():
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")


def list_wheels(directory):
    names = sorted(n for n in os.listdir(directory) if n.endswith(".whl"))
    if not any(n.lower().startswith("kimi_lsp-") for n in names):
        raise RuntimeError("no kimi_lsp wheel in %s" % directory)
    return [os.path.join(directory, n) for n in names]


def bundle_key(wheels):
    """``<kimi-lsp version>-<hash of every wheel>``: a new bundle never reuses an old directory."""
    digest = hashlib.sha256()
    version = "unknown"
    for path in wheels:
        name = os.path.basename(path)
        if name.lower().startswith("kimi_lsp-"):
            version = name.split("-")[1]
        digest.update(name.encode("utf-8") + b"\0")
        with open(path, "rb") as f:
            digest.update(f.read())
    return "%s-%s" % (version, digest.hexdigest()[:16])


def unpack(wheels, target):
    """Extract every wheel into ``target`` (which exists and is empty)."""
    root = os.path.realpath(target)
    for path in wheels:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                name = info.filename
                dest = os.path.realpath(os.path.join(root, name))
                if os.path.isabs(name) or not dest.startswith(root + os.sep):
                    raise RuntimeError("%s: refusing the entry %r" % (os.path.basename(path), name))
                if name.split("/", 1)[0].endswith(".data"):
                    continue  # scripts/headers of a wheel: not importable, not needed
                zf.extract(info, root)


def prune(parent, keep):
    """Best effort: remove half-built directories and bundles unused for a long time."""
    now = time.time()
    try:
        entries = os.listdir(parent)
    except OSError:
        return
    for name in entries:
        if name == keep:
            continue
        path = os.path.join(parent, name)
        try:
            if name.startswith(".tmp-"):
                if now - os.path.getmtime(path) > STALE_TMP_SECONDS:
                    shutil.rmtree(path, ignore_errors=True)
            elif os.path.isfile(os.path.join(path, MARKER)):
                if now - os.path.getmtime(os.path.join(path, MARKER)) > STALE_SECONDS:
                    doomed = os.path.join(parent, ".tmp-old-" + name)
                    os.rename(path, doomed)
                    shutil.rmtree(doomed, ignore_errors=True)
        except OSError:
            pass


def prepare_in(storage, wheels, key):
    """The unpacked bundle in ``storage/server/key``, made there if it is not yet."""
    parent = os.path.join(storage, "server")
    final = os.path.join(parent, key)
    marker = os.path.join(final, MARKER)
    if os.path.isfile(marker):
        try:
            os.utime(marker, None)  # in use: not stale
        except OSError:
            pass
        return final
    os.makedirs(parent, exist_ok=True)  # windows starting together may all get here at once
    tmp = tempfile.mkdtemp(prefix=".tmp-%s-" % key, dir=parent)
    try:
        unpack(wheels, tmp)
        with open(os.path.join(tmp, MARKER), "w") as f:
            f.write(key + "\n")
        try:
            os.rename(tmp, final)
        except OSError:
            # Another process won the race (or left a broken directory): use it when complete.
            if not os.path.isfile(marker):
                raise
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    prune(parent, key)
    return final


def prepare(storage):
    wheels = list_wheels(wheels_dir())
    key = bundle_key(wheels)
    if storage:
        try:
            return prepare_in(storage, wheels, key)
        except Exception as exc:  # any failure here has the same way out
            warn("could not unpack the bundled server into %s (%s); using a temporary copy for this run, "
                 "which is unpacked again on every start" % (storage, exc))
    else:
        warn("no storage directory was given; using a temporary copy of the bundled server for this run")
    tmp = tempfile.mkdtemp(prefix="kimi-lsp-bundle-")
    import atexit

    atexit.register(shutil.rmtree, tmp, True)
    unpack(wheels, tmp)
    return tmp


def parse_args(argv):
    storage = None
    rest = list(argv)
    while rest:
        if rest[0] == "--":
            rest = rest[1:]
            break
        if rest[0] == "--storage" and len(rest) > 1:
            storage = rest[1]
            rest = rest[2:]
        elif rest[0].startswith("--storage="):
            storage = rest[0].split("=", 1)[1]
            rest = rest[1:]
        else:
            break
    return storage, rest


def main(argv):
    if sys.version_info[:2] < MIN_PYTHON:
        error("the bundled kimi-lsp server needs Python %d.%d or newer; %s is Python %d.%d.%d"
              % (MIN_PYTHON + (sys.executable,) + tuple(sys.version_info[:3])))
        return 3
    storage, rest = parse_args(argv)
    try:
        libs = prepare(storage)
    except Exception as exc:
        error("could not unpack the bundled server: %s" % (exc,))
        return 4
    sys.path.insert(0, libs)
    sys.argv = ["kimi-lsp"] + rest
    import runpy

    runpy.run_module("kimi_lsp", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
