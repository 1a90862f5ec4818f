"""Index integrity: the size and blake2b of every file of an index version, recorded in its manifest and verified
when the version is opened (a damaged file is an error naming it, never a silent answer)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
FILES = "files"  # manifest key: relative path -> {"bytes": size, "blake2b": hex digest}
CHECKSUM = "checksum"  # manifest key: blake2b of the manifest's canonical JSON without this key
_DIGEST_BYTES = 32
_CHUNK = 1 << 20

__all__ = ["CHECKSUM", "FILES", "file_checksums", "file_digest", "integrity_problems", "manifest_checksum"]


def file_digest(path: Path) -> str:
    """blake2b of a file's bytes (hex)."""
    digest = hashlib.blake2b(digest_size=_DIGEST_BYTES)
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _version_files(folder: Path) -> list[str]:
    """Every file of a version folder but the manifest, as sorted relative POSIX paths."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.relative_to(folder) != Path(MANIFEST)
    )


def file_checksums(folder: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """What the manifest records of every other file of a version folder: its size and blake2b."""
    root = Path(folder)
    return {
        name: {"bytes": (root / name).stat().st_size, "blake2b": file_digest(root / name)}
        for name in _version_files(root)
    }


def manifest_checksum(manifest: dict[str, Any]) -> str:
    """blake2b of the manifest's canonical JSON, leaving out its own `checksum` key."""
    body = {k: v for k, v in manifest.items() if k != CHECKSUM}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=_DIGEST_BYTES).hexdigest()


def integrity_problems(
    folder: str | os.PathLike[str], manifest: dict[str, Any], names: Iterable[str] | None = None
) -> list[str]:
    """What does not match the checksums in `manifest` (all files, or only `names`); [] when everything does."""
    root = Path(folder)
    if manifest.get(CHECKSUM) != manifest_checksum(manifest):
        return [f"{MANIFEST} does not match its checksum"]
    recorded = manifest.get(FILES)
    if not isinstance(recorded, dict) or not recorded:
        return [f"{MANIFEST} records no file checksums"]
    problems: list[str] = []
    for name in sorted(recorded) if names is None else names:
        entry = recorded.get(name)
        path = root / name
        if not isinstance(entry, dict):
            problems.append(f"{name} has no recorded checksum")
        elif not path.is_file():
            problems.append(f"{name} is missing")
        elif path.stat().st_size != entry.get("bytes"):
            problems.append(f"{name} has {path.stat().st_size} bytes, {entry.get('bytes')} were written")
        elif file_digest(path) != entry.get("blake2b"):
            problems.append(f"{name} does not match its checksum")
    return problems
