"""What a question asks, apart from what it says of the asker: "how thick are the walls? Winters get cold here" asks
for a thickness, not for warmth; "are the bellows real leather? I'm vegan" asks what they are made of."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

_PARTS = re.compile(r"[^.?!]+[.?!]*")


def asked_only(
    lower: str,
    found: list[tuple[int, str]],
    patterns: Mapping[str, re.Pattern[str]],
    starts: Sequence[re.Pattern[str]],
    figure: re.Pattern[str],
) -> list[tuple[int, str]]:
    """The attributes (`found`: where each is first named, and its name) that the question parts of `lower` ask: a
    part ending in "?" or opening as a question does (`starts`: "what …", "is it …"). Where those parts ask an
    attribute themselves (its cue in `patterns`), or a kind of figure (`figure`: "how thick"), an attribute that only
    a statement beside them names is the asker's situation, no second question; otherwise (a statement and "is this ok
    for me?") the statement says what is asked, and every attribute found stands."""
    parts = [m for m in _PARTS.finditer(lower) if m.group(0).strip()]
    spans = [
        m.span() for m in parts if m.group(0).rstrip().endswith("?") or any(s.match(m.group(0).strip()) for s in starts)
    ]
    if not spans or len(spans) == len(parts):
        return found
    inside = [
        (at, name)
        for at, name in found
        if any(a <= m.start() < b for m in patterns[name].finditer(lower) if m.group(0) for a, b in spans)
    ]
    asks = inside or any(figure.search(lower[a:b]) for a, b in spans)
    return inside if asks else found
