"""What crosses a process boundary: length-prefixed JSON frames and the plain-data value codec.

Standard library only: this file is bind-mounted into the sandboxes and imported there by
`inside_runner.py` and `inside_judge.py`, as well as by the trusted parent.

Plain data is the only form in which a candidate's return value reaches a test. `decode` is the
security boundary: whatever bytes an untrusted process sends, it builds nothing but exact builtin
scalars and containers of them (None, bool, int, float, complex, str, bytes, list, tuple, dict,
set, frozenset), plus instances of classes the *trusted* prelude defined (ListNode, TreeNode),
rebuilt from that trusted class without running any code from the sender. So an object whose
`__eq__` always says True can never reach an `assert`.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

HEADER = struct.Struct(">I")
MAX_FRAME = 256 * 1024 * 1024  # a frame longer than this is treated as a broken peer
_TAGS = ("t", "d", "s", "f", "b", "c", "o", "ref")


class NotPlainData(TypeError):
    """A value that is not plain data (or a frame that does not decode to plain data)."""


class PeerClosed(EOFError):
    """The other end of a channel closed (it exited, crashed or was killed)."""


# ---------------------------------------------------------------- framing

def send_frame(sock: socket.socket, obj: Any, fds: tuple[int, ...] = ()) -> None:
    """Send one JSON frame; `fds` travel with its header as SCM_RIGHTS."""
    data = json.dumps(obj, separators=(",", ":")).encode()
    header = HEADER.pack(len(data))
    if fds:
        socket.send_fds(sock, [header], list(fds))
        sock.sendall(data)
    else:
        sock.sendall(header + data)


def _recv_exact(sock: socket.socket, n: int, chunks: list[bytes]) -> bytes:
    got = sum(len(c) for c in chunks)
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise PeerClosed("channel closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket, max_fds: int = 0, limit: int = MAX_FRAME) -> tuple[Any, list[int]]:
    """Receive one frame: (decoded JSON, received fds). Raises PeerClosed on EOF."""
    fds: list[int] = []
    if max_fds:
        first, fds, _flags, _addr = socket.recv_fds(sock, HEADER.size, max_fds)
        if not first:
            raise PeerClosed("channel closed")
        header = _recv_exact(sock, HEADER.size, [first])
    else:
        header = _recv_exact(sock, HEADER.size, [])
    (n,) = HEADER.unpack(header)
    if n > limit:
        raise NotPlainData(f"frame of {n} bytes exceeds the {limit} byte limit")
    return json.loads(_recv_exact(sock, n, [])), fds


# ---------------------------------------------------------------- plain-data codec

def to_tree(value: Any, classes: dict[str, type] | None = None) -> Any:
    """Plain data -> JSON-able tree. Exact types only: subclasses of builtins are refused."""
    by_type = {cls: name for name, cls in (classes or {}).items()}
    memo: dict[int, int] = {}

    def enc(v: Any) -> Any:
        t = type(v)
        if v is None or t is bool or t is str or t is int or t is float:
            return v
        if t is list:
            return [enc(x) for x in v]
        if t is tuple:
            return {"t": [enc(x) for x in v]}
        if t is dict:
            return {"d": [[enc(k), enc(x)] for k, x in v.items()]}
        if t is set or t is frozenset:
            return {"s" if t is set else "f": [enc(x) for x in v]}
        if t is bytes:
            return {"b": v.hex()}
        if t is complex:
            return {"c": [v.real, v.imag]}
        if t in by_type:
            if id(v) in memo:  # shared or cyclic nodes (a linked list with a cycle)
                return {"ref": memo[id(v)]}
            memo[id(v)] = len(memo)
            attrs = vars(v) if hasattr(v, "__dict__") else {s: getattr(v, s) for s in t.__slots__ if hasattr(v, s)}
            return {"o": by_type[t], "id": memo[id(v)], "a": {k: enc(x) for k, x in attrs.items()}}
        raise NotPlainData(f"{t.__module__}.{t.__qualname__} is not plain data")

    try:
        return enc(value)
    except RecursionError:
        raise NotPlainData("value nested too deeply") from None


def from_tree(tree: Any, classes: dict[str, type] | None = None) -> Any:
    """JSON tree from an untrusted sender -> plain data. Never calls code the sender chose."""
    classes = classes or {}
    built: dict[int, Any] = {}

    def dec(x: Any) -> Any:
        t = type(x)
        if x is None or t is bool or t is str or t is int or t is float:
            return x
        if t is list:
            return [dec(i) for i in x]
        if t is not dict or not (len(x) == 1 and set(x) <= set(_TAGS) or set(x) == {"o", "id", "a"}):
            raise NotPlainData(f"malformed value node {str(x)[:80]}")
        if "t" in x:
            return tuple(dec(i) for i in _list(x["t"]))
        if "d" in x:
            return {_hashable(dec(_pair(p)[0])): dec(_pair(p)[1]) for p in _list(x["d"])}
        if "s" in x:
            return {_hashable(dec(i)) for i in _list(x["s"])}
        if "f" in x:
            return frozenset(_hashable(dec(i)) for i in _list(x["f"]))
        if "b" in x:
            return bytes.fromhex(_str(x["b"]))
        if "c" in x:
            re, im = _pair(x["c"])
            if type(re) not in (int, float) or type(im) not in (int, float):
                raise NotPlainData("malformed complex")
            return complex(re, im)
        if "ref" in x:
            if x["ref"] not in built:
                raise NotPlainData("dangling object reference")
            return built[x["ref"]]
        return dec_object(x)

    def dec_object(x: dict) -> Any:
        cls = classes.get(x.get("o"))  # type: ignore[arg-type]
        if cls is None or type(x.get("a")) is not dict or type(x.get("id")) is not int:
            raise NotPlainData(f"object of unknown class {str(x.get('o'))[:40]!r}")
        obj = object.__new__(cls)  # trusted prelude class; its __init__ is not needed
        built[x["id"]] = obj
        for name, v in x["a"].items():
            if not name.isidentifier() or name.startswith("__"):
                raise NotPlainData(f"bad attribute name {name[:40]!r}")
            object.__setattr__(obj, name, dec(v))
        return obj

    try:
        return dec(tree)
    except RecursionError:
        raise NotPlainData("value nested too deeply") from None
    except (ValueError, TypeError) as e:
        raise NotPlainData(f"malformed value: {e}") from None


def _list(x: Any) -> list:
    if type(x) is not list:
        raise NotPlainData("malformed container")
    return x


def _pair(x: Any) -> list:
    if type(x) is not list or len(x) != 2:
        raise NotPlainData("malformed pair")
    return x


def _str(x: Any) -> str:
    if type(x) is not str:
        raise NotPlainData("malformed bytes")
    return x


def _hashable(x: Any) -> Any:
    try:
        hash(x)
    except TypeError:
        raise NotPlainData("unhashable key") from None
    return x
