"""Merchant HTML and Markdown → lines of plain text and section headings (a line per paragraph, list item, table row).

The text that comes out holds no markup: every line passes `ask_engine.markup.strip_tags`, so markup the merchant
entity-escaped is removed too, never decoded into text to quote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ask_engine.language import text_cue
from ask_engine.markup import strip_tags

_SENTENCE_END = (".", "!", "?", ":", ";", "…", "。", "！", "？")


@dataclass
class _Block:
    """One line of text, or a heading that starts a section."""

    text: str
    level: int = 0  # 0: a line of text; 1-6: a heading
    anchor: str = ""  # explicit anchor (`id` attribute or `{#id}`)


_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_BLOCK_TAGS = {
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog", "div", "dl",
    "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "hr", "html", "li", "main", "nav",
    "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
}  # fmt: skip
_BLOCKISH = sorted(_BLOCK_TAGS | _HEADINGS)
_SKIP_TAGS = {
    "audio", "button", "canvas", "embed", "head", "iframe", "img", "input", "noscript", "object", "picture",
    "script", "select", "style", "svg", "template", "textarea", "video",
}  # fmt: skip
_EXPLICIT_ANCHOR = re.compile(r"\s*\{#([^\s}]+)[^}]*\}\s*$")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _sentence(line: str, end: str = ".") -> str:
    """A line as a sentence: list items, table rows and headings often lack a full stop. With `end` ":", a heading
    as the lead-in of the lines under it ("Materials" -> "Materials:"); a line ending in its own punctuation ("Why
    wool?", "Care:") is kept either way."""
    stripped = line.rstrip("\"'”’)]*_ ")
    return line if stripped.endswith(_SENTENCE_END) else line + end


class _HtmlText:
    """Walks parsed HTML into lines (one per paragraph, list item or table row) and section headings."""

    def __init__(self, split_level: int) -> None:
        self.split_level = split_level
        self.blocks: list[_Block] = []
        self._buffer: list[str] = []
        self._pre = 0

    def flush(self) -> None:
        text = "".join(self._buffer)
        self._buffer = []
        for raw in text.split("\n"):
            line = _collapse(raw)
            if line:
                self.blocks.append(_Block(_sentence(line)))

    def walk(self, node: Any) -> None:
        from bs4 import Comment, Declaration, Doctype, NavigableString, ProcessingInstruction, Tag

        for child in node.children:
            if isinstance(child, Comment | Declaration | Doctype | ProcessingInstruction):
                continue
            if isinstance(child, NavigableString):
                self._buffer.append(str(child) if self._pre else str(child).replace("\n", " "))
                continue
            if not isinstance(child, Tag) or child.name in _SKIP_TAGS:
                continue
            name = child.name
            if name == "br":
                self._buffer.append("\n")
            elif name in _HEADINGS:
                self.flush()
                self._heading(child)
            elif name == "p" and _bold_label(child):
                # "<p><strong>What's in the box</strong></p>" before a list: a heading in all but its tag, the
                # lead-in of the lines under it, as an inner heading is
                self.flush()
                self.blocks.append(_Block(_sentence(_collapse(child.get_text(" ")), ":")))
            elif name == "p" and (lead := _run_in_lead(child)) is not None:
                # "<p><strong>Footwear.</strong> Try boots on indoors …</p>": a run-in heading, leading the
                # paragraph's first sentence as a label ("Footwear: Try boots …"), not a sentence of its own
                self.flush()
                self.blocks.append(_Block(_sentence(f"{lead[0].rstrip('.: ')}: {lead[1]}")))
            elif name == "table":
                self.flush()
                self._table(child)
            elif name in _BLOCK_TAGS or child.find(_BLOCKISH) is not None:
                self.flush()
                self._pre += name == "pre"
                self.walk(child)
                self._pre -= name == "pre"
                self.flush()
            else:
                self.walk(child)  # inline: links, emphasis, code keep flowing into the current line

    def _heading(self, tag: Any) -> None:
        text = _collapse(tag.get_text())
        anchor = str(tag.get("id") or "")
        match = _EXPLICIT_ANCHOR.search(text)
        if match:
            anchor, text = match.group(1), text[: match.start()].rstrip()
        if not anchor:
            named = tag.find("a", attrs={"id": True}) or tag.find("a", attrs={"name": True})
            if named is not None:
                anchor = str(named.get("id") or named.get("name") or "")
        if not text:
            return
        level = int(tag.name[1])
        if level <= self.split_level:
            self.blocks.append(_Block(text, level, anchor))
        else:
            # a heading inside a section (a product description's "Materials", "Care") leads what follows it, as a
            # "Materials:" line does; a full stop would make it a sentence of its own, or an item of the list before
            self.blocks.append(_Block(_sentence(text, ":")))

    def _table(self, table: Any) -> None:
        rows = [
            [_collapse(cell.get_text(" ")) for cell in tr.find_all(["td", "th"], recursive=False)]
            for tr in table.find_all("tr")
        ]
        first = table.find("tr")
        has_header = first is not None and (
            first.find_parent("thead") is not None
            or all(cell.name == "th" for cell in first.find_all(["td", "th"], recursive=False))
            or (len(rows) > 1 and _bold_row(first))
        )
        caption = table.find("caption")
        if caption is not None and _collapse(caption.get_text()):
            self.blocks.append(_Block(_sentence(_collapse(caption.get_text()))))
        header = rows.pop(0) if has_header and rows else []
        # a spec table headed "Spec | <the product>" ("Specification | Value") labels its rows as one without a header
        spec = len(header) == 2 and bool(_SPEC_HEADER.fullmatch(header[0])) and _short_labels(rows)
        header = [] if spec else header
        # a table with its labels down the first column ("<th>Fibre</th><td>100% wool</td>", or two columns of
        # short labels and their values, as editors paste spec tables): each row is "Label: value"
        labelled = spec or (not header and _labels_first(table, rows))
        for cells in rows:
            if not any(cells):
                continue
            if header and len(header) == len(cells):
                parts = [f"{h}: {v}" if h else v for h, v in zip(header, cells, strict=True) if v]
                line = ", ".join(parts)
            elif labelled and len(cells) >= 2 and cells[0] and any(cells[1:]):
                line = f"{cells[0].rstrip(': ')}: {', '.join(c for c in cells[1:] if c)}"
            else:
                line = " | ".join(c for c in cells if c)
            self.blocks.append(_Block(_sentence(line)))
        if header and not rows:
            self.blocks.append(_Block(_sentence(" | ".join(h for h in header if h))))


# a first column of labels: this many words at most in each
_LABEL_WORDS = 5


def _labels_first(table: Any, rows: list[list[str]]) -> bool:
    """A table without a header row whose first column labels its rows: every row's first cell a <th>, or, in a
    two-column table, every first cell a short label (at most `_LABEL_WORDS` words, not a bare figure)."""
    trs = [tr for tr in table.find_all("tr") if tr.find_all(["td", "th"], recursive=False)]
    if len(trs) < 2 or len(trs) != len(rows):
        return False
    if all(tr.find_all(["td", "th"], recursive=False)[0].name == "th" for tr in trs) and all(
        any(c.name == "td" for c in tr.find_all(["td", "th"], recursive=False)) for tr in trs
    ):
        return True
    return _short_labels(rows)


_SPEC_HEADER = text_cue("spec_header", re.IGNORECASE)  # a header cell over a column of attribute names ("Spec")
_BRACKETED = re.compile(r"\([^)]*\)|\[[^\]]*\]")


def _short_labels(rows: list[list[str]]) -> bool:
    """Two columns, every first cell a short label: at most `_LABEL_WORDS` words, a bracketed aside not counted
    ("Dimensions (L x W x H)"), and not a bare figure."""
    return bool(rows) and all(
        len(cells) == 2
        and 0 < len(_BRACKETED.sub(" ", cells[0]).split()) <= _LABEL_WORDS
        and not re.fullmatch(r"[\d\s.,/–-]+", cells[0])
        for cells in rows
    )


# a paragraph of bold text alone is a heading when it is this short
_BOLD_LABEL_WORDS = 8
_RULE_WORDS = text_cue("rule_words", re.IGNORECASE)  # words of a sentence saying who may do what


def _bold_label(p: Any) -> bool:
    """A short paragraph that is wholly bold, ends without a sentence's punctuation, and is followed by a list or a
    paragraph: a heading written as bold text, as editors do."""
    text = _collapse(p.get_text(" "))
    bold = " ".join(_collapse(b.get_text(" ")) for b in p.find_all(["strong", "b"]))
    following = p.find_next_sibling()
    return (
        bool(text)
        and bold == text
        and len(text.split()) <= _BOLD_LABEL_WORDS
        and not text.rstrip("\"'”’)] ").endswith((".", "!", "?", ":"))
        and following is not None
        and following.name in {"ul", "ol", "p", "table"}
    )


def _run_in_lead(p: Any) -> tuple[str, str] | None:
    """(the lead, the rest) of a paragraph opening with a short bold phrase that ends in a full stop or a colon and
    goes on after it ("**Saddles.** Saddles can be returned within 14 days …"); None for any other paragraph."""
    from bs4 import NavigableString

    first = next((c for c in p.children if not (isinstance(c, NavigableString) and not c.strip())), None)
    if first is None or getattr(first, "name", None) not in {"strong", "b"} or p.find(["br", "ul", "ol"]):
        return None
    lead, text = _collapse(first.get_text()), _collapse(p.get_text())
    rest = text[len(lead) :].strip() if text.startswith(lead) else ""
    if not rest or not lead.endswith((".", ":")) or len(lead.split()) > _BOLD_LABEL_WORDS:
        return None
    # a bold sentence ("**Fins and traction are not included.** Boards …") is no heading: only a colon's lead may say
    # who may do what
    return None if lead.endswith(".") and _RULE_WORDS.search(lead) else (lead, rest)


def _bold_row(tr: Any) -> bool:
    """A first row whose every cell is wholly bold ("<td><strong>Size</strong></td>…"): the header of a table written
    without <thead> or <th>, as editors paste them."""
    cells = tr.find_all(["td", "th"], recursive=False)
    if len(cells) < 2:
        return False
    for cell in cells:
        text = _collapse(cell.get_text(" "))
        bold = " ".join(_collapse(b.get_text(" ")) for b in cell.find_all(["strong", "b"]))
        if not text or bold != text:
            return False
    return True


def _html_blocks(html: str, split_level: int = 4) -> list[_Block]:
    from bs4 import BeautifulSoup

    walker = _HtmlText(split_level)
    walker.walk(BeautifulSoup(html, "html.parser"))
    walker.flush()
    # The parser decodes entities: "&lt;script&gt;" in the source is now "<script>" in the text. Markup the
    # merchant escaped is still markup, never text to quote.
    blocks: list[_Block] = []
    for block in walker.blocks:
        text = _collapse(strip_tags(block.text, decode=True))
        if text != block.text and not any(ch.isalnum() for ch in text):
            continue  # the line was only markup ("<script>…</script>.")
        block.text = text
        blocks.append(block)
    return blocks


_SHORT_LINE = 60  # addresses, opening hours, "Phone: ..." lines; hard-wrapped prose runs longer
# a line led by a short label and a colon ("Sunday: Closed (open the 4th Sunday …)"), as hard-wrapped prose's are not
_LABELLED_LINE = re.compile(r"[^:.!?]{1,30}:\s")


def _markdown_html(text: str) -> str:
    """Markdown → HTML. A paragraph of short lines, or of lines each led by a label and a colon, keeps its line breaks
    (an address, a contact block, opening hours), while hard-wrapped prose is joined as CommonMark says."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    tokens = md.parse(text)
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        lines = [line.strip() for line in token.content.splitlines() if line.strip()]
        if len(lines) > 1 and all(len(line) <= _SHORT_LINE or _LABELLED_LINE.match(line) for line in lines):
            for child in token.children:
                if child.type == "softbreak":
                    child.type = "hardbreak"
    return md.renderer.render(tokens, md.options, {})


def _blocks(text: str, markdown: bool, split_level: int = 4) -> list[_Block]:
    return _html_blocks(_markdown_html(text) if markdown else text, split_level)


def html_to_text(html: str) -> str:
    """Plain text of an HTML fragment: one line per paragraph, list item, heading or table row."""
    return "\n".join(b.text for b in _html_blocks(html, split_level=0))


def markdown_to_text(text: str) -> str:
    """Plain text of Markdown (or HTML inside Markdown), laid out like `html_to_text`."""
    return html_to_text(_markdown_html(text))


def _text_lines(text: str) -> list[str]:
    return [_sentence(_collapse(line)) for line in strip_tags(text, decode=True).splitlines() if line.strip()]
