"""Reading a shop's files: text, YAML front matter and JSON fields, with errors that name the file and the field or line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from ask_engine.errors import SourceError
from ask_engine.types import ShopInfo


class _Reader:
    """Field access on one JSON object with errors that name the file and the field path."""

    def __init__(self, file: str, where: str, data: Any) -> None:
        if not isinstance(data, dict):
            raise SourceError(file, where, f"expected an object, got {type(data).__name__}")
        self.file, self.where, self.data = file, where, data

    def path(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def first(self, *names: str) -> tuple[str, Any]:
        """The first of `names` present with a non-null value: (name, value)."""
        for name in names:
            if self.data.get(name) is not None:
                return name, self.data[name]
        return names[0], None

    def text(self, *names: str, required: bool = False) -> str | None:
        name, value = self.first(*names)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                raise SourceError(self.file, self.path(name), "required")
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise SourceError(self.file, self.path(name), f"expected text, got {type(value).__name__}")
        return str(value).strip()

    def items(self, *names: str) -> tuple[str, list[Any]]:
        """A list, a GraphQL connection (`nodes` / `edges[].node`), or nothing."""
        name, value = self.first(*names)
        path = self.path(name)
        if value is None:
            return path, []
        if isinstance(value, dict):
            if isinstance(value.get("nodes"), list):
                return path + ".nodes", value["nodes"]
            if isinstance(value.get("edges"), list):
                return path + ".edges", [e.get("node") if isinstance(e, dict) else e for e in value["edges"]]
        if not isinstance(value, list):
            raise SourceError(self.file, path, f"expected a list, got {type(value).__name__}")
        return path, value


class _Meta(dict[str, Any]):
    """Front matter fields, plus the file line each top-level field is on (for error messages)."""

    lines: dict[str, int]

    def at(self, name: str) -> str:
        line = self.lines.get(name)
        return f" (line {line})" if line else ""


def _front_matter(file: str, text: str) -> tuple[_Meta, str]:
    """YAML front matter between `---` lines at the very top, and the body after it."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    meta = _Meta()
    meta.lines = {}
    if not lines or lines[0].strip() != "---":
        return meta, text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        raise SourceError(file, "front matter", "no closing '---' line")
    try:
        data = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"front matter: line {mark.line + 2}" if mark is not None else "front matter"
        raise SourceError(file, where, str(getattr(exc, "problem", None) or exc)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SourceError(file, "front matter", "must be a mapping of field: value")
    meta.update(data)
    for number, line in enumerate(lines[1:end], start=2):
        match = re.match(r"^([^\s#:][^:]*?)\s*:", line)
        if match:
            meta.lines.setdefault(match.group(1).strip("'\""), number)
    return meta, "".join(lines[end + 1 :])


def _fm_text(file: str, meta: _Meta, name: str) -> str | None:
    value = meta.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float) or not str(value).strip():
        raise SourceError(file, f"front matter: {name}", "must be a non-empty string" + meta.at(name))
    return str(value).strip()


def _absolute_url(file: str, where: str, url: str, shop: ShopInfo) -> str:
    if url.startswith("/"):
        return shop.url + url
    if re.match(r"^https?://", url):
        return url
    raise SourceError(file, where, f"must be an absolute http(s) URL or a path starting with '/', got {url!r}")


def _url_path(url: str) -> str:
    return urlsplit(url).path or "/"


def _string_list(file: str, where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise SourceError(file, where, "expected a list of strings")
    return tuple(str(v).strip() for v in value if str(v).strip())


def _read_text(root: Path, path: Path) -> str:
    file = path.relative_to(root).as_posix()
    try:
        return path.read_text("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(file, f"byte {exc.start}", "not UTF-8 text") from None
    except OSError as exc:
        raise SourceError(file, "", f"unreadable ({exc.strerror})") from None
