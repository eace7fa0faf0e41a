"""Start the kimi-lsp server bundled in the VS Code extension, with any Python 3.10 or newer.

    python -I launch.py [--storage DIR] [--] KIMI-LSP-ARGS...      e.g. `serve`, `--version`

The extension ships kimi-lsp and its dependencies as pure-Python wheels next to this file
(``../libs/*.whl``). They are unpacked once into ``DIR/server/<version>-<hash>/`` (the extension's
global storage) and kept, so the ``.pyc`` files Python writes there are reused on the next start
(importing from the zip files directly would compile every module on every start, and kimi-lsp
reads its data files from its package directory). The directory is put first on ``sys.path`` and
kimi-lsp runs as its console script would. Nothing is downloaded.

How the directory stays whole:

- It is built in a temporary sibling, every file and directory fsync'ed, then the marker (which
  holds the manifest: every file's path, size and sha256) is written and fsync'ed, and only then is
  the directory renamed into place and its parent fsync'ed. A crash leaves either no directory or a
  complete one, never a marked directory whose files the disk has not got yet.
- Windows starting together take a lock (``DIR/server.lock``, released by the OS when a process dies)
  before unpacking or repairing, and look again once they hold it: the first unpacks, the others
  find its directory. Where locking is not possible, renaming into place is still atomic and a
  process that loses the race uses the winner's directory.
- Every start compares each manifest file's size with the disk (one ``stat`` per file, about a
  millisecond for the whole bundle): a truncated, missing or replaced file is caught on the start
  that would have failed. Damage that keeps sizes (a power loss on a file system that leaves unwritten
  blocks as zeros, a disk error, an edit) needs the hashes, which cost about ten times as much, so
  they are checked on the first start after each boot (Linux's boot id: a power loss is followed by
  a boot) and at least every VERIFY_SECONDS otherwise; the time of the last full check is kept in
  ``.kimi-lsp-bundle-verified``.
- A directory that fails a check, has no marker or an unreadable one is unpacked again next to it
  and swapped in (the damaged one is renamed away and deleted), with one warning. Bundles of other
  versions that nobody has started for STALE_SECONDS and no running server holds (each start takes
  a shared lock on the bundle's ``.kimi-lsp-bundle-in-use`` for its lifetime), half-built directories
  older than STALE_TMP_SECONDS and renamed-away ones are deleted; they are renamed out of their final
  name first, so a deletion that stops half way never leaves a damaged directory under a name that
  is used.

When DIR cannot be written, the wheels are unpacked into a temporary directory for this run only,
with a warning on stderr (the extension shows it). Lines on stderr that start with
``kimi-lsp-bundle: warning:`` or ``kimi-lsp-bundle: error:`` are meant for the user.

``-I`` (isolated mode) keeps the working directory (the user's workspace), ``PYTHONPATH`` and the
user site-packages off ``sys.path``, so only this bundle and the interpreter's own site-packages
are importable, in that order.

This file is read by old interpreters too (the version check below must be able to run), so it
uses no syntax newer than Python 2.7 can parse.
"""
import errno
import hashlib
import os
import shutil
import stat
import sys
import tempfile
import time
import zipfile

MIN_PYTHON = (3, 10)
PREFIX = "kimi-lsp-bundle"
MARKER = ".kimi-lsp-bundle-complete"
VERIFIED = ".kimi-lsp-bundle-verified"
LOCK = "server.lock"  # next to server/, which holds only bundles
IN_USE = ".kimi-lsp-bundle-in-use"  # locked shared by every process running from the bundle
MANIFEST_HEADER = "kimi-lsp-bundle-manifest 1"
# A directory nobody has started from for this long belongs to an extension version that is gone.
STALE_SECONDS = 30 * 24 * 3600
# A half-built directory this old was left by a process that died while unpacking.
STALE_TMP_SECONDS = 3600
# The hashes are checked at least this often (and on the first start after each boot, on Linux).
VERIFY_SECONDS = 7 * 24 * 3600
# How long a start waits for another one that is unpacking before it unpacks on its own.
LOCK_WAIT_SECONDS = 60
BOOT_ID = "/proc/sys/kernel/random/boot_id"
CHUNK = 1 << 20


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


def fsync_dir(path):
    """Make a directory's entries durable (POSIX; Windows cannot open a directory, NTFS journals them)."""
    if os.name == "nt":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def entry_parts(wheel, name):
    """The path components of a wheel entry, refusing any that could leave the target directory."""
    parts = name.split("/")
    bad = (not name or name.startswith("/") or "\\" in name or "\0" in name or "\n" in name or "\r" in name
           or ":" in parts[0] or any(p in ("", ".", "..") for p in parts))
    if bad:
        raise RuntimeError("%s: refusing the entry %r" % (os.path.basename(wheel), name))
    return parts


def unpack(wheels, target, durable=True):
    """Extract every wheel into ``target`` (which exists and is empty); return the manifest, a list
    of ``(relative path with /, size, sha256 hex)``. ``durable``: fsync every file and directory."""
    root = os.path.realpath(target)
    files = {}
    dirs = set([root])
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                name = info.filename
                is_dir = name.endswith("/")
                parts = entry_parts(wheel, name.rstrip("/") if is_dir else name)
                if parts[0].endswith(".data"):
                    continue  # scripts/headers of a wheel: not importable, not needed
                here = root
                for part in parts[:-1] if not is_dir else parts:
                    here = os.path.join(here, part)
                    if here not in dirs:
                        if not os.path.isdir(here):
                            os.mkdir(here)
                        dirs.add(here)
                if is_dir:
                    continue
                dest = os.path.join(root, *parts)
                digest = hashlib.sha256()
                size = 0
                with zf.open(info) as src:
                    with open(dest, "wb") as out:
                        while True:
                            chunk = src.read(CHUNK)
                            if not chunk:
                                break
                            digest.update(chunk)
                            size += len(chunk)
                            out.write(chunk)
                        if durable:
                            out.flush()
                            os.fsync(out.fileno())
                files["/".join(parts)] = (size, digest.hexdigest())
    if durable:
        for d in sorted(dirs, key=len, reverse=True):
            fsync_dir(d)
    return [(rel, files[rel][0], files[rel][1]) for rel in sorted(files)]


def write_marker(directory, key, manifest):
    """The marker, written last: the key, then ``sha256 size path`` per file."""
    lines = [MANIFEST_HEADER, "key " + key]
    lines.extend("%s %d %s" % (digest, size, rel) for rel, size, digest in manifest)
    lines.append("end %d" % len(manifest))  # a marker cut short at a line end is not whole
    with open(os.path.join(directory, MARKER), "wb") as f:
        f.write(("\n".join(lines) + "\n").encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())


def read_marker(directory, key):
    """The manifest in ``directory``'s marker, or a reason why there is none to trust."""
    try:
        with open(os.path.join(directory, MARKER), "rb") as f:
            lines = f.read().decode("utf-8").split("\n")
    except (OSError, IOError, ValueError) as exc:
        return None, "no readable marker (%s)" % (getattr(exc, "strerror", None) or exc,)
    if len(lines) < 4 or lines[0] != MANIFEST_HEADER or lines[1] != "key " + key:
        return None, "its marker holds no manifest of this bundle"
    if lines[-1] != "" or lines[-2] != "end %d" % (len(lines) - 4):
        return None, "its marker's manifest is incomplete"
    manifest = []
    for line in lines[2:-2]:
        fields = line.split(" ", 2)
        if len(fields) != 3 or len(fields[0]) != 64 or not fields[1].isdigit():
            return None, "its marker's manifest is damaged"
        manifest.append((fields[2], int(fields[1]), fields[0]))
    if not manifest:
        return None, "its marker's manifest is empty"
    return manifest, None


def check_sizes(directory, manifest):
    """The first file of the manifest that is missing, not a regular file or of another size."""
    top = directory + "/"  # Windows takes "/" too; os.path.join per file costs as much as the stat
    for rel, size, _digest in manifest:
        try:
            st = os.lstat(top + rel)
        except OSError:
            return "%s is missing" % rel
        if not stat.S_ISREG(st.st_mode):
            return "%s is not a regular file" % rel
        if st.st_size != size:
            return "%s has %d bytes, not %d" % (rel, st.st_size, size)
    return None


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            chunk = f.read(CHUNK)
            if not chunk:
                return digest.hexdigest()
            digest.update(chunk)


def check_hashes(directory, manifest):
    for rel, _size, digest in manifest:
        try:
            if file_sha256(os.path.join(directory, *rel.split("/"))) != digest:
                return "%s does not have its sha256" % rel
        except (OSError, IOError):
            return "%s cannot be read" % rel
    return None


def boot_id():
    """This boot's id on Linux ('' elsewhere): a power loss is always followed by a new one."""
    try:
        with open(BOOT_ID) as f:
            return f.read().strip()
    except (OSError, IOError):
        return ""


def hashes_due(directory, now):
    """Whether the hashes are due: never checked, checked before this boot, or too long ago."""
    try:
        path = os.path.join(directory, VERIFIED)
        age = now - os.path.getmtime(path)
        with open(path) as f:
            seen = f.read().strip()
    except (OSError, IOError, ValueError):
        return True
    return seen != boot_id() or not 0 <= age < VERIFY_SECONDS


def note_hashes_checked(directory):
    """Best effort (a read-only storage checks the hashes on every start instead)."""
    path = os.path.join(directory, VERIFIED)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        with open(tmp, "w") as f:
            f.write(boot_id() + "\n")
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def inspect(directory, key, full):
    """Why ``directory`` cannot be used as the unpacked bundle ``key`` (None: it can): the marker
    and the sizes, and with ``full`` the hashes too."""
    if not os.path.lexists(directory):
        return "missing"
    if os.path.islink(directory) or not os.path.isdir(directory):
        return "not a directory"
    manifest, problem = read_marker(directory, key)
    if problem is None:
        problem = check_sizes(directory, manifest)
    if problem is None and full:
        problem = check_hashes(directory, manifest)
        if problem is None:
            note_hashes_checked(directory)
    return problem


def remove(path):
    """Delete a file, link or directory tree without following links out of it."""
    try:
        if os.path.islink(path) or not os.path.isdir(path):
            os.unlink(path)
        else:
            shutil.rmtree(path, ignore_errors=True)
    except OSError:
        pass


def aside_name(parent, name):
    return os.path.join(parent, ".tmp-old-%s-%d-%s" % (name, os.getpid(), os.urandom(4).hex()))


class Lock(object):
    """An advisory lock on ``path`` held while unpacking (fcntl/msvcrt: the OS drops it when the
    process dies). Not getting it (no locking on this file system, or a holder stuck for
    LOCK_WAIT_SECONDS) is not an error: atomic renames keep the directory whole without it."""

    def __init__(self, path):
        self.path = path
        self.fd = None

    def __enter__(self):
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return self
        deadline = time.time() + LOCK_WAIT_SECONDS
        while True:
            try:
                self._lock(fd)
                self.fd = fd
                return self
            except (OSError, IOError) as exc:
                busy = exc.errno in (errno.EAGAIN, errno.EACCES, getattr(errno, "EDEADLOCK", errno.EACCES))
                if not busy or time.time() > deadline:
                    os.close(fd)
                    return self
            time.sleep(0.05)

    def __exit__(self, *exc):
        if self.fd is not None:
            try:
                self._unlock(self.fd)
            except (OSError, IOError):
                pass
            os.close(self.fd)
            self.fd = None
        return False

    @staticmethod
    def _lock(fd):
        if os.name == "nt":
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    @staticmethod
    def _unlock(fd):
        if os.name == "nt":
            import msvcrt

            os.lseek(fd, 0, 0)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_UN)


def install(wheels, parent, key):
    """Unpack into a temporary sibling, durably, and swap it in for whatever is at ``parent/key``."""
    final = os.path.join(parent, key)
    tmp = tempfile.mkdtemp(prefix=".tmp-%s-" % key, dir=parent)
    aside = None
    try:
        manifest = unpack(wheels, tmp)
        note_hashes_checked(tmp)  # the hashes were just taken from what was written
        write_marker(tmp, key, manifest)
        fsync_dir(tmp)
        if os.path.lexists(final):
            aside = aside_name(parent, key)
            os.rename(final, aside)
        os.rename(tmp, final)
        fsync_dir(parent)
    finally:
        if os.path.lexists(tmp):
            remove(tmp)
        if aside is not None:
            remove(aside)


_held = []  # the IN_USE files this process holds open, until it exits


def hold(directory):
    """Mark ``directory`` as in use for as long as this process runs: a shared lock on its IN_USE
    file (POSIX), or (Windows) the open file, which keeps the directory from being renamed."""
    try:
        fd = os.open(os.path.join(directory, IN_USE), os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o600)
    except OSError:
        return  # a read-only storage: nothing to mark, and nothing can prune it either
    if os.name != "nt":
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except (OSError, IOError):
            pass
    _held.append(fd)


def in_use(directory):
    """Whether a running process holds ``directory`` (see hold; on Windows the rename fails instead)."""
    if os.name == "nt":
        return False
    try:
        fd = os.open(os.path.join(directory, IN_USE), os.O_RDWR | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (OSError, IOError) as exc:
            return exc.errno in (errno.EAGAIN, errno.EACCES)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def prune(parent, keep, now):
    """Best effort: delete renamed-away and half-built directories, bundles nobody started for
    STALE_SECONDS and damaged ones as old, unless a running server holds them (an old extension
    version's window left open for weeks). Each is renamed out of its name before it is deleted."""
    try:
        entries = os.listdir(parent)
    except OSError:
        return
    for name in entries:
        if name == keep:
            continue
        path = os.path.join(parent, name)
        try:
            if name.startswith(".tmp-old-"):
                remove(path)  # renamed away from its name: nobody runs from it
            elif name.startswith(".tmp-"):
                if now - os.lstat(path).st_mtime > STALE_TMP_SECONDS:
                    remove(path)  # a process that was unpacking here died
            elif not name.startswith("."):
                marker = os.path.join(path, MARKER)
                used = os.path.getmtime(marker) if os.path.isfile(marker) else os.lstat(path).st_mtime
                if now - used > STALE_SECONDS and not in_use(path):
                    doomed = aside_name(parent, name)
                    os.rename(path, doomed)
                    remove(doomed)
        except OSError:
            pass


def prepare_in(storage, wheels, key):
    """The unpacked bundle in ``storage/server/key``: made, or repaired, if it is not whole."""
    parent = os.path.join(storage, "server")
    final = os.path.join(parent, key)
    now = time.time()
    due = hashes_due(final, now)
    problem = inspect(final, key, due)
    if problem is None:
        try:
            os.utime(os.path.join(final, MARKER), None)  # in use: not stale
        except OSError:
            pass
        hold(final)
        if due:
            prune(parent, key, now)  # as seldom as the hashes: once a boot or a week
        return final
    if not os.path.isdir(parent):
        os.makedirs(parent, exist_ok=True)  # windows starting together may all get here at once
    with Lock(os.path.join(storage, LOCK)):
        # Another start may have unpacked or repaired it while this one waited for the lock.
        problem = inspect(final, key, hashes_due(final, now))
        if problem is not None:
            if problem != "missing":
                warn("the unpacked server in %s was damaged (%s); unpacking it again" % (final, problem))
            try:
                install(wheels, parent, key)
            except OSError:
                # Without the lock, another start may have renamed its directory into place first.
                if inspect(final, key, False) is not None:
                    raise
    hold(final)
    prune(parent, key, now)
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
    unpack(wheels, tmp, durable=False)
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
