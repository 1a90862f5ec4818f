"""Towns in shipping questions: "Do you deliver to Brighton?" against delivery zones written by postcode area,
"Do you ship to Hobart?" against a line about Tasmania, "Do you ship to Toronto?" against "We do not ship to
Canada". The gazetteer (`ask_engine.towns`, GeoNames data) on its own, then three small shops in three countries,
indexed with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ask_engine.engine import Engine
from ask_engine.towns import home_country, near_named_city, postcode_areas_listed, town_named, towns_in
from tests.shop_helpers import ask_plain, inline_engine

# ------------------------------------------------------------------------------------------ the gazetteer


def test_a_town_is_read_with_its_region_and_postcode_area() -> None:
    town = town_named("Do you deliver to Brighton?", ["GB"])
    assert town is not None and (town.country, town.region, town.postcode_areas) == ("GB", "England", ("BN",))
    hobart = town_named("How long does shipping to Hobart take?")
    assert hobart is not None and (hobart.country, hobart.region) == ("AU", "Tasmania")
    montreal = town_named("Do you ship to Montreal?")
    assert montreal is not None and (montreal.name, montreal.country, montreal.region) == ("Montreal", "CA", "Quebec")


def test_a_shared_name_is_read_in_the_countries_preferred() -> None:
    perth_au = town_named("Do you ship to Perth?", ["AU"])
    perth_gb = town_named("Do you ship to Perth?", ["GB"])
    assert perth_au is not None and perth_au.region == "Western Australia"
    assert perth_gb is not None and (perth_gb.region, perth_gb.postcode_areas) == ("Scotland", ("PH",))
    # the countries a shop's shipping lines name are named in no order that means anything: the most populous
    london = town_named("how much is postage to london", ["AU"], ["US", "CA", "GB"])
    assert london is not None and london.country == "GB"


def test_what_is_not_a_destination_town() -> None:
    assert town_named("Do you deliver to mobile homes?") is None  # "Mobile" is a city, written with a capital
    assert town_named("Is it in Stock?", ["GB"]) is None
    assert town_named("Do you deliver to reading glasses wearers?") is None
    # a small namesake abroad is not read for a shop at home: "Camden" in a UK shop is London's
    assert town_named("Do you deliver to Camden?", ["GB"]) is None
    lyon = town_named("Do you ship to Lyon?", ["US"])
    assert lyon is not None and lyon.country == "FR"  # a city abroad is


def test_a_city_a_line_names_near_the_town() -> None:
    line = "Zone 1: Sydney metro, the Blue Mountains, the Central Coast, Newcastle and Wollongong"
    parramatta = town_named("Do you deliver to Parramatta?", ["AU"])
    wagga = town_named("Do you deliver to Wagga Wagga?", ["AU"])
    assert parramatta is not None and wagga is not None
    assert near_named_city(parramatta, line) == "sydney"  # the nearest of those named
    assert near_named_city(wagga, line) is None  # 400 km away
    assert towns_in(line, "AU") >= {"sydney", "newcastle", "wollongong"}


def test_postcode_areas_are_read_only_from_a_list_of_them() -> None:
    assert postcode_areas_listed("Zone 2: BN, BR, CR, KT: £6.95") == {"BN", "BR", "CR", "KT"}
    assert postcode_areas_listed("Highlands (IV, HS, KW, PA20-PA49)") == {"IV", "HS", "KW", "PA"}
    assert postcode_areas_listed("W 160 x L 215 cm") == frozenset()
    assert postcode_areas_listed("Sizes S, M and L") == frozenset()
    # an area with a note in brackets is still listed (a blind furniture shop's surcharge table)
    assert postcode_areas_listed("Postcodes: IV (except islands below), KW1–KW14, PH17–PH26") == {"IV", "KW", "PH"}


def test_sending_goods_to_a_place_is_a_shipping_question() -> None:
    from ask_engine.language import parse_query

    assert parse_query("Can you send the Grevillea to Perth?").shipping_place
    assert parse_query("Can I send a jar of the plum jam to my sister in London?").shipping_place
    assert not parse_query("Can I send the boots back to you?").shipping  # a return
    assert not parse_query("Can I send my old jacket to you for repair?").shipping


def test_home_country_of_a_currency() -> None:
    assert (home_country("gbp"), home_country("AUD")) == ("GB", "AU")
    assert home_country("EUR") is None and home_country(None) is None  # the euro is many countries' currency


# ------------------------------------------------------------------------------------------ through Engine.ask

_PRODUCTS = (
    '{"products":[{"id":1,"title":"Oak Side Table","handle":"oak-side-table","body_html":"<p>Solid oak side '
    'table.</p>","product_type":"Table","variants":[{"id":11,"title":"Default Title","price":"149.00"}]}]}'
)
UK = {
    "shop.toml": '[shop]\nname = "Harbour Home"\nurl = "https://harbour.example"\ncurrency = "GBP"\n',
    "products.json": _PRODUCTS,
    "policies/delivery.md": "---\ntype: shipping_policy\ntitle: Delivery\n---\n# Delivery\n\n"
    "We deliver to mainland UK addresses only.\n\n## Delivery zones\n\n"
    "- Zone 1: London postcodes (E, EC, N, NW, SE, SW, W, WC): £4.95, next working day.\n"
    "- Zone 2: BN, BR, CR, KT, RH, SM, TN: £6.95, 2-3 working days.\n"
    "- Zone 3: all other English and Welsh postcodes: £9.95, 3-5 working days.\n"
    "- Scottish Highlands and Islands (IV, HS, KW, ZE, PH): £24.95, 5-7 working days.\n\n"
    "We do not deliver to Northern Ireland, the Channel Islands or the Isle of Man.\n",
}
AU_TABLE = {
    "shop.toml": '[shop]\nname = "Wattle Row"\nurl = "https://wattle.example"\ncurrency = "AUD"\n',
    "products.json": '{"products":[{"id":1,"title":"Native Potting Mix 25 L","handle":"potting-mix","body_html":'
    '"<p>Potting mix for natives.</p>","product_type":"Potting mix","variants":[{"id":11,"title":"Default Title",'
    '"price":"24.00"}]}]}',
    "policies/shipping.md": "---\ntype: shipping_policy\ntitle: Shipping\n---\n# Shipping\n\n"
    "| Zone | Areas | Delivery time | Cost |\n|---|---|---|---|\n"
    "| Zone 1 | Sydney metro, the Blue Mountains and Wollongong | 1-3 business days | $14.95 |\n"
    "| Zone 2 | Regional NSW and the ACT | 2-4 business days | $19.95 |\n"
    "| Zone 3 | Victoria, and South-East Queensland (Brisbane, Toowoomba and the Gold Coast) | 2-5 business days "
    "| $22.95 |\n"
    "| Zone 4 | South Australia and the rest of Queensland | 4-7 business days | $27.95 |\n\n"
    "- Potting mix is delivered within NSW and the ACT only.\n",
}
AU = {
    "shop.toml": '[shop]\nname = "Gum Tree Goods"\nurl = "https://gumtree.example"\ncurrency = "AUD"\n',
    "products.json": _PRODUCTS,
    "policies/shipping.md": "---\ntype: shipping_policy\ntitle: Shipping\n---\n# Shipping\n\n"
    "We ship Australia-wide with Australia Post.\n\n"
    "- Regional New South Wales, Victoria and Queensland: 4-7 business days, $12.95.\n"
    "- Western Australia and the Northern Territory: 6-10 business days, $14.95.\n"
    "- Tasmania: 5-8 business days, $14.95.\n\nOrders over $120 ship free.\n\n"
    "Fresh flowers can't be sent to Tasmania or Western Australia.\n",
}
# a long delivery policy whose surcharge table retrieval alone ranks below its general lines for "Inverness"
UK_LONG = {
    "shop.toml": '[shop]\nname = "Fenwick Rooms"\nurl = "https://fenwick.example"\ncurrency = "GBP"\n',
    "products.json": _PRODUCTS,
    "policies/delivery.md": "---\ntype: shipping_policy\ntitle: Delivery Information\n---\n# Delivery Information\n\n"
    "We deliver to addresses in the United Kingdom only.\n\n## Parcel delivery\n\n"
    "Smaller items are sent with DPD for £4.95, free over £75, in 2–4 working days.\n\n"
    "## Two-person delivery\n\nLarge items come on our own two-person service for £49 per order, in 5–10 working "
    "days. We'll call you to book a delivery day. Deliveries run Monday to Friday.\n\n"
    "## Highlands, islands and Northern Ireland\n\nSome postcodes cost more to reach.\n\n"
    "| Area | Postcodes | Two-person surcharge | Extra time |\n|---|---|---|---|\n"
    "| Scottish Highlands | IV (except islands below), KW1–KW14, PH17–PH26 | £40 | 2–3 working days |\n"
    "| Northern Ireland | BT | £65 | up to 2 weeks |\n\n"
    "## Where we don't deliver\n\nWe can't deliver outside the UK, to the Channel Islands or the Isle of Man.\n",
}
# the rates table names the zone; the postcodes it covers are listed under a heading naming it (a wine merchant's
# blind probe shop wrote its policy so)
UK_LISTED = {
    "shop.toml": '[shop]\nname = "Orchard Seats"\nurl = "https://orchard.example"\ncurrency = "GBP"\n',
    "products.json": _PRODUCTS,
    "policies/delivery.md": "---\ntype: shipping_policy\ntitle: Delivery\n---\n# Delivery\n\n"
    "## Delivery zones and rates\n\n| Zone | Delivery time | Cost |\n|---|---|---|\n"
    "| England and Wales | 3-5 working days | £19.00 |\n"
    "| Scottish Highlands & Islands | 5-8 working days | £45.00 |\n"
    "| Northern Ireland | 5-8 working days | £55.00 |\n\n"
    "## Which postcodes count as Highlands & Islands?\n\n"
    "AB31–AB38, FK17–FK21, HS, IV, KW, PA20–PA49, PH17–PH26 and ZE.\n",
}
# international regions listed with the Americas first (a baby-clothes shop's blind probe wrote its policy so)
AU_WORLD = {
    "shop.toml": '[shop]\nname = "Saltbush Kids"\nurl = "https://saltbush.example"\ncurrency = "AUD"\n',
    "products.json": _PRODUCTS,
    "policies/shipping.md": "---\ntype: shipping_policy\ntitle: Shipping\n---\n# Shipping\n\n"
    "We ship Australia-wide for $9.95.\n\n## International\n\n"
    "| Region | Cost (AUD) | Delivery time |\n|---|---|---|\n"
    "| USA & Canada | $34.95 | 7–14 business days |\n"
    "| UK & Europe | $39.95 | 7–15 business days |\n\n"
    "Import duties and taxes are the customer's responsibility.\n",
}
# a list of products that cannot go to some states, under a lead-in naming them (a pet shop's blind probe wrote its
# policy so)
US_LISTED = {
    "shop.toml": '[shop]\nname = "Porch & Pine"\nurl = "https://porch.example"\ncurrency = "USD"\n',
    "products.json": '{"products":[{"id":1,"title":"Cedar Garden Bench","handle":"cedar-bench","body_html":'
    '"<p>A slatted cedar bench.</p>","product_type":"Garden bench","options":[{"name":"Size","values":["M","XL"]}],'
    '"variants":[{"id":11,"title":"M","option1":"M","price":"249.00"},{"id":12,"title":"XL","option1":"XL",'
    '"price":"329.00"}]}]}',
    "policies/shipping.md": "---\ntype: shipping_policy\ntitle: Shipping policy\n---\n# Shipping policy\n\n"
    "## Items with shipping restrictions\n\nA few items only travel by freight within the lower 48 states. These "
    "items cannot ship to Alaska, Hawaii or Puerto Rico:\n\n- Cedar Garden Bench, sizes L and XL\n"
    "- Gallon-size liquids\n\n## Alaska and Hawaii\n\nOrders to Alaska and Hawaii ship by USPS Priority Mail and "
    "arrive in 4-9 business days.\n",
}
US = {
    "shop.toml": '[shop]\nname = "Prairie Supply"\nurl = "https://prairie.example"\ncurrency = "USD"\n',
    "products.json": _PRODUCTS,
    "policies/shipping.md": "---\ntype: shipping_policy\ntitle: Shipping policy\n---\n# Shipping policy\n\n"
    "Standard shipping to the contiguous 48 states is free on orders over $75 and takes 3-5 business days.\n\n"
    "Orders to Alaska and Hawaii ship by USPS Priority Mail for a flat $19 and take 5-9 business days.\n\n"
    "We do not ship to Canada at this time.\n",
}


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[dict[str, Engine]]:
    made = {
        name: inline_engine(tmp_path_factory.mktemp(name) / "shop", files, embedder)
        for name, files in (
            ("uk", UK),
            ("au", AU),
            ("au_table", AU_TABLE),
            ("us", US),
            ("uk_long", UK_LONG),
            ("uk_listed", UK_LISTED),
            ("au_world", AU_WORLD),
            ("us_listed", US_LISTED),
        )
    }
    yield {name: next(gen) for name, gen in made.items()}
    for gen in made.values():
        next(gen, None)


@pytest.mark.parametrize(
    ("shop", "question", "wanted", "unwanted"),
    [
        # the zone listing the town's postcode area, and not the rest of England's
        ("uk", "Do you deliver to Brighton?", ["BN postcode area", "Zone 2", "£6.95"], ["Zone 3", "couldn't find"]),
        ("uk", "How long does delivery to Croydon take?", ["Zone 2", "2-3 working days"], ["Zone 3"]),
        # a town whose area no zone lists: its nation's ("all other English … postcodes")
        ("uk", "How much is delivery to Manchester?", ["in England", "Zone 3", "£9.95"], ["Zone 2", "Highlands"]),
        ("uk", "Do you ship to Cardiff?", ["in Wales", "Zone 3"], ["Zone 2"]),
        ("uk", "Can you deliver to Inverness?", ["IV postcode area", "£24.95"], ["Zone 3"]),
        ("uk", "Do you deliver to Belfast?", ["Northern Ireland", "do not deliver"], ["Zone"]),
        # the policy's line listing the town's postcode area is found though retrieval ranks it low
        ("uk_long", "Can you deliver to Inverness?", ["IV postcode area", "£40"], []),
        # ... or listed under a heading naming a zone of the rates table: that zone's rate
        ("uk_listed", "How much is delivery to Inverness?", ["IV postcode area", "£45.00"], ["£19.00", "£55.00"]),
        ("au_world", "how much is postage to london", ["United Kingdom", "$39.95"], ["United States", "$34.95"]),
        # the product's own line in a list whose lead-in names the state, before the state's general line
        (
            "us_listed",
            "im in anchorage alaska, can you ship me the XL cedar garden bench?",
            ["cannot ship to Alaska", "Cedar Garden Bench, sizes L and XL"],
            ["4-9 business days"],
        ),
        ("au", "Do you ship to Hobart?", ["in Tasmania", "5-8 business days"], ["Queensland", "couldn't find"]),
        # with its rate, the restriction naming the town's state, however far its words are from the question's
        (
            "au",
            "How long does shipping to Perth take?",
            ["Western Australia", "6-10 business days", "can't be sent"],
            [],
        ),
        ("au", "How much is shipping to Darwin?", ["the Northern Territory", "$14.95"], ["Tasmania:"]),
        ("au", "Do you deliver to Brisbane?", ["in Queensland", "$12.95"], ["Tasmania:"]),
        # a state by its code ("Regional NSW"), a part of a state naming other towns after its whole, a line
        # naming only other states left out, and the product's own rule before the zone
        ("au_table", "How much is delivery to Wagga Wagga?", ["New South Wales", "$19.95"], ["$22.95", "$14.95"]),
        # a town near a city a zone names is in that city's zone, not in "regional" New South Wales
        ("au_table", "Do you deliver to Parramatta?", ["near Sydney", "$14.95"], ["$19.95"]),
        ("au_table", "What's the delivery charge to Townsville?", ["Zone 4", "$27.95"], ["$22.95", "$19.95"]),
        ("au_table", "How much is delivery to Brisbane?", ["Zone 3", "$22.95"], ["$27.95"]),
        # "send <goods> to <town>" is a shipping question
        ("au", "Can you send a canvas tote to Hobart?", ["in Tasmania", "5-8 business days"], ["couldn't find"]),
        ("us", "Do you ship to Anchorage?", ["in Alaska", "$19"], ["couldn't find"]),
        # a foreign city: its country's rule
        ("us", "Do you ship to Toronto?", ["in Canada", "do not ship to Canada"], ["48 states"]),
        # a home town the policy does not name is not "not listed" ("the contiguous 48 states")
        ("us", "Do you ship to Denver?", [], ["not listed"]),
    ],
)
def test_a_town_gets_its_zone(
    engines: dict[str, Engine], shop: str, question: str, wanted: list[str], unwanted: list[str]
) -> None:
    answer = ask_plain(engines[shop], question)
    for text in wanted:
        assert text in answer, (question, answer)
    for text in unwanted:
        assert text not in answer, (question, answer)


def test_the_product_in_views_own_rule_comes_before_the_zone(engines: dict[str, Engine]) -> None:
    answer = ask_plain(engines["au_table"], "Can you deliver a bag of potting mix to Geelong?", "gid://shop/Product/1")
    assert "Geelong is in Victoria" in answer and "NSW and the ACT only" in answer, answer
    assert "$22.95" not in answer, answer


def test_the_data_file_is_in_the_package() -> None:
    from ask_engine import towns

    assert towns.TOWNS_FILE.parent == Path(towns.__file__).with_name("lexicon")
    # towns of 5,000 people everywhere (63,000 names): about 2.2 MB, kept under 2.5 MB
    assert towns.TOWNS_FILE.stat().st_size < 2_500_000
