"""markup: untrusted text made inert — plain text without tags, answer Markdown without raw HTML or unsafe links."""

from __future__ import annotations

import pytest

from ask_engine.markup import escape_markdown, inert_answer, markdown_is_safe, safe_url, strip_tags

HOSTILE_HTML = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    "<<b>script>alert(1)<</b>/script>",  # a tag that only appears once the inner one is removed
    "<textarea><b onmouseover=alert(1)>x</b></textarea>",  # markup that a raw-text element turns into text
    "<a href='javascript:alert(1)'>click</a>",
    "<iframe src=data:text/html,x></iframe>",
    "<!-- comment --><style>*{}</style>",
]


def has_tag(text: str) -> bool:
    """Whether a browser's HTML parser would find any markup in the text."""
    return strip_tags(text) != text


@pytest.mark.parametrize("text", HOSTILE_HTML)
def test_strip_tags_leaves_no_markup_a_browser_would_parse(text: str) -> None:
    clean = strip_tags(text)
    assert "<" not in clean or not has_tag(clean)
    assert "alert" not in clean and "onerror" not in clean and "onload" not in clean


def test_strip_tags_keeps_text_that_holds_no_markup() -> None:
    for text in ("Sizes 5 < 10 and UK > 4.", "Tom & Jerry", "&lt;not markup&gt; as written", "a\nb"):
        assert strip_tags(text) == text
    assert strip_tags("Warm <b>wool</b> hat.\nHand wash.") == "Warm wool hat.\nHand wash."


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("https://shop.example/p", True),
        ("/pages/returns#window", True),
        ("mailto:help@shop.example", True),
        ("javascript:alert(1)", False),
        ("JaVaScRiPt:alert(1)", False),
        ("java\tscript:alert(1)", False),
        ("&#106;avascript:alert(1)", False),
        ("%6A%61vascript:alert(1)", False),
        ("data:text/html;base64,PHNjcmlwdD4=", False),
        ("vbscript:msgbox(1)", False),
    ],
)
def test_only_web_mail_phone_and_relative_links_are_safe(url: str, safe: bool) -> None:
    assert safe_url(url) is safe


@pytest.mark.parametrize(
    "markdown",
    [
        "See [here](javascript:alert(1)).",
        "See [here](JAVA&#83;CRIPT:alert(1)).",
        "![pic](data:image/png;base64,iVBOR)",
        "[x][r]\n\n[r]: javascript:alert(1)",
        "Hello <b onclick=alert(1)>there</b>",
        "<div>block</div>",
    ],
)
def test_markdown_with_raw_html_or_an_unsafe_link_is_unsafe(markdown: str) -> None:
    assert not markdown_is_safe(markdown)


def test_markdown_the_generators_write_is_safe_and_kept() -> None:
    parts = [("The Tarn Boot is red.", "The **Tarn Boot** is red."), ("See the guide.", "See [the guide](/pages/g).")]
    plain, markdown = inert_answer(parts)
    assert plain == "The Tarn Boot is red. See the guide."
    assert markdown == "The **Tarn Boot** is red. See [the guide](/pages/g)."


@pytest.mark.parametrize(
    "quoted",
    [
        "Great hat [click here](javascript:alert(document.cookie)).",
        "Great hat ![x](data:text/html,<script>alert(1)</script>).",
        "Great hat <img src=x onerror=alert(1)>.",
        "Great hat <script>alert(1)</script>.",
        "Great hat <a href=javascript:alert(1)>deal</a>.",
    ],
)
def test_a_quoted_sentence_reaches_the_answer_inert(quoted: str) -> None:
    plain, markdown = inert_answer([("The hat is wool.", "The **hat** is wool."), (quoted, quoted)])
    assert not has_tag(plain) and not has_tag(markdown)
    assert markdown_is_safe(markdown)
    assert "Great hat" in plain and "Great hat" in markdown
    assert markdown.startswith("The **hat** is wool.")


def test_escaped_markdown_renders_as_the_text_itself() -> None:
    from markdown_it import MarkdownIt

    text = "A *b* [c](javascript:x) <i>d</i> `e` & f"
    rendered = MarkdownIt("commonmark").renderInline(escape_markdown(text))
    assert rendered == "A *b* [c](javascript:x) &lt;i&gt;d&lt;/i&gt; `e` &amp; f"
