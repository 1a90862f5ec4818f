"""Untrusted text made inert: plain text without HTML tags, answer Markdown without raw HTML or unsafe links."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

# Elements whose content is code or hidden markup, never readable text: dropped with their content.
_DROP_WITH_CONTENT = frozenset(
    {
        "script",
        "style",
        "template",
        "iframe",
        "noscript",
        "noembed",
        "noframes",
        "xmp",
        "object",
        "embed",
        "svg",
        "math",
    }
)
# The only link schemes an answer may carry; a relative address ("/pages/returns", "#sizes") has none.
SAFE_SCHEMES = frozenset({"http", "https", "mailto", "tel"})
# Entity-escaped markup decodes into markup, which may itself hold escaped markup: each pass removes one layer.
_MAX_PASSES = 16
# The characters that open a CommonMark construct (emphasis, code, links, images, raw HTML, autolinks, entities,
# headings, block quotes, tables, strikethrough); escaped, each is just itself.
_MARKDOWN_SPECIAL = frozenset("\\`*_[]<>!&#|~")
_URL_END = re.compile(r"[/?#]")


def strip_tags(text: str, *, decode: bool = False) -> str:
    """The text with no HTML markup left in it, read as a browser's HTML parser reads it (Ammonia/html5ever).

    Tags and comments go; script, style and other code elements go with their content; markup that only appears
    once a tag is removed goes too. Text without a `<` holds no markup and is returned unchanged (entities in it
    stay as written: they render as text) unless `decode`: then the text is what an HTML parser already decoded
    once (catalog text), and markup escaped in it, however deeply (`&amp;lt;script&amp;gt;`), is still markup.
    """
    if "<" not in text and not (decode and "&" in text):
        return text
    import nh3

    for _ in range(_MAX_PASSES):
        # one pass: parse as HTML (decoding one level of entities), keep the text, serialise it escaped, unescape
        cleaned = html.unescape(nh3.clean(text, tags=set(), clean_content_tags=set(_DROP_WITH_CONTENT)))
        if cleaned == text or ("<" not in cleaned and not (decode and "&" in cleaned)):
            return cleaned
        text = cleaned
    # Still changing after every pass: nothing of it is trusted as markup-free but its text without the brackets.
    return text.replace("<", "")


def safe_url(url: str) -> bool:
    """True for a link target an answer may carry: http(s), mailto, tel, or a relative address.

    The scheme is read as a browser reads it: entities and percent-escapes decoded, control characters and white
    space (which browsers drop from a scheme) removed, case folded.
    """
    flat = "".join(ch for ch in unquote(html.unescape(url)) if ch > " " and ch != "\x7f")
    head = _URL_END.split(flat, maxsplit=1)[0]
    if ":" not in head:
        return True
    return head.split(":", 1)[0].casefold() in SAFE_SCHEMES


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    # See every link a renderer might make, including the ones markdown-it itself would refuse.
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return md


def _tokens(tokens: Iterable[Any]) -> Iterable[Any]:
    for token in tokens:
        yield token
        if token.children:
            yield from _tokens(token.children)


@lru_cache(maxsize=1 << 14)  # kept by text: answers quote the same merchant sentences again and again
def markdown_is_safe(markdown: str) -> bool:
    """True when the Markdown renders no raw HTML and no link or image whose target is not `safe_url`."""
    if not markdown.strip():
        return True
    for token in _tokens(_parser().parse(markdown)):
        if token.type in ("html_block", "html_inline"):
            return False
        if token.type == "link_open" and not safe_url(str(token.attrGet("href") or "")):
            return False
        if token.type == "image" and not safe_url(str(token.attrGet("src") or "")):
            return False
    return True


def readable_text(markdown: str) -> str:
    """What a reader sees of inline Markdown: link and image labels kept, every link target dropped
    ("see the [guide](javascript:x)" → "see the guide")."""
    blocks = _parser().parseInline(markdown)
    out: list[str] = []
    for token in _tokens(blocks[0].children or [] if blocks else []):
        if token.type in ("text", "code_inline"):
            out.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return " ".join("".join(out).split())


def escape_markdown(text: str) -> str:
    """Text escaped for Markdown: it renders as exactly itself, with no emphasis, link, image or HTML in it."""
    return "".join("\\" + ch if ch in _MARKDOWN_SPECIAL else ch for ch in text)


def inert_answer(parts: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """(plain, markdown) of an answer from its sentences' (text, markdown) pairs, whatever the sentences quote.

    Plain text carries no HTML tags. Markdown carries no raw HTML and no link or image to anything but
    `safe_url` targets: a sentence whose Markdown would is sent as its readable words only (link labels, no
    targets), escaped.
    """
    plains: list[str] = []
    markdowns: list[str] = []
    for text, markdown in parts:
        plain = strip_tags(text).strip()
        md = strip_tags(markdown).strip()
        if not plain:
            continue
        if md and not markdown_is_safe(md):
            # the sentence quotes link syntax to a script or data URL: the buyer gets its words, not its target
            plain = readable_text(md) or readable_text(plain)
            if not plain:
                continue
            md = escape_markdown(plain)
        plains.append(plain)
        markdowns.append(md or escape_markdown(plain))
    plain_answer = " ".join(plains)
    markdown_answer = " ".join(markdowns)
    if not markdown_is_safe(markdown_answer):
        # a construct spanning sentences (a reference definition at the start of the answer and a use of it later)
        markdown_answer = escape_markdown(plain_answer)
    return plain_answer, markdown_answer
