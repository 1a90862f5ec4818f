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


def _availability(reader: _Reader) -> bool | None:
    for name in ("available", "availableForSale", "available_for_sale"):
        value = reader.data.get(name)
        if isinstance(value, bool):
            return value
    tracked = reader.data.get("inventory_management", ...)
    item = reader.data.get("inventoryItem")
    if tracked is None or (isinstance(item, dict) and item.get("tracked") is False):
        return True  # inventory not tracked: Shopify always sells it
    _, qty = reader.first("inventory_quantity", "inventoryQuantity")
    if qty is None:
        return None
    number = _decimal(qty)
    if number is None:
        raise SourceError(reader.file, reader.path("inventory_quantity"), f"not a number: {qty!r}")
    _, policy = reader.first("inventory_policy", "inventoryPolicy")
    return number > 0 or str(policy or "").lower() == "continue"


def _backorder(reader: _Reader) -> bool:
    """None in stock, and sold anyway: a tracked quantity of zero or less under the inventory policy "continue"."""
    item = reader.data.get("inventoryItem")
    if reader.data.get("inventory_management", ...) is None or (
        isinstance(item, dict) and item.get("tracked") is False
    ):
        return False
    _, qty = reader.first("inventory_quantity", "inventoryQuantity")
    _, policy = reader.first("inventory_policy", "inventoryPolicy")
    number = _decimal(qty) if qty is not None else None
    return number is not None and number <= 0 and str(policy or "").lower() == "continue"


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
