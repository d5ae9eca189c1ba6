"""Signed kernel cache entries: their format, and the per-user secret that signs them.

Every entry is signed: an HMAC-SHA256, under a per-user secret key, of its key
and its bytes, checked before anything in it is unpickled
(:func:`verify_entry`). The secret lives outside the cache (:func:`key_file`:
``$GUNPY_CACHE_KEY_FILE``, else ``$XDG_CONFIG_HOME/gunpy/cache.key``, else
``~/.config/gunpy/cache.key``), is made on first use (64 hex digits, mode 0600,
created under a temporary name and hard-linked into place, so processes that
start together agree on one key), and is refused when another user owns it or
others may read or write it (:class:`CacheError`). Only the key's owner can make
entries this process accepts; ``gunpy cache import`` re-signs entries carried
from another machine, the user's explicit act of trust.

What happens to an entry that fails is the cache's business
(:mod:`gunpy._jitcache`). This module imports nothing from gunpy, so that it
can be loaded on its own: the test of processes racing to create the key does,
to start them fast enough to race.
"""


import hashlib
import hmac
import os
import re
import stat
import threading
import time
import uuid

__all__ = ["key_file", "secret", "pack_entry", "entry_key", "verify_entry", "entry_name",
           "write_entry", "CacheError"]

_SUFFIX = ".gpk"


class CacheError(RuntimeError):
    """The kernel cache cannot be used (its folder or its key); the message says why."""


# ----------------------------------------------------------------------------- the key
def key_file():
    """Where the secret that signs cache entries lives: ``$GUNPY_CACHE_KEY_FILE``, else
    ``$XDG_CONFIG_HOME/gunpy/cache.key``, else ``~/.config/gunpy/cache.key`` (outside the
    cache, so that whoever can write the cache cannot read the key)."""
    p = os.environ.get("GUNPY_CACHE_KEY_FILE")
    if p:
        return os.path.abspath(os.path.expanduser(p))
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(os.path.abspath(os.path.expanduser(base)), "gunpy", "cache.key")


_KEY_TEXT = re.compile(rb"([0-9a-f]{64})\n?")
_key_lock = threading.Lock()
_secrets = {}        # key file -> the secret (bytes)


class _PartialKey(Exception):
    """A key file another process is still writing (only where hard links are missing)."""


def _read_key(path):
    """The secret in ``path``; None when there is no such file.

    Raises :class:`CacheError` when the file is not a key only its owner can use:
    not a regular file, another user's, readable or writable by group or others.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CacheError(f"cannot read the cache key {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CacheError(f"the cache key {path} is not a regular file")
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            raise CacheError(f"the cache key {path} belongs to another user (uid {st.st_uid})")
        if st.st_mode & 0o077:
            raise CacheError(f"the cache key {path} may be read or written by others (mode "
                             f"{stat.S_IMODE(st.st_mode):o}): chmod 600 it, or remove it and "
                             f"clear the cache")
        text = os.read(fd, 200)
    finally:
        os.close(fd)
    m = _KEY_TEXT.fullmatch(text)
    if m is None:
        if len(text) < 64 and _KEY_TEXT.fullmatch(text + b"0" * (64 - len(text))):
            raise _PartialKey(path)
        raise CacheError(f"the cache key {path} is not a gunpy cache key (64 hex digits)")
    return bytes.fromhex(m.group(1).decode())


def _create_key(path):
    """Write a new secret to ``path`` unless one is there; the first process to finish wins.

    The secret is written whole to a temporary file, then hard-linked to ``path``:
    the link fails if another process linked its own first, and then both read the
    one that is there. Where hard links are not supported, ``path`` is created with
    ``O_EXCL`` and a reader that finds it half-written waits (:class:`_PartialKey`).
    """
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    text = os.urandom(32).hex().encode() + b"\n"
    tmp = f"{path}.tmp.{uuid.uuid4().hex[:12]}"
    _write_new(tmp, text)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:  # no hard links on this file system
        try:
            _write_new(path, text)
        except FileExistsError:
            pass
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _write_new(path, data):
    """Create ``path`` (owner-only; ``FileExistsError`` if it is there) holding ``data``,
    synced to disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def secret():
    """This user's secret key (bytes), made on first use; raises :class:`CacheError`."""
    path = key_file()
    found = _secrets.get(path)
    if found is not None:
        return found
    with _key_lock:
        for _ in range(100):
            try:
                found = _read_key(path)
            except _PartialKey:
                time.sleep(0.02)
                continue
            if found is not None:
                _secrets[path] = found
                return found
            try:
                _create_key(path)
            except OSError as exc:
                raise CacheError(f"cannot create the cache key {path}: {exc.strerror or exc} "
                                 f"(GUNPY_CACHE_KEY_FILE names another place)") from None
        raise CacheError(f"the cache key {path} stays incomplete")



# ----------------------------------------------------------------------------- entries
# An entry file: MAGIC, the MAC (32 bytes), the key's length (4 bytes, big-endian), the key
# (UTF-8), then the pickled payload. The MAC is HMAC-SHA256 under the secret of everything
# but itself, so the key an entry answers is authenticated with its bytes: an entry moved
# under another key's name fails like a flipped bit does.
_MAGIC = b"GUNPYKC1"
_MAC = 32
_HEAD = len(_MAGIC) + _MAC + 4


def _mac(key_secret, key_bytes, body):
    h = hmac.new(key_secret, digestmod=hashlib.sha256)
    h.update(_MAGIC)
    h.update(len(key_bytes).to_bytes(4, "big"))
    h.update(key_bytes)
    h.update(body)
    return h.digest()


def pack_entry(key_secret, key, body):
    """An entry's bytes: ``body`` (the pickled payload) under ``key``, signed with ``key_secret``."""
    kb = key.encode() if isinstance(key, str) else bytes(key)
    return b"".join((_MAGIC, _mac(key_secret, kb, body), len(kb).to_bytes(4, "big"), kb, body))


def entry_key(data):
    """``(key bytes, body)`` of an entry's bytes, unauthenticated; None if it is not one."""
    if len(data) < _HEAD or data[:len(_MAGIC)] != _MAGIC:
        return None
    n = int.from_bytes(data[len(_MAGIC) + _MAC:_HEAD], "big")
    if n > len(data) - _HEAD:
        return None
    view = memoryview(data)
    return bytes(view[_HEAD:_HEAD + n]), view[_HEAD + n:]


def verify_entry(key_secret, data, key=None):
    """The body (a memoryview, still pickled) of an entry whose MAC checks under
    ``key_secret`` and whose key is ``key`` (any key when None); None otherwise."""
    parsed = entry_key(data)
    if parsed is None:
        return None
    kb, body = parsed
    if key is not None and kb != key.encode():
        return None
    mac = bytes(memoryview(data)[len(_MAGIC):len(_MAGIC) + _MAC])
    if not hmac.compare_digest(mac, _mac(key_secret, kb, body)):
        return None
    return body


def entry_name(key):
    """The file name of the entry for ``key``."""
    kb = key.encode() if isinstance(key, str) else bytes(key)
    return hashlib.sha256(kb).hexdigest()[:32] + _SUFFIX


def write_entry(path, data):
    """Write ``data`` to ``path`` through a temporary file and a rename (readers see all or none)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp.{uuid.uuid4().hex[:12]}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
