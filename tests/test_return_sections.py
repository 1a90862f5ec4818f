"""A refund policy written in sections by kind of goods ("Large furniture", "Rugs", "Small items"), each with its
window, who pays and what it costs: a returns question about some goods is answered from their section, its
sentence naming them and its sentence answering the rest of the question ("What does it cost to return a sofa?" →
the 14 days and the £59 collection fee), and a section about some of those goods only ("Made-to-order sofas")
is not the rule for the rest. A small shop indexed with the real embedding model, asked through `Engine.ask`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.engine import Engine
from tests.shop_helpers import ask_plain, inline_engine

SOFA, RUG = "gid://hl/Product/1", "gid://hl/Product/2"
_PRODUCTS = ",".join(
    f'{{"id":{pid},"title":"{title}","handle":"p{pid}","body_html":"<p>{body}</p>","product_type":"{kind}",'
    f'"variants":[{{"id":{pid}1,"title":"Default Title","price":"99.00"}}]}}'
    for pid, title, body, kind in (
        (1, "Harlow Sofa", "Three-seater sofa in linen.", "Sofa"),
        (2, "Wool Kilim Rug", "Handwoven wool rug, 160 x 230 cm.", "Rug"),
        (3, "Linen Cushion Cover", "Linen cushion cover, 45 x 45 cm.", "Cushion cover"),
    )
)
FILES = {
    "shop.toml": '[shop]\nname = "Hearth & Loom"\nurl = "https://hearth.example"\ncurrency = "GBP"\n'
    'gid_namespace = "hl"\n',
    "products.json": '{"products":[' + _PRODUCTS + "]}",
    "policies/refund.md": """---
type: refund_policy
title: Returns & refunds
---
# Returns & refunds

We want you to love your home. If something isn't right, you can return it.

## Small items

Cushions, throws, lamps and other small items can be returned within 14 days of delivery. Items must be unused and
in their original packaging. Return postage is paid by you unless the item is faulty.

## Large furniture

Sofas, beds, wardrobes and dining tables can be returned within 14 days of delivery. We arrange collection by our
two-person team, and a collection fee of £59 is deducted from your refund. Furniture must be in its original
condition.

## Rugs

Rugs can be returned within 30 days of delivery, rolled and wrapped. We send a prepaid returns label for rugs.

## Made-to-order items

Made-to-order sofas and curtains cannot be returned unless faulty.

## Refunds

Refunds are made to your original payment method within 10 working days of us receiving the item.
""",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("hearth") / "shop", FILES, embedder)


@pytest.mark.parametrize(
    ("question", "ids", "wanted", "unwanted"),
    [
        # the section's sentence naming the goods, then its sentence with the asked figure
        ("What does it cost to return a sofa?", [], ["14 days", "£59"], ["Made-to-order"]),
        ("Is there a fee to return a bed?", [], ["collection fee of £59"], []),
        # the rest of the question picks the section's other sentence
        ("Who pays return postage for a cushion cover?", [], ["Return postage is paid by you"], ["£59"]),
        # a heading naming the product's kind
        ("How long do I have to return a rug?", [], ["30 days"], ["14 days"]),
        ("What's the return window for this?", [RUG], ["30 days"], ["14 days"]),
        # "Made-to-order sofas" is not the rule for a sofa that is not made to order
        ("What is the return window for this?", [SOFA], [], ["Made-to-order"]),
        ("Can I return made to order curtains?", [], ["cannot be returned unless faulty"], []),
    ],
)
def test_a_returns_question_is_answered_from_its_goods_section(
    engine: Engine, question: str, ids: list[str], wanted: list[str], unwanted: list[str]
) -> None:
    answer = ask_plain(engine, question, *ids)
    for text in wanted:
        assert text in answer, (question, answer)
    for text in unwanted:
        assert text not in answer, (question, answer)
