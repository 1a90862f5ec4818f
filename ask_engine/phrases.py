"""`phrase(name, **kwargs)`: the engine's fixed sentences, rendered from prompts/phrases.j2."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from ask_engine.errors import ConfigError

__all__ = ["PROMPTS_DIR", "phrase"]

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"


@lru_cache(maxsize=1)
def _phrases() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PROMPTS_DIR)),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
    )
    return env.get_template("phrases.j2").module


def phrase(name: str, **kwargs: str) -> str:
    """Render the fixed phrase `name` from prompts/phrases.j2 (one or more sentences, first letter capitalised)."""
    module = _phrases()
    macro = getattr(module, name, None)
    if macro is None or name.startswith("_"):
        raise ConfigError(f"phrases.j2 has no phrase {name!r}")
    text = re.sub(r"\s+", " ", str(macro(**kwargs))).strip()
    return text[:1].upper() + text[1:]
