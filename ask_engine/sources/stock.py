"""A variant's stock as a Shopify export records it: whether it can be bought, whether it is sold with none in stock
(the inventory policy "continue"), and the product's availability summary fact."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ask_engine.errors import SourceError
from ask_engine.sources.files import _Reader
from ask_engine.sources.values import _decimal, _join_and
from ask_engine.types import BACKORDER_WORDS, Fact


class _Stocked(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def available(self) -> bool | None: ...
    @property
    def backorder(self) -> bool: ...


def _stock(reader: _Reader) -> tuple[bool | None, bool]:
    """(available, backorder) of a JSON variant. Available: as stated (`available`, `availableForSale`); else always
    when its inventory is not tracked; else when its tracked quantity is above 0 or its inventory policy is
    "continue"; None when no quantity is recorded. Backorder: none in stock, and sold anyway (a tracked quantity of
    zero or less under the policy "continue", or the Storefront API's `currentlyNotInStock`), whatever the stated
    availability."""
    stated = next(
        (
            v
            for name in ("available", "availableForSale", "available_for_sale")
            if isinstance(v := reader.data.get(name), bool)
        ),
        None,
    )
    item = reader.data.get("inventoryItem")
    untracked = reader.data.get("inventory_management", ...) is None or (
        isinstance(item, dict) and item.get("tracked") is False
    )
    _, qty = reader.first("inventory_quantity", "inventoryQuantity")
    _, policy = reader.first("inventory_policy", "inventoryPolicy")
    continues = str(policy or "").lower() == "continue"
    number = _decimal(qty) if qty is not None and not untracked else None
    # the Storefront API says it outright: `currentlyNotInStock` is "out of stock but still for sale"
    backorder = (number is not None and number <= 0 and continues) or reader.data.get("currentlyNotInStock") is True
    if stated is not None:
        return stated, backorder
    if untracked:
        return True, False  # inventory not tracked: Shopify always sells it
    if qty is None:
        return None, False
    if number is None:
        raise SourceError(reader.file, reader.path("inventory_quantity"), f"not a number: {qty!r}")
    return number > 0 or continues, backorder


def _availability_fact(variants: Sequence[_Stocked]) -> Fact | None:
    known = [v for v in variants if v.available is not None]
    if not known:
        return None
    sold_out = [v.title for v in known if not v.available]
    ordered = [v.title for v in known if v.available and v.backorder]  # none in stock, still sold
    if not sold_out and not ordered:
        value = "in stock"
    elif len(sold_out) == len(known):
        value = "sold out"
    elif len(ordered) + len(sold_out) == len(known):
        value = BACKORDER_WORDS if not sold_out else f"{BACKORDER_WORDS}, except {_names(sold_out)} (sold out)"
    else:
        parts = [f"{_names(sold_out)} (sold out)"] if sold_out else []
        parts += [f"{_names(ordered)} ({BACKORDER_WORDS})"] if ordered else []
        value = f"in stock, except {' and '.join(parts)}"
    return Fact("availability", "Availability", value, "field")


def _names(titles: Sequence[str]) -> str:
    return _join_and(list(titles)) if len(titles) <= 20 else f"{len(titles)} variants"
