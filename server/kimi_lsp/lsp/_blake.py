"""BLAKE2b for result ids and text digests, without ``hashlib``: hashlib loads OpenSSL's
``_hashlib`` (~5 ms of a server's start-up) although BLAKE2 is CPython's own ``_blake2``."""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # an interpreter without the builtin module
    from hashlib import blake2b

__all__ = ["blake2b"]
