"""Decoding LiveCodeBench's compressed private tests without letting the payload run code.

Upstream stores `private_test_cases` as base64(zlib(pickle(json_string))). Unpickling untrusted bytes
with `pickle.loads` can call any importable function (a `__reduce__` naming `os.system` is enough),
so the unpickler here refuses every global lookup: a payload can only build plain values, and
anything but a str/bytes at the top is rejected too.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import pickle
import zlib

# Legitimate payloads reach tens of MB; the cap stops a small blob from inflating without bound.
MAX_DECOMPRESSED_BYTES = 1 << 30


class UnsafePickleError(pickle.UnpicklingError):
    """The pickle tried to reference code or held something other than a plain string."""


class _PlainOnlyUnpickler(pickle.Unpickler):
    # GLOBAL, STACK_GLOBAL, INST, OBJ and the EXT* opcodes all resolve callables through find_class;
    # refusing here leaves REDUCE/BUILD nothing to call. Persistent ids already fail by default.
    def find_class(self, module: str, name: str):
        raise UnsafePickleError(f"pickle references {module}.{name}; only plain str/bytes payloads are accepted")


def loads_plain_string(data: bytes) -> str:
    """Unpickle `data` whose top-level value must be a str (or UTF-8 bytes); never imports anything."""
    value = _PlainOnlyUnpickler(io.BytesIO(data)).load()
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if not isinstance(value, str):
        raise UnsafePickleError(f"pickle holds a {type(value).__name__}; only a plain str/bytes payload is accepted")
    return value


def _inflate(blob: bytes) -> bytes:
    d = zlib.decompressobj()
    out = d.decompress(blob, MAX_DECOMPRESSED_BYTES)
    if d.unconsumed_tail:
        raise ValueError(f"compressed test cases inflate past {MAX_DECOMPRESSED_BYTES} bytes")
    return out + d.flush()


def decode_test_cases(field: str) -> list[dict]:
    """LiveCodeBench `public_test_cases` / `private_test_cases` -> list of {"input","output","testtype"}.

    Plain JSON (public tests, some private ones) is read as is; otherwise the field is
    base64(zlib(pickle(json string))).
    """
    if not field:
        return []
    stripped = field.lstrip()
    if stripped.startswith("["):
        return json.loads(stripped)
    try:
        blob = base64.b64decode(field, validate=True)
    except binascii.Error as e:
        raise ValueError(f"test cases are neither JSON nor base64: {e}") from None
    return json.loads(loads_plain_string(_inflate(blob)))
