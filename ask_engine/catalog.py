"""Compatibility alias: the shop sources moved to `ask_engine.sources` (import from there)."""

from ask_engine.sources import (
    POLICY_TYPES,
    ShopSource,
    alias_key,
    alias_keys,
    format_money,
    html_to_text,
    humanise_label,
    humanise_value,
    load_documents,
    load_shop_info,
    markdown_to_text,
    slugify,
)

__all__ = [
    "POLICY_TYPES",
    "ShopSource",
    "alias_key",
    "alias_keys",
    "format_money",
    "html_to_text",
    "humanise_label",
    "humanise_value",
    "load_documents",
    "load_shop_info",
    "markdown_to_text",
    "slugify",
]
