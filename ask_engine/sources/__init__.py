"""Shop sources (Shopify products JSON/CSV, Markdown/HTML pages and policies with front matter, FAQ) → Documents.

A shop folder holds `shop.toml` plus any of: `products.json`, `products/*.json`, `products.csv`, `products/*.csv`,
`policies/*.{md,html}`, `pages/*.{md,html}`, `faq.{json,yaml,yml,md}`, `faq/*.{json,yaml,yml,md}`. The full format
is described in `docs/shop-format.md`. Every problem raises `SourceError(file, where, problem)` with `file` relative to
the shop folder and `where` a field path (`products[3].title`, `front matter: type`) or a line/row number.

- `shop`: `shop.toml`, the folder's files in reading order, `ShopSource` and `load_documents`
- `products`: Shopify products JSON and CSV → product documents
- `pages`: policies, pages and FAQ entries → documents
- `files`: reading files, front matter and JSON fields with errors that name the place
- `markup`: merchant HTML/Markdown → plain lines and section headings
- `values`: money, metafield values and labels as shoppers read them
- `ids`: slugs, generated GIDs and alias keys (every id goes through `alias_key` before it is stored or looked up)
"""

from ask_engine.sources.ids import alias_key, alias_keys, shop_aliases, slugify
from ask_engine.sources.markup import html_to_text, markdown_to_text
from ask_engine.sources.pages import POLICY_TYPES
from ask_engine.sources.shop import ShopSource, load_documents, load_shop_info
from ask_engine.sources.values import format_money, humanise_label, humanise_value

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
    "shop_aliases",
    "slugify",
]
