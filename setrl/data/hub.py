"""Where dataset rows come from: a local file, a `save_to_disk` directory, a downloaded hub snapshot,
or the Hugging Face hub itself, always read through `datasets`.

The study machines usually have no route to the hub, so a failed hub read raises `DatasetUnavailable`
naming the dataset and the commands that make a local copy `pipeline.yaml` can point at.
"""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path
from urllib.parse import urlparse
from typing import TypeVar

T = TypeVar("T")
REPO_ROOT = Path(__file__).resolve().parents[2]

_FILE_BUILDERS = {".jsonl": "json", ".json": "json", ".gz": "json", ".parquet": "parquet"}


class DatasetUnavailable(RuntimeError):
    """A dataset could be read neither from a local copy nor from the hub."""


def local_copy_hint(hub_id: str, files: str | None = None) -> str:
    """How to make and use a local copy of `hub_id` (kept in one place so every error says the same)."""
    local = f"data/{hub_id.split('/')[-1]}"
    include = f" --include '{files}'" if files else ""
    return (f"on a machine with internet run `hf download {hub_id} --repo-type dataset{include} "
            f"--local-dir {local}`, copy {local} here and set `path: {local}` for this source in pipeline.yaml")


def read_rows(path: str, split: str, hub_files: str | None = None) -> list[dict]:
    """Rows of one split as plain dicts.

    `path` (relative paths also from the repo root) is a .jsonl/.json(.gz)/.parquet file, a directory written by `Dataset.save_to_disk`, a
    directory of data files (e.g. an `hf download` snapshot: files are assigned to
    splits by name, `*train*` / `*test*`), or a hub id. `hub_files` is a glob of data files inside the
    hub repo, for repos whose loading script `datasets` no longer runs (LiveCodeBench).
    """
    import datasets

    local = _local(path)
    if local.is_file():
        builder = _FILE_BUILDERS.get(local.suffix)
        if builder is None:
            raise ValueError(f"{path}: unsupported file type (use .jsonl, .json, .jsonl.gz or .parquet)")
        # Files given directly are one split: `datasets` names it "train" whatever the file holds.
        ds = datasets.load_dataset(builder, data_files=str(local), split="train")
    elif local.is_dir():
        if (local / "dataset_info.json").exists() or (local / "dataset_dict.json").exists():
            ds = datasets.load_from_disk(str(local))
            if isinstance(ds, datasets.DatasetDict):
                ds = _pick_split(ds, split, path)
        elif hub_files and list(local.glob(hub_files)):
            ds = datasets.load_dataset("json", data_files=sorted(str(f) for f in local.glob(hub_files)), split="train")
        else:
            ds = _pick_split(datasets.load_dataset(str(local)), split, path)
    elif path.startswith(("/", ".", "~")) or path.endswith(tuple(_FILE_BUILDERS)):
        raise FileNotFoundError(f"{path}: no such file or directory")
    else:
        ds = _from_hub(path, split, hub_files)
    return ds.to_list()


def _local(path: str) -> Path:
    """`path` as given, or relative to the repo root (pipeline.yaml says data/... wherever the
    command runs)."""
    given = Path(path).expanduser()
    if given.exists() or given.is_absolute():
        return given
    from_root = REPO_ROOT / given
    return from_root if from_root.exists() else given


def _pick_split(dd, split: str, path: str):
    if split not in dd:
        raise ValueError(f"{path}: no split '{split}'; available: {', '.join(dd)}")
    return dd[split]


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """Whether the hub can be tried at all. Without this check an offline machine spends ~25 s in
    `datasets`' retries before failing; behind a proxy the client is left to decide."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True
    url = urlparse(constants.ENDPOINT)
    try:
        socket.create_connection((url.hostname, url.port or 443), timeout=timeout_s).close()
        return True
    except OSError:
        return False


def _from_hub(hub_id: str, split: str, hub_files: str | None):
    import datasets

    if not hub_reachable():
        raise DatasetUnavailable(f"cannot load dataset '{hub_id}' (split {split}): the Hugging Face hub is "
                                 f"unreachable from here (offline, or HF_HUB_OFFLINE is set).\n"
                                 f"To work offline, {local_copy_hint(hub_id, hub_files)}.")
    try:
        if hub_files:
            return datasets.load_dataset("json", data_files=f"hf://datasets/{hub_id}/{hub_files}", split="train")
        return datasets.load_dataset(hub_id, split=split)
    except Exception as e:  # offline, DNS, 404, gated...: all end in the same advice
        raise DatasetUnavailable(f"cannot load dataset '{hub_id}' (split {split}) from the Hugging Face hub: "
                                 f"{type(e).__name__}: {e}\nTo work offline, {local_copy_hint(hub_id, hub_files)}.") from e


def iso_date(value) -> str | None:
    """A release date as an ISO string: the json reader turns ISO-looking strings into timestamps,
    and Problem.meta must stay JSON."""
    if value is None or value == "":
        return None
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def subsample(items: list[T], limit: int | None, seed: int, key) -> list[T]:
    """At most `limit` items, chosen by a seeded hash of `key(item)` so the pick does not depend on
    row order or on which other rows exist; kept in their original order."""
    if limit is None or len(items) <= limit:
        return items
    rank = sorted(range(len(items)), key=lambda i: hashlib.sha256(f"{seed}:{key(items[i])}".encode()).hexdigest())
    chosen = set(rank[:limit])
    return [x for i, x in enumerate(items) if i in chosen]
