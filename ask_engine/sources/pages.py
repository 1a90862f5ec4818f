"""Policies and pages (Markdown/HTML with front matter) and FAQ entries (JSON, YAML or Markdown) → Documents."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from ask_engine.errors import SourceError
from ask_engine.sources.files import (
    _absolute_url,
    _fm_text,
    _front_matter,
    _read_text,
    _Reader,
    _string_list,
    _url_path,
)
from ask_engine.sources.ids import _dedupe, slugify
from ask_engine.sources.markup import _Block, _blocks, _sentence, markdown_to_text
from ask_engine.types import Disclosure, Document, Section, ShopInfo

POLICY_TYPES = ("refund_policy", "shipping_policy", "privacy_policy", "terms_of_service")


def _disclosures(file: str, where: str, value: Any) -> tuple[Disclosure, ...]:
    """`{code: text}` or `[{code, content, content_type?}]`."""
    if value is None:
        return ()
    found: list[Disclosure] = []
    if isinstance(value, dict):
        for code, content in value.items():
            if not isinstance(content, str) or not content.strip():
                raise SourceError(file, f"{where}.{code}", "must be the disclosure text")
            found.append(Disclosure(code=str(code), content=content.strip()))
        return tuple(found)
    if not isinstance(value, list):
        raise SourceError(file, where, "expected {code: text} or a list of {code, content}")
    for i, item in enumerate(value):
        path = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise SourceError(file, path, "expected {code, content}")
        for name in ("code", "content"):
            if not isinstance(item.get(name), str) or not item[name].strip():
                raise SourceError(file, f"{path}.{name}", "required")
        content_type = item.get("content_type", "markdown")
        if content_type not in ("plain", "markdown"):
            raise SourceError(file, f"{path}.content_type", "must be 'plain' or 'markdown'")
        found.append(Disclosure(code=item["code"].strip(), content=item["content"].strip(), content_type=content_type))
    return tuple(found)


def _sections(blocks: list[_Block], title: str | None, url: str) -> tuple[str | None, list[Section]]:
    """Group blocks into sections; a first H1 before any text is the page title. Returns (h1 title, sections)."""
    h1: str | None = None
    if blocks and blocks[0].level == 1:
        h1 = blocks.pop(0).text
    heading = title or h1 or ""
    current: tuple[str, str] = (heading, "")
    lines: list[str] = []
    sections: list[Section] = []
    used: set[str] = set()

    def close() -> None:
        text = "\n".join(lines)
        if text:
            name, anchor = current
            sections.append(Section(name, text, f"{url}#{anchor}" if anchor else url, anchor))

    for block in blocks:
        if block.level:
            close()
            lines = []
            anchor = block.anchor or slugify(block.text) or "section"
            base, n = anchor, 1
            while anchor in used and not block.anchor:
                anchor, n = f"{base}-{n}", n + 1
            used.add(anchor)
            current = (block.text, anchor)
        else:
            lines.append(block.text)
    close()
    return h1, sections


def _is_markdown(path: Path) -> bool:
    return path.suffix.lower() in (".md", ".markdown")


def _page_document(root: Path, path: Path, shop: ShopInfo, kind: str) -> Document:
    file = path.relative_to(root).as_posix()
    meta, body = _front_matter(file, _read_text(root, path))
    if kind == "policy":
        raw_type = _fm_text(file, meta, "type") or path.stem
        link_type = slugify(raw_type).replace("-", "_")
        if link_type not in POLICY_TYPES:
            problem = f"must be one of {', '.join(POLICY_TYPES)}"
            if "type" in meta:
                problem += f", got {meta['type']!r}{meta.at('type')}"
            else:
                problem += f" (required: the file name {path.name!r} names no policy type)"
            raise SourceError(file, "front matter: type", problem)
        slug = link_type.replace("_", "-")
        default_url = f"{shop.url}/policies/{slug}"
    else:
        link_type = slugify(_fm_text(file, meta, "type") or "page").replace("-", "_") or "page"
        slug = slugify(path.stem)
        if not slug:
            raise SourceError(file, "", "the file name gives no usable page slug")
        default_url = f"{shop.url}/pages/{slug}"
    url_text = _fm_text(file, meta, "url")
    url = _absolute_url(file, "front matter: url", url_text, shop) if url_text else default_url
    title = _fm_text(file, meta, "title")
    blocks = _blocks(body, markdown=_is_markdown(path))
    h1, sections = _sections(blocks, title, url)
    title = title or h1
    if not title:
        raise SourceError(file, "front matter: title", "required (or start the page with a first-level heading)")
    if not sections:
        raise SourceError(file, "body", "no text")
    text = "\n".join(f"{_sentence(s.heading)}\n{s.text}" if s.anchor else s.text for s in sections)
    return Document(
        id=f"{kind}:{link_type if kind == 'policy' else slug}",
        kind="policy" if kind == "policy" else "page",
        title=title,
        url=url,
        link_type=link_type,
        source=file,
        body=text,
        sections=tuple(sections),
        disclosures=_disclosures(file, "front matter: disclosures", meta.get("disclosures")),
        aliases=_dedupe([_url_path(url)]),
        tags=_string_list(file, "front matter: tags", meta.get("tags")),
    )


def _faq_documents(root: Path, path: Path, shop: ShopInfo) -> Iterator[Document]:
    file = path.relative_to(root).as_posix()
    text = _read_text(root, path)
    default_url = f"{shop.url}/pages/faq"
    if _is_markdown(path):
        yield from _faq_markdown(file, text, shop, default_url)
        return
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SourceError(file, f"line {exc.lineno}, column {exc.colno}", exc.msg) from None
    else:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}" if mark is not None else ""
            raise SourceError(file, where, str(getattr(exc, "problem", None) or exc)) from None
    prefix = ""
    page_url = default_url
    if isinstance(data, dict):
        if data.get("url") is not None:
            if not isinstance(data["url"], str):
                raise SourceError(file, "url", "must be a string")
            page_url = _absolute_url(file, "url", data["url"].strip(), shop)
        if "entries" not in data:
            raise SourceError(file, "entries", "required: a list of {question, answer}")
        prefix, data = "entries", data["entries"]
    if not isinstance(data, list):
        raise SourceError(file, prefix or "", "expected a list of {question, answer}")
    used: set[str] = set()
    for i, raw in enumerate(data):
        entry = _Reader(file, f"{prefix}[{i}]", raw)
        question = entry.text("question", required=True) or ""
        answer = entry.text("answer", required=True) or ""
        anchor = entry.text("anchor")
        entry_url = entry.text("url")
        url = _absolute_url(file, entry.path("url"), entry_url, shop) if entry_url else ""
        anchor = anchor or urlsplit(url).fragment or _unique(slugify(question) or f"question-{i + 1}", used)
        used.add(anchor)
        url = url or f"{page_url}#{anchor}"
        yield _faq_document(
            file,
            question,
            markdown_to_text(answer),
            url,
            anchor,
            _disclosures(file, entry.path("disclosures"), entry.data.get("disclosures")),
            _string_list(file, entry.path("tags"), entry.data.get("tags")),
        )


def _unique(anchor: str, used: set[str]) -> str:
    base, n = anchor, 1
    while anchor in used:
        anchor, n = f"{base}-{n}", n + 1
    return anchor


def _faq_markdown(file: str, text: str, shop: ShopInfo, default_url: str) -> Iterator[Document]:
    """Front matter (url, title, disclosures for every entry) + one `## Question` heading per entry."""
    meta, body = _front_matter(file, text)
    url_text = _fm_text(file, meta, "url")
    page_url = _absolute_url(file, "front matter: url", url_text, shop) if url_text else default_url
    disclosures = _disclosures(file, "front matter: disclosures", meta.get("disclosures"))
    tags = _string_list(file, "front matter: tags", meta.get("tags"))
    entries: list[tuple[_Block, list[str]]] = []
    for block in _blocks(body, markdown=True, split_level=2):
        if block.level == 2:
            entries.append((block, []))
        elif block.level == 1:
            continue  # the page title or a group heading: not a question
        elif entries:
            entries[-1][1].append(block.text)
    if not entries:
        raise SourceError(file, "body", "no '## Question' headings")
    used: set[str] = set()
    for heading, lines in entries:
        if not lines:
            raise SourceError(file, f"question {heading.text!r}", "has no answer")
        anchor = heading.anchor or _unique(slugify(heading.text) or "question", used)
        used.add(anchor)
        yield _faq_document(file, heading.text, "\n".join(lines), f"{page_url}#{anchor}", anchor, disclosures, tags)


def _faq_document(
    file: str,
    question: str,
    answer: str,
    url: str,
    anchor: str,
    disclosures: tuple[Disclosure, ...],
    tags: tuple[str, ...],
) -> Document:
    if not answer.strip():
        raise SourceError(file, f"question {question!r}", "has no answer")
    return Document(
        id=f"faq:{anchor}",
        kind="faq",
        title=question,
        url=url,
        link_type="faq",
        source=file,
        body=answer,
        sections=(Section(question, answer, url, anchor),),
        disclosures=disclosures,
        aliases=_dedupe([_url_path(url) + (f"#{urlsplit(url).fragment}" if urlsplit(url).fragment else "")]),
        tags=tags,
    )
