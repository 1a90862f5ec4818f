"""Synthetic shop folders of any size for benchmarks: a deterministic, Shopify-shaped catalogue plus policies and FAQ.

Every product is generated from its own seeded random stream (`seed`, index), so product `i` is the same whatever the
catalogue size, products.json is written as a stream (100k products never sit in memory at once), and questions about
particular products can be made without reading the file back (`synthetic_questions`).
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ask_engine.bench.catalogue import _COUNTRIES, _DISCLOSURES, _NAMES, _SECOND, CATEGORIES, Category

_BASE_ID = 8_000_000  # product ids: 8000000 + index; variant ids: product id * 100 + position
_EPOCH = datetime(2023, 1, 9, 9, 0, tzinfo=UTC)


def _text(key: str, value: str) -> dict[str, Any]:
    return {"namespace": "specs", "key": key, "value": value, "type": "single_line_text_field"}


def _typed(key: str, value: Any, mtype: str) -> dict[str, Any]:
    raw = value if isinstance(value, str) else json.dumps(value)
    return {"namespace": "specs", "key": key, "value": raw, "type": mtype}


def _spec(name: str, rng: random.Random, cat: Category, noun: str) -> dict[str, Any]:
    """One extra spec metafield, in the metafield type a merchant would pick for it."""
    if name == "waterproof":
        return _typed("waterproof", "true", "boolean")
    if name == "waterproof_rating":
        return _text("waterproof_rating", f"{rng.choice((10, 15, 20, 28))},000 mm hydrostatic head")
    if name == "fabric_weight":
        return _typed("fabric_weight", rng.choice((150, 175, 200, 260)), "number_integer")
    if name == "inside_leg":
        return _text("inside_leg", f"Regular {rng.choice((30, 31, 32))} in; short and long lengths available")
    if name == "fit_note":
        return _text("fit", rng.choice(("True to size", "Runs half a size small", "Wide fit")))
    if name == "drop":
        return _typed("drop", {"value": rng.choice((4, 6, 8, 10)), "unit": "MILLIMETERS"}, "dimension")
    if name == "capacity":
        litres = rng.choice((12, 20, 28, 35, 45, 55, 65))
        return _typed("capacity", {"value": litres, "unit": "LITERS"}, "volume")
    if name == "berths":
        return _typed("berths", rng.choice((1, 2, 3, 4, 6)), "number_integer")
    if name == "hydrostatic_head":
        return _text("hydrostatic_head", f"Flysheet {rng.choice((3000, 4000, 5000, 6000))} mm")
    if name == "packed_weight":
        return _typed("packed_weight", {"value": round(rng.uniform(1.1, 9.8), 1), "unit": "KILOGRAMS"}, "weight")
    if name == "comfort_temperature":
        return _text("comfort_temperature", f"{rng.choice((-8, -5, -2, 0, 3, 5, 10))} °C")
    if name == "lumens":
        return _typed("max_output_lumens", rng.choice((200, 300, 400, 600, 900)), "number_integer")
    if name == "battery_life":
        return _text("battery_life", f"{rng.choice((4, 6, 8, 12))} h on high, {rng.choice((40, 60, 80))} h on low")
    if name == "blade_length":
        return _typed("blade_length", {"value": rng.choice((6.5, 7.5, 8.5, 10)), "unit": "CENTIMETERS"}, "dimension")
    if name == "induction":
        return _typed("induction_compatible", rng.choice(("true", "false")), "boolean")
    if name == "oven_safe":
        return _text("oven_safe", f"Up to {rng.choice((180, 220, 260))} °C")
    if name == "energy":
        return _text("energy", f"{rng.randint(180, 620)} kcal per serving")
    if name == "best_before":
        return _text("shelf_life", f"{rng.choice((6, 9, 12, 18))} months unopened")
    if name == "skincare_use":
        return _text("spf_or_use", "Broad-spectrum UVA/UVB protection" if "SPF" in noun else "Fragrance-free")
    if name == "battery_capacity":
        return _text("battery_capacity", f"{rng.choice((5000, 10000, 20000))} mAh")
    if name == "water_resistance":
        return _text("water_resistance", rng.choice(("IPX4", "IPX6", "IPX7")))
    if name == "age_range":
        return _text("age_range", f"{rng.choice((3, 5, 6, 8))}+ years")
    if name == "burn_time":
        return _text("burn_time", f"About {rng.choice((25, 35, 45, 60))} hours")
    if name == "pieces":
        return _typed("pieces", rng.choice((24, 54, 100, 250, 500)), "number_integer")
    raise ValueError(f"unknown spec maker {name!r} in category {cat.product_type!r}")


def _rng(seed: int, index: int) -> random.Random:
    # String seeds hash with SHA-512: stable across runs and Python versions, independent per product.
    return random.Random(f"synthetic-shop:{seed}:{index}")


def _title(rng: random.Random, cat: Category, noun: str) -> tuple[str, str]:
    """Title and the short line name (used in SKUs)."""
    line = rng.choice(_NAMES)
    second = rng.choice(_SECOND)
    number = rng.choice(("", "", "", str(rng.choice((2, 3, 5, 7, 12, 20, 28, 35, 40, 200)))))
    parts = [line, second, number, noun]
    title = " ".join(p for p in parts if p)
    if cat.gendered:
        title += rng.choice((" - Men's", " - Women's", " - Unisex"))
    return title, line


def _slug(text: str) -> str:
    out = []
    for ch in text.lower().replace("'", ""):
        out.append(ch if ch.isalnum() else "-")
    return "-".join(filter(None, "".join(out).split("-")))


def _description(rng: random.Random, cat: Category, noun: str, material: str, grams: int) -> str:
    use = rng.choice(cat.uses)
    features = rng.sample(cat.features, k=min(len(cat.features), rng.randint(2, 4)))
    openers = (
        f"A dependable {noun.lower()} made for {use}.",
        f"Built for {use}, this {noun.lower()} keeps things simple and does its job well.",
        f"Our best-selling {noun.lower()}, refined over three seasons of testing on {use}.",
        f"Designed with {use} in mind, it balances weight, comfort and durability.",
    )
    closers = (
        f"Made from {material} and weighs {grams} g.",
        f"The {material} construction weighs just {grams} g.",
        f"Weighs {grams} g; made from {material}.",
    )
    items = "".join(f"<li>{f[0].upper()}{f[1:]}</li>" for f in features)
    return f"<p>{rng.choice(openers)}</p><ul>{items}</ul><p>{rng.choice(closers)}</p>"


def synthetic_product(index: int, *, seed: int = 0) -> dict[str, Any]:
    """Product number `index` of the synthetic catalogue for `seed`, in Shopify's products.json shape."""
    rng = _rng(seed, index)
    cat = CATEGORIES[rng.randrange(len(CATEGORIES))]
    noun = rng.choice(cat.nouns)
    title, line = _title(rng, cat, noun)
    product_id = _BASE_ID + index
    created = _EPOCH + timedelta(hours=index % 20_000, minutes=rng.randrange(60))
    grams = rng.randint(*cat.grams)
    # Categories whose nouns differ in kind (a kite, a card game) list one material per noun.
    aligned = len(cat.materials) == len(cat.nouns)
    material = cat.materials[cat.nouns.index(noun)] if aligned else rng.choice(cat.materials)
    base = rng.randint(*cat.prices) - 0.01 if rng.random() < 0.6 else float(rng.randint(*cat.prices))
    on_sale = rng.random() < 0.12

    chosen: list[tuple[str, list[str]]] = []
    for name, values in cat.options:
        k = min(len(values), rng.randint(1, 4) if name in ("Colour", "Finish", "Length", "Zip") else rng.randint(3, 6))
        picked = sorted(rng.sample(range(len(values)), k))
        chosen.append((name, [values[i] for i in picked]))
    combos = list(itertools.product(*[vals for _, vals in chosen]))[:12] if chosen else [()]
    sku_stem = f"SY-{line[:4].upper()}-{index:06d}"
    variants = []
    for position, combo in enumerate(combos, start=1):
        # A bigger pan or tube costs more; sizes of clothing and shoes cost the same.
        step = chosen[0][1].index(combo[0]) if combo and len(chosen) == 1 and chosen[0][0] == "Size" else 0
        price = base * (1 + 0.2 * step)
        variant: dict[str, Any] = {
            "id": product_id * 100 + position,
            "product_id": product_id,
            "title": " / ".join(combo) if combo else "Default Title",
            "sku": sku_stem + ("-" + "-".join(_slug(v).upper()[:4] for v in combo) if combo else ""),
            "price": f"{price:.2f}",
            "compare_at_price": f"{price * 1.25:.2f}" if on_sale else None,
            "available": rng.random() > 0.15,
            "option1": combo[0] if combo else "Default Title",
            "option2": combo[1] if len(combo) > 1 else None,
            "option3": combo[2] if len(combo) > 2 else None,
            "grams": grams,
            "requires_shipping": True,
            "position": position,
        }
        variants.append(variant)

    metafields = [
        _text("material", material[0].upper() + material[1:]),
        _text("weight", f"{grams} g"),
        {"namespace": "specs", "key": "care", "value": rng.choice(cat.care), "type": "multi_line_text_field"},
        _text("country_of_origin", rng.choice(_COUNTRIES)),
        _text("warranty", f"{rng.choice((1, 2, 3, 5))}-year manufacturer's warranty against defects"),
        _typed("rating", {"value": f"{rng.uniform(3.6, 4.9):.1f}", "scale_min": "1.0", "scale_max": "5.0"}, "rating"),
    ]
    metafields += [_spec(name, rng, cat, noun) for name in cat.extra_specs]
    if cat.disclosure and rng.random() < cat.disclosure_rate:
        metafields.append(
            {
                "namespace": "disclosures",
                "key": cat.disclosure,
                "value": _DISCLOSURES[cat.disclosure],
                "type": "multi_line_text_field",
            }
        )
    options = [{"name": name, "position": n, "values": vals} for n, (name, vals) in enumerate(chosen, start=1)]
    if not options:
        options = [{"name": "Title", "position": 1, "values": ["Default Title"]}]
    stamp = created.isoformat()
    return {
        "id": product_id,
        "title": title,
        "handle": f"{_slug(title)}-{index}",  # the index keeps handles unique however many titles repeat
        "body_html": _description(rng, cat, noun, material, grams),
        "vendor": rng.choice(("Synthetic Outfitters", "Northfield Supply Co.", f"{line} Works")),
        "product_type": cat.product_type,
        "created_at": stamp,
        "updated_at": (created + timedelta(days=rng.randrange(400))).isoformat(),
        "published_at": stamp,
        "tags": sorted({*cat.tags, *rng.sample(("new", "bestseller", "gift", "sale", "eco"), k=rng.randint(0, 2))}),
        "options": options,
        "variants": variants,
        "metafields": metafields,
    }


_SHOP_TOML = """[shop]
name = "Synthetic Outfitters {seed}"
url = "https://synthetic-{seed}.example"
currency = "GBP"
language = "en"
gid_namespace = "synthetic{seed}"
"""
_REFUND = """---
type: refund_policy
title: Refund Policy
---
# Refund Policy

This policy explains how to return something you bought from us. It does not affect your statutory rights.

## Returns window

You can return unused items within **{days} days of delivery** for a full refund to your original payment method.
Items must be in their original packaging with all tags attached.

## Sale items

Items bought in a sale can be returned within **14 days of delivery** and are refunded as store credit.

## Non-returnable items

- Food and snacks.
- Skincare once the seal has been opened.
- Gift cards.

## How refunds are paid

Refunds are processed within **5 working days** of your return reaching our warehouse. Returns within the UK are free
with the prepaid label in your parcel; international returns are at your own cost.

## Faulty items

If an item develops a fault within its warranty period, contact us with your order number and photos and we will
repair, replace or refund it.
"""
_SHIPPING = """---
type: shipping_policy
title: Shipping Policy
---
# Shipping Policy

Orders placed before **1pm (UK time), Monday to Friday**, are dispatched the same working day.

## UK delivery

| Service | Delivery time | Cost |
|---|---|---|
| Standard | 2-4 working days | £3.95, free on orders over £{free_over} |
| Express | Next working day | £6.95 |

## International delivery

| Destination | Countries | Delivery time | Cost |
|---|---|---|---|
| Europe | Ireland, France, Germany, Spain, Italy, Netherlands | 4-8 working days | £11.95 |
| North America | United States, Canada | 6-10 working days | £19.95 |

We do not ship to other countries at the moment. Duties and import taxes outside the UK are paid by the recipient.

## Restricted items

- Age-restricted items such as knives can only be delivered to UK addresses, with an ID check on delivery.
- Products containing lithium batteries ship by road only and cannot go by Express to Northern Ireland.
"""
_FAQ = [
    ("What payment methods do you accept?", "We accept Visa, Mastercard, American Express, PayPal and Apple Pay."),
    ("Can I change or cancel my order?", "Email us within 1 hour of ordering and we can change or cancel it."),
    ("How do I track my order?", "Your dispatch email contains a tracking link that updates within 24 hours."),
    ("Do you sell gift cards?", "Yes, digital gift cards from £10 to £200, valid for 24 months."),
    ("Where is my nearest store?", "We are online only and have no physical stores."),
    ("How do I claim under warranty?", "Email support with your order number and photos of the fault."),
    ("Do you offer a student discount?", "Yes, students get 10% off full-price items with a verified code."),
    ("How do I find my size?", "Each product page lists its sizes; if you are between sizes, choose the larger."),
]


def _faq_yaml(seed: int) -> str:
    import yaml

    entries = [{"question": q, "answer": a} for q, a in _FAQ]
    return yaml.safe_dump(
        {"url": f"https://synthetic-{seed}.example/pages/faq", "entries": entries}, sort_keys=False, allow_unicode=True
    )


def _stream_products(n_products: int, seed: int) -> Iterator[str]:
    yield '{"products": [\n'
    for i in range(n_products):
        yield ("" if i == 0 else ",\n") + json.dumps(synthetic_product(i, seed=seed), ensure_ascii=False)
    yield "\n]}\n"


def write_synthetic_shop(folder: str | Path, n_products: int, *, seed: int = 0) -> Path:
    """Write a valid shop folder with `n_products` products (plus refund and shipping policies and an FAQ) to `folder`
    and return it; the same `seed` always writes the same bytes."""
    if n_products < 0:
        raise ValueError(f"n_products must be zero or more, got {n_products}")
    root = Path(folder)
    (root / "policies").mkdir(parents=True, exist_ok=True)
    (root / "shop.toml").write_text(_SHOP_TOML.format(seed=seed), "utf-8")
    rng = random.Random(f"synthetic-shop:{seed}:policies")
    (root / "policies" / "refund-policy.md").write_text(_REFUND.format(days=rng.choice((14, 28, 30, 60))), "utf-8")
    (root / "policies" / "shipping-policy.md").write_text(_SHIPPING.format(free_over=rng.choice((40, 50, 75))), "utf-8")
    (root / "faq.yaml").write_text(_faq_yaml(seed), "utf-8")
    with (root / "products.json").open("w", encoding="utf-8") as fh:
        fh.writelines(_stream_products(n_products, seed))
    return root


_POLICY_QUESTIONS = (
    "What is your return policy?",
    "How long do refunds take?",
    "Do you ship to Germany?",
    "How much is express delivery?",
    "Can I return something I bought in the sale?",
    "Do you have a shop I can visit?",
    "Which payment methods do you take?",
    "Can I send a knife to France?",
)
_OFF_TOPIC = ("What's the weather like in Paris tomorrow?", "Write me a poem about the sea.")
_PRODUCT_TEMPLATES = (
    ("What is the {title} made of?", False),
    ("How much does the {title} weigh?", False),
    ("What sizes or colours does the {title} come in?", False),
    ("Is the {title} in stock?", False),
    ("What is the warranty on this?", True),
    ("How do I look after it?", True),
    ("Where is this made?", True),
)


def synthetic_questions(n_products: int, *, seed: int = 0, count: int = 30) -> list[dict[str, Any]]:
    """`count` realistic ask requests for the catalogue `write_synthetic_shop(folder, n_products, seed=seed)` writes:
    policy and shipping questions, product questions by name and by id (SKU, handle, URL), and off-topic ones."""
    fixed: list[dict[str, Any]] = [{"query": q} for q in _POLICY_QUESTIONS]
    fixed += [{"query": q} for q in _OFF_TOPIC]
    fixed.append({"query": "Do you deliver to my address?", "context": {"address_country": "US"}})
    out: list[dict[str, Any]] = []
    n_product_qs = max(0, count - len(fixed))
    for k in range(n_product_qs):
        if n_products == 0:
            break
        index = (k * 7919) % n_products  # a prime stride spreads the picks over the whole catalogue
        product = synthetic_product(index, seed=seed)
        template, by_id = _PRODUCT_TEMPLATES[k % len(_PRODUCT_TEMPLATES)]
        request: dict[str, Any] = {"query": template.format(title=product["title"])}
        if by_id:
            variant = product["variants"][0]
            choice = k % 3
            ident = (
                variant["sku"]
                if choice == 0
                else product["handle"]
                if choice == 1
                else f"https://synthetic-{seed}.example/products/{product['handle']}"
            )
            request["ids"] = [ident]
        out.append(request)
    # Interleave so a short run still sees every kind of question.
    mixed: list[dict[str, Any]] = []
    for a, b in itertools.zip_longest(out, fixed):
        mixed += [x for x in (a, b) if x is not None]
    return mixed[:count]
