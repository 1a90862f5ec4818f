"""Delivery cost to a named town, from two more blind probe shops: the policy says which zone covers the town in one
line and what each zone costs in a rates table elsewhere, which retrieval ranks below the lines naming the place. A
small shop (its own wording, zones and currency: Canada) indexed with the real embedding model, asked through `Engine.ask`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.engine import Engine
from tests.shop_helpers import ask_plain, inline_engine

SHIPPING = """---
type: shipping_policy
title: Delivery
---
# Delivery

We post from our studio in Ottawa and deliver across Canada.

## Where each zone reaches

Zone A includes Ottawa, Gatineau, Kingston and Cornwall.
Zone B includes Toronto, Montreal, Quebec City, Winnipeg and Halifax.
Rural includes every rural delivery address, Nunavut, Yukon and the Northwest Territories.

## Returns of parcels

Parcels that cannot be delivered come back to our studio and we will contact you.

## Rates

| Zone | Cost | Free from | Time |
|------|------|-----------|------|
| Zone A | CA$6 | CA$80 | 1-2 working days |
| Zone B | CA$9 | CA$120 | 2-3 working days |
| Rural | CA$14 | never | 3-6 working days |

## Overseas

We send small parcels to the United States for CA$25, arriving in 6-10 working days. We do not post anywhere else.

## Southern deliveries

Parcels to Nova Scotia carry a CA$3 surcharge on top of the zone rate.

## Packaging

Everything is wrapped in recycled tissue and posted in a compostable mailer.
"""
FILES = {
    "shop.toml": '[shop]\nname = "Tui Paper Co"\nurl = "https://tuipaper.example"\ncurrency = "CAD"\n'
    'gid_namespace = "tui"\n',
    "products.json": '{"products":[{"id":1,"title":"Kowhai Linen Notebook","handle":"kowhai","body_html":'
    '"<p>A5 notebook, 160 pages of 100 gsm paper.</p>","product_type":"Notebook","variants":[{"id":11,'
    '"title":"Default Title","price":"32.00"}]}]}',
    "policies/shipping.md": SHIPPING,
    "faq.yaml": "- question: Can I collect from the studio?\n  answer: Yes, collection is free on weekday afternoons.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("tui") / "shop", FILES, embedder)


def test_the_cost_to_a_town_is_its_zones_row_of_the_rates_table(engine: Engine) -> None:
    answer = ask_plain(engine, "how much does it cost to send a notebook to Halifax?")
    assert "Halifax" in answer  # the line saying which zone covers it
    assert "CA$9" in answer  # Zone B's row
    assert "CA$6" not in answer and "CA$14" not in answer  # not the other zones' rows
    assert "CA$3 surcharge" in answer  # the charge Halifax's region adds


def test_a_town_in_another_zone_gets_that_zones_row(engine: Engine) -> None:
    answer = ask_plain(engine, "what's postage to kingston?")
    assert "Kingston" in answer
    assert "CA$6" in answer
    assert "CA$9" not in answer and "CA$3" not in answer  # Kingston is not in Nova Scotia


def test_a_question_about_delivery_time_alone_gets_no_rates_row_added(engine: Engine) -> None:
    answer = ask_plain(engine, "do you deliver to Halifax?")
    assert "Halifax" in answer
    assert "CA$6" not in answer and "CA$14" not in answer
