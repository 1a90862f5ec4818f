"""A third shop nobody here wrote: a bicycle parts shop with a repair workshop, in Canadian dollars, with its own GID
and disclosure namespaces. Its catalogue is a Shopify product CSV export (one row per variant, continuation rows with
only Handle and variant columns, image-only rows, two-option products, a "Default Title" placeholder, metafield
columns including a Shopify standard metaobject reference); its policies are Shopify policy pages pasted as HTML with
no front matter (the type comes from the file name); its FAQ is a JSON export. It is indexed and answered through the
public API with no code written for it.

The questions and their expected facts were written from the shop data, as a buyer would ask them, before the
engine was run on it; the issue asks that at least 95% of them pass."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ask_engine.conversations import SqliteStore
from ask_engine.engine import Engine
from ask_engine.models import schema_errors
from tests.shop_helpers import build_inline_shop, codes, plain, product_links

BASE = "https://spokeandsprocket.example"
NS = "spokesprocket"
ASKER = "third-unseen-shop-test"

SEALANT_ALLERGENS = (
    "Contains natural rubber latex. People with a latex allergy should wear gloves when handling it or topping up "
    "a tire."
)
CHEWS_ALLERGENS = "Contains soy. Made in a facility that also processes peanuts, tree nuts and milk."
LIGHT_SAFETY = (
    "Contains a lithium-ion battery. Do not charge it unattended or near flammable materials, and stop using it if "
    "the case is cracked or swollen."
)
LUBE_SAFETY = "Flammable liquid and vapour. Harmful if swallowed. Keep out of reach of children."
HELMET_SAFETY = (
    "Replace the helmet after any crash or impact, even if no damage is visible. Not for climbing or tree play: a "
    "child can be caught by the strap."
)


def gid(handle: str) -> str:
    return f"gid://{NS}/Product/{handle}"


def url(handle: str) -> str:
    return f"{BASE}/products/{handle}"


CHAIN, SEALANT, CHEWS, PADS, PUMP, BOTTLE, LIGHT, GRIPS, TOOL, LUBE, CASSETTE, TUNEUP, FLAT, HELMET = (
    gid(h)
    for h in (
        "linkwell-11-speed-chain",
        "trailhead-tubeless-sealant",
        "velo-fuel-energy-chews",
        "stopwell-resin-disc-brake-pads",
        "sprocket-pro-floor-pump",
        "coldspring-insulated-bottle",
        "beacon-800-front-light",
        "gripline-lock-on-grips",
        "ridgeback-12-multi-tool",
        "dry-chain-lube",
        "linkwell-10-speed-cassette",
        "full-tune-up",
        "flat-tire-repair",
        "orbit-kids-helmet",
    )
)
DRAFT_TITLE = "Aeris Carbon Aero Wheelset"

# ---------------------------------------------------------------------------------------------------- the CSV

META = {
    "material": "Material (product.metafields.custom.material)",
    "weight": "Weight (product.metafields.custom.weight)",
    "warranty": "Warranty (product.metafields.custom.warranty)",
    "certification": "Certification (product.metafields.custom.certification)",
    "color": "Color (product.metafields.shopify.color-pattern)",  # a metaobject reference, as Shopify exports it
    "allergens": "Allergen information (product.metafields.compliance.allergens)",
    "safety": "Safety warning (product.metafields.compliance.safety)",
}
HEADER = [
    "Handle",
    "Title",
    "Body (HTML)",
    "Vendor",
    "Product Category",
    "Type",
    "Tags",
    "Published",
    "Option1 Name",
    "Option1 Value",
    "Option1 Linked To",
    "Option2 Name",
    "Option2 Value",
    "Option2 Linked To",
    "Option3 Name",
    "Option3 Value",
    "Option3 Linked To",
    "Variant SKU",
    "Variant Grams",
    "Variant Inventory Tracker",
    "Variant Inventory Qty",
    "Variant Inventory Policy",
    "Variant Fulfillment Service",
    "Variant Price",
    "Variant Compare At Price",
    "Variant Requires Shipping",
    "Variant Taxable",
    "Variant Barcode",
    "Image Src",
    "Image Position",
    "Image Alt Text",
    "Gift Card",
    "SEO Title",
    "SEO Description",
    "Variant Image",
    "Variant Weight Unit",
    "Variant Tax Code",
    "Cost per item",
    *META.values(),
    "Status",
]

PARTS = "Sporting Goods > Outdoor Recreation > Cycling > Bicycle Parts"
ACCESSORIES = "Sporting Goods > Outdoor Recreation > Cycling > Bicycle Accessories"
SERVICES = "Services"


@dataclass(frozen=True)
class Variant:
    options: tuple[str, ...]  # Option1 Value, Option2 Value
    sku: str
    price: str
    qty: int | None = 10  # None: inventory not tracked (a workshop service)
    compare: str = ""


@dataclass(frozen=True)
class Product:
    handle: str
    title: str
    body: str
    vendor: str
    category: str
    kind: str
    tags: str
    option_names: tuple[str, ...]
    variants: tuple[Variant, ...]
    meta: dict[str, str]
    status: str = "active"


DEFAULT = ("Title",)
PRODUCTS = [
    Product(
        "linkwell-11-speed-chain",
        "Linkwell 11-Speed Chain",
        "<p>A nickel-plated 11-speed chain with hollow pins, for road, gravel and trail bikes.</p>\n"
        "<ul>\n<li>Speed: 11-speed</li>\n<li>Finish: nickel plated</li>\n<li>Weight: 257 g (116 links)</li>\n</ul>\n"
        "<p><strong>Compatible with:</strong></p>\n"
        "<ul>\n<li>Shimano 11-speed road and mountain drivetrains</li>\n<li>SRAM 11-speed (not AXS Flattop)</li>\n"
        "<li>Campagnolo 11-speed</li>\n</ul>\n"
        "<p><strong>Includes:</strong> one reusable 11-speed quick link.</p>\n"
        "<p>Replace the chain once it has stretched by 0.5%, which for most riders is every 3,000 to 5,000 km.</p>",
        "Linkwell",
        PARTS,
        "Chains",
        "chain, drivetrain, 11-speed",
        ("Length",),
        (Variant(("116 links",), "LW-CH11-116", "39.99", 14), Variant(("126 links",), "LW-CH11-126", "44.99", 6)),
        {},
    ),
    Product(
        "trailhead-tubeless-sealant",
        "Trailhead Tubeless Sealant",
        "<p>A latex-based sealant that plugs punctures and seals tubeless tires to the rim.</p>\n"
        "<ul>\n<li>Seals punctures up to 6 mm</li>\n"
        "<li>Stays liquid for 2 to 6 months depending on heat and humidity</li>\n"
        "<li>Safe for carbon and aluminium rims</li>\n</ul>\n"
        '<p>How much to use: 60 mL for a road tire, 90 mL for a 29 x 2.4" mountain bike tire.</p>\n'
        "<p>Top up every 3 months.</p>",
        "Trailhead",
        PARTS,
        "Tire Sealant",
        "tubeless, tires, sealant",
        ("Size",),
        (
            Variant(("120 mL",), "TH-SEAL-120", "14.99", 22),
            Variant(("500 mL",), "TH-SEAL-500", "34.99", 9),
            Variant(("1 L",), "TH-SEAL-1L", "54.99", 0),
        ),
        {"allergens": SEALANT_ALLERGENS},
    ),
    Product(
        "velo-fuel-energy-chews",
        "Velo Fuel Energy Chews",
        "<p>Soft chews for long rides: one 60 g pack has 6 chews and 45 g of carbohydrate.</p>\n"
        "<ul>\n<li>Cola + Caffeine: 50 mg of caffeine per pack</li>\n<li>Vegan and gluten free</li>\n</ul>",
        "Velo Fuel",
        "Food, Beverages & Tobacco > Food Items > Snack Foods",
        "Sports Nutrition",
        "nutrition, ride food",
        ("Flavour",),
        (
            Variant(("Citrus",), "VF-CHEW-CIT", "3.49", 40),
            Variant(("Cola + Caffeine",), "VF-CHEW-COLA", "3.49", 0),
        ),
        {"allergens": CHEWS_ALLERGENS},
    ),
    Product(
        "stopwell-resin-disc-brake-pads",
        "Stopwell Resin Disc Brake Pads",
        "<p>Quiet organic resin pads with a steel backing plate, sold as one pair (one caliper).</p>\n"
        "<p>Compatible with:</p>\n"
        "<ul>\n<li>Shimano Deore, SLX and XT two-piston brakes (B01S shape)</li>\n<li>SRAM Level and Elixir</li>\n"
        "<li>Magura MT2, MT4, MT6 and MT8</li>\n</ul>\n"
        "<p>Bed in new pads with 20 firm stops from walking pace. Replace them when the pad material is thinner than "
        "1 mm.</p>",
        "Stopwell",
        PARTS,
        "Brake Pads",
        "brakes, disc brakes",
        ("Fits",),
        (
            Variant(("Shimano B01S",), "SW-PAD-B01S", "19.99", 18),
            Variant(("SRAM Level",), "SW-PAD-SRLV", "21.99", 11),
            Variant(("Magura MT",), "SW-PAD-MAG", "21.99", 7),
        ),
        {"material": "Organic resin compound on a steel backing plate"},
    ),
    Product(
        "sprocket-pro-floor-pump",
        "Sprocket Pro Floor Pump",
        '<p>A steel-barrel floor pump with a 2.5" top-mounted gauge.</p>\n'
        "<ul>\n<li>Maximum pressure: 160 psi (11 bar)</li>\n<li>Height: 680 mm</li>\n"
        "<li>Dual head for Presta and Schrader valves</li>\n</ul>\n"
        "<p><strong>Includes:</strong></p>\n"
        "<ul>\n<li>Dual Presta/Schrader head</li>\n<li>Ball needle</li>\n<li>Inflatable adapter</li>\n</ul>",
        "Spoke & Sprocket",
        ACCESSORIES,
        "Pumps",
        "pump, workshop",
        DEFAULT,
        (Variant(("Default Title",), "SS-PUMP-PRO", "69.99", 7, "89.99"),),
        {"warranty": "2-year warranty"},
    ),
    Product(
        "coldspring-insulated-bottle",
        "Coldspring Insulated Bottle",
        "<p>A double-walled squeeze bottle that keeps water cold for up to 2 hours in summer heat.</p>\n"
        "<ul>\n<li>Fits standard bottle cages</li>\n<li>Self-sealing valve</li>\n"
        "<li>Top-rack dishwasher safe</li>\n</ul>",
        "Coldspring",
        ACCESSORIES,
        "Water Bottles",
        "hydration, bottle",
        ("Size",),
        (Variant(("500 mL",), "CS-BTL-500", "24.00", 25), Variant(("650 mL",), "CS-BTL-650", "28.00", 12)),
        {"material": "BPA-free polypropylene", "color": "gid://shopify/Metaobject/88112233"},
    ),
    Product(
        "beacon-800-front-light",
        "Beacon 800 Front Light",
        "<p>An 800-lumen USB-C rechargeable front light for commuting and night rides.</p>\n"
        "<ul>\n<li>Output: 800 lumens on high</li>\n<li>Run time: 1.5 hours on high, 12 hours on flash</li>\n"
        "<li>Charging time: 3 hours</li>\n<li>Water resistance: IPX6</li>\n</ul>\n"
        "<p>Includes: handlebar mount, helmet mount and USB-C cable.</p>",
        "Beacon",
        ACCESSORIES,
        "Bike Lights",
        "lights, commuting",
        DEFAULT,
        (Variant(("Default Title",), "BC-800", "89.00", 15),),
        {"safety": LIGHT_SAFETY},
    ),
    Product(
        "gripline-lock-on-grips",
        "Gripline Lock-On Grips",
        "<p>Single-clamp lock-on grips with a thin, tacky waffle pattern.</p>\n"
        "<ul>\n<li>Length: 135 mm</li>\n<li>Diameter: 31 mm</li>\n<li>Fits 22.2 mm handlebars</li>\n</ul>",
        "Gripline",
        PARTS,
        "Grips",
        "grips, cockpit, mtb",
        ("Colour",),
        (
            Variant(("Black",), "GL-GRIP-BLK", "34.95", 30),
            Variant(("Red",), "GL-GRIP-RED", "34.95", 4),
            Variant(("Teal",), "GL-GRIP-TEAL", "34.95", 0),
        ),
        {"material": "Kraton rubber with aluminium clamps"},
    ),
    Product(
        "ridgeback-12-multi-tool",
        "Ridgeback 12 Multi-Tool",
        "<p>Twelve functions in a forged aluminium body that fits a jersey pocket.</p>\n"
        "<p>Includes:</p>\n"
        "<ul>\n<li>2, 2.5, 3, 4, 5, 6 and 8 mm hex keys</li>\n<li>T25 Torx</li>\n"
        "<li>Phillips and flat screwdrivers</li>\n<li>Chain breaker (9-12 speed)</li>\n"
        "<li>Spoke wrench (3.2 and 3.4 mm)</li>\n</ul>",
        "Spoke & Sprocket",
        ACCESSORIES,
        "Tools",
        "tools, repair",
        DEFAULT,
        (Variant(("Default Title",), "SS-MT12", "42.00", 20),),
        {"weight": "165 g", "warranty": "Lifetime warranty"},
    ),
    Product(
        "dry-chain-lube",
        "Dry Chain Lube",
        "<p>A wax-based dry lube for dusty summer roads and gravel.</p>\n"
        "<ul>\n<li>Contains 15% paraffin wax</li>\n<li>Not for wet or muddy conditions</li>\n</ul>\n"
        "<p>Apply to a clean chain, let it dry for 4 hours and reapply every 150 km.</p>",
        "Spoke & Sprocket",
        PARTS,
        "Lubricants",
        "lube, drivetrain, maintenance",
        ("Size",),
        (Variant(("60 mL",), "SS-LUBE-60", "11.99", 35), Variant(("120 mL",), "SS-LUBE-120", "18.99", 16)),
        {"safety": LUBE_SAFETY},
    ),
    Product(
        "linkwell-10-speed-cassette",
        "Linkwell 10-Speed Cassette",
        "<p>A ten-speed steel cassette for commuters and touring bikes.</p>\n"
        "<ul>\n<li>11-32T cogs: 11-12-14-16-18-20-22-25-28-32</li>\n"
        "<li>Weight: 295 g (11-32T), 330 g (11-36T)</li>\n</ul>\n"
        "<p>Fits Shimano HG freehub bodies. Not compatible with Micro Spline or SRAM XD drivers.</p>",
        "Linkwell",
        PARTS,
        "Cassettes",
        "drivetrain, cassette, 10-speed",
        ("Range",),
        (
            Variant(("11-32T",), "LW-CS10-1132", "49.99", 8),
            Variant(("11-36T",), "LW-CS10-1136", "54.99", 5, "64.99"),
        ),
        {},
    ),
    Product(
        "full-tune-up",
        "Full Tune-Up",
        "<p>Our most popular workshop service, for a bike that gets ridden every week.</p>\n"
        "<p>Includes:</p>\n"
        "<ul>\n<li>Gear and brake adjustment</li>\n<li>Wheel truing (on the bike)</li>\n"
        "<li>Drivetrain degrease and clean</li>\n<li>Headset, bottom bracket and hub bearing check</li>\n"
        "<li>Safety check and test ride</li>\n</ul>\n"
        "<p>Turnaround is 3 to 5 business days. Parts are charged separately.</p>",
        "Spoke & Sprocket Workshop",
        SERVICES,
        "Service",
        "workshop, service, repair",
        DEFAULT,
        (Variant(("Default Title",), "SVC-TUNE-FULL", "129.00", None),),
        {},
    ),
    Product(
        "flat-tire-repair",
        "Flat Tire Repair",
        "<p>We fit a new inner tube or re-seal a tubeless tire while you wait, usually in 20 minutes.</p>\n"
        "<p>The price is labour only: inner tubes are CA$9.99 each.</p>",
        "Spoke & Sprocket Workshop",
        SERVICES,
        "Service",
        "workshop, service, repair",
        DEFAULT,
        (Variant(("Default Title",), "SVC-FLAT", "25.00", None),),
        {},
    ),
    Product(
        "orbit-kids-helmet",
        "Orbit Kids' Helmet",
        "<p>A lightweight in-mould helmet with a rear LED and an easy dial fit.</p>\n"
        "<ul>\n<li>Weight: 260 g (XS)</li>\n<li>10 vents</li>\n<li>Magnetic buckle</li>\n</ul>",
        "Orbit",
        ACCESSORIES,
        "Helmets",
        "helmet, kids",
        ("Size", "Colour"),
        (
            Variant(("XS (48-52 cm)", "Sky Blue"), "OR-KID-XS-BLU", "59.99", 6),
            Variant(("XS (48-52 cm)", "Lime"), "OR-KID-XS-LIM", "59.99", 3),
            Variant(("S (52-56 cm)", "Sky Blue"), "OR-KID-S-BLU", "59.99", 0),
            Variant(("S (52-56 cm)", "Lime"), "OR-KID-S-LIM", "59.99", 2),
        ),
        {"certification": "CPSC 1203 and CSA D113.2-M", "safety": HELMET_SAFETY},
    ),
    Product(  # a draft: never sold, never answered
        "aeris-carbon-aero-wheelset",
        DRAFT_TITLE,
        "<p>50 mm deep carbon rims laced to ceramic-bearing hubs.</p>",
        "Aeris",
        PARTS,
        "Wheels",
        "wheels, carbon",
        DEFAULT,
        (Variant(("Default Title",), "AE-WHL-50", "1899.00", 2),),
        {"weight": "1,420 g"},
        "draft",
    ),
]
TITLES = {gid(p.handle): p.title for p in PRODUCTS if p.status == "active"}


def products_csv() -> str:
    """The catalogue as Shopify's *Export products* writes it: one row per variant, product fields on the first
    row only, continuation rows with only Handle and the variant columns, and an image-only row per product."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=HEADER, lineterminator="\r\n")
    writer.writeheader()
    for p in PRODUCTS:
        for n, v in enumerate(p.variants):
            row = {
                "Handle": p.handle,
                "Variant SKU": v.sku,
                "Variant Grams": "250",
                "Variant Inventory Tracker": "" if v.qty is None else "shopify",
                "Variant Inventory Qty": "" if v.qty is None else str(v.qty),
                "Variant Inventory Policy": "deny",
                "Variant Fulfillment Service": "manual",
                "Variant Price": v.price,
                "Variant Compare At Price": v.compare,
                "Variant Requires Shipping": "FALSE" if v.qty is None else "TRUE",
                "Variant Taxable": "TRUE",
                "Variant Weight Unit": "kg",
            }
            for k, value in enumerate(v.options, start=1):
                row[f"Option{k} Value"] = value
            if n == 0:
                row |= {
                    "Title": p.title,
                    "Body (HTML)": p.body,
                    "Vendor": p.vendor,
                    "Product Category": p.category,
                    "Type": p.kind,
                    "Tags": p.tags,
                    "Published": "TRUE",
                    "Image Src": f"https://cdn.shopify.com/s/files/1/0612/3344/products/{p.handle}-1.jpg",
                    "Image Position": "1",
                    "Image Alt Text": p.title,
                    "Gift Card": "FALSE",
                    "SEO Title": f"{p.title} | Spoke & Sprocket",
                    "Status": p.status,
                }
                for k, name in enumerate(p.option_names, start=1):
                    row[f"Option{k} Name"] = name
                row |= {META[k]: value for k, value in p.meta.items()}
            writer.writerow(row)
        writer.writerow(
            {
                "Handle": p.handle,
                "Image Src": f"https://cdn.shopify.com/s/files/1/0612/3344/products/{p.handle}-2.jpg",
                "Image Position": "2",
            }
        )
    return out.getvalue()


FAQ = {
    "url": f"{BASE}/pages/faq",
    "title": "Frequently asked questions",
    "entries": [
        {
            "question": "Do you price match?",
            "answer": "<p>Yes. We match the advertised price of any Canadian retailer for an identical in-stock "
            "item. Show us the listing in store or send it to help@spokeandsprocket.example.</p>",
        },
        {
            "question": "Can I bring my own parts for the workshop to fit?",
            "answer": "<p>Yes. Fitting customer-supplied parts is charged at our standard labour rate of CA$80 per "
            "hour.</p>",
        },
        {
            "question": "Which payment methods do you accept?",
            "answer": "<p>Visa, Mastercard, American Express, Interac debit (in store), PayPal and Shop Pay.</p>",
        },
        {
            "question": "Can I pick up my online order?",
            "anchor": "local-pickup",
            "answer": "<p>Yes. Choose local pickup at checkout; your order is usually ready within 2 hours during "
            "opening hours.</p>",
        },
        {
            "question": "How do I know which chain length I need?",
            "answer": "<p>Count the links on your old chain. If you don't have it, a 116-link chain suits most road "
            "bikes and a 126-link chain most mountain bikes with large cassettes.</p>",
        },
        {
            "question": "Do you build custom wheels?",
            "answer": "<p>Yes. A custom wheel build takes about 2 weeks, depending on parts availability.</p>",
        },
        {
            "question": "Do you sell gift cards?",
            "answer": "<p>Digital gift cards from CA$25 to CA$500, usable online and in store. They never expire.</p>",
        },
    ],
}

FILES = {
    "shop.toml": '[shop]\nname = "Spoke & Sprocket Cycle Works"\nurl = "https://spokeandsprocket.example"\n'
    'currency = "CAD"\nlanguage = "en"\ngid_namespace = "spokesprocket"\ndisclosure_namespace = "compliance"\n',
    "products.csv": products_csv(),
    # Shopify policy pages (Settings > Policies), pasted as HTML: no front matter, the type is the file name
    "policies/refund-policy.html": """<h1>Refund policy</h1>
<p>We have a 30-day return policy, which means you have 30 days after receiving your item to request a return.</p>
<p>To be eligible for a return, your item must be unused, in the same condition that you received it, and in its
original packaging. You will also need the receipt or proof of purchase.</p>
<h2>Exceptions / non-returnable items</h2>
<p>Certain types of items cannot be returned:</p>
<ul>
<li>Opened lubricants, sealants and cleaners</li>
<li>Nutrition products such as energy chews and gels</li>
<li>Workshop services once the work has been done</li>
<li>Custom-built wheels</li>
<li>Gift cards</li>
</ul>
<h2>Return shipping</h2>
<p>Return shipping costs are paid by the customer, unless the item is faulty or we sent you the wrong item.</p>
<h2>Refunds</h2>
<p>We will notify you once we've received and inspected your return. If approved, you'll be refunded to your
original payment method within 10 business days.</p>
""",
    "policies/shipping-policy.html": """<h1>Shipping policy</h1>
<p>Orders placed before 1:00 pm Pacific time on a business day ship the same day from our Vancouver workshop.</p>
<h2>Where we ship</h2>
<p>We ship to every province and territory in Canada and to the United States. We do not ship outside Canada and
the United States.</p>
<h2>Shipping zones and rates</h2>
<table>
<thead><tr><th>Zone</th><th>Delivery time</th><th>Cost</th></tr></thead>
<tbody>
<tr><td>British Columbia and Alberta</td><td>1-3 business days</td><td>CA$9.95, free on orders over CA$99</td></tr>
<tr><td>Rest of Canada</td><td>3-7 business days</td><td>CA$14.95, free on orders over CA$149</td></tr>
<tr><td>Yukon, Northwest Territories and Nunavut</td><td>7-14 business days</td><td>CA$29.95</td></tr>
<tr><td>United States</td><td>5-10 business days</td><td>CA$24.95</td></tr>
</tbody>
</table>
<h2>Duties for US orders</h2>
<p>US orders are shipped Delivered Duty Paid: there are no duties or brokerage fees to pay on delivery.</p>
<h2>Dangerous goods</h2>
<p>Chain lube, tubeless sealant and bike lights with lithium batteries travel by ground only.</p>
""",
    "policies/privacy-policy.html": """<h1>Privacy policy</h1>
<p>This Privacy Policy describes how Spoke &amp; Sprocket Cycle Works collects, uses and discloses your personal
information when you visit or make a purchase from the site.</p>
<h2>What we collect</h2>
<p>When you place an order we collect your name, billing and shipping address, email address and phone number.</p>
<h2>Sharing your information</h2>
<p>We never sell or rent your personal information. We share it only with the payment processor and the carrier
that delivers your order.</p>
<h2>Data retention</h2>
<p>We keep order records for 7 years, as Canadian tax law requires.</p>
<h2>Your rights</h2>
<p>To see, correct or delete the personal information we hold about you, email
privacy@spokeandsprocket.example.</p>
""",
    "policies/terms-of-service.html": """<h1>Terms of service</h1>
<h2>Section 1 - Prices</h2>
<p>All prices are in Canadian dollars (CAD). GST and PST, or HST, are added at checkout.</p>
<h2>Section 2 - Workshop bookings</h2>
<p>Bikes left at the workshop more than 30 days after we tell you the work is finished may be charged a storage
fee of CA$5 per day.</p>
<h2>Section 3 - Governing law</h2>
<p>These Terms of Service are governed by the laws of the Province of British Columbia.</p>
""",
    "pages/visit-the-workshop.html": """---
type: store_locations
title: Visit the workshop
---
<h2>Address</h2>
<p>2150 Main Street, Vancouver, BC V5T 3C6</p>
<h2>Opening hours</h2>
<p>Tuesday to Saturday, 10:00 to 18:00. Closed on Sundays and Mondays.</p>
""",
    "faq.json": json.dumps(FAQ, indent=2),
}

# ---------------------------------------------------------------------------------------------------- the checks

NR = (
    r"\b(?:has not|hasn't|have not|haven't|does not|doesn't|did not|didn't) (?:recorded|record|listed|list|state|say)"
    r"|\bnot (?:recorded|listed|stated)\b|\bno record\b|\bcouldn't find\b|\bcould not find\b"
)
YES = r"^\s*yes\b"
PRICE = r"CA\$\d"


@dataclass(frozen=True)
class Check:
    query: str
    expect: str  # a regex (case-insensitive) the plain answer must match
    ids: tuple[str, ...] = ()
    absent: str | None = None  # a regex the plain answer must not match
    country: str | None = None  # context.address_country
    product: str | None = None  # a product GID the answer must link to
    disclosure: tuple[str, str] | None = None  # (code, content) of a disclosure warning that must travel verbatim
    no_disclosure: bool = False  # no disclosure warning may travel
    message: str | None = None  # a message code that must be present
    after: str | None = None  # an earlier turn of the same conversation (this check is its follow-up)


C = Check
CHECKS: list[Check] = [
    # --- attributes stated only in a description: sizes, figures, lists, percentages, intervals
    C("Is the Linkwell chain compatible with Campagnolo?", r"Campagnolo", product=CHAIN),
    C("Will the Linkwell 11-speed chain work with a SRAM 11-speed drivetrain?", r"SRAM 11-speed", product=CHAIN),
    C("Does the 11-speed chain come with a quick link?", r"quick link", product=CHAIN),
    C("How much does the Linkwell 11-speed chain weigh?", r"257 g", product=CHAIN),
    C("When should I replace my chain?", r"0\.5%", ids=(CHAIN,)),
    C("What's the biggest puncture the Trailhead sealant can seal?", r"6 mm", product=SEALANT),
    C("How much sealant do I need for a road tire?", r"60 mL", ids=(SEALANT,)),
    C("How often should I top up the tubeless sealant?", r"3 months", product=SEALANT),
    C("Is the Trailhead sealant safe for carbon rims?", r"carbon", product=SEALANT),
    C("How many chews are in a pack of Velo Fuel?", r"6 chews", product=CHEWS),
    C("How much caffeine is in the cola energy chews?", r"50 mg", product=CHEWS),
    C("Are the Velo Fuel energy chews gluten free?", r"gluten free", product=CHEWS, absent=r"\bnot\b"),
    C("Will the Stopwell pads fit my Shimano SLX brakes?", r"SLX", product=PADS),
    C("Do the Stopwell brake pads fit Magura MT4 brakes?", r"MT4", product=PADS),
    C("When do I need to replace the Stopwell brake pads?", r"1 mm", product=PADS),
    C("How do I bed in the Stopwell pads?", r"20 firm stops", product=PADS),
    C("Are the Stopwell pads sold as a pair?", r"pair", product=PADS),
    C("What's the maximum pressure of the Sprocket Pro floor pump?", r"160 psi", product=PUMP),
    C("Does the Sprocket Pro pump work with Presta valves?", r"Presta", product=PUMP),
    C("What comes with the Sprocket Pro floor pump?", r"ball needle", product=PUMP),
    C("How tall is the Sprocket Pro floor pump?", r"680 mm", product=PUMP),
    C("How long does the Coldspring bottle keep water cold?", r"2 hours", product=BOTTLE),
    C("Can the Coldspring bottle go in the dishwasher?", r"top-rack", product=BOTTLE),
    C("Does the Coldspring bottle fit a normal bottle cage?", r"bottle cages", product=BOTTLE),
    C("How bright is the Beacon 800 light?", r"800 lumens", product=LIGHT),
    C("How long does the Beacon front light last on high?", r"1\.5 hours", product=LIGHT),
    C("Is the Beacon 800 waterproof?", r"IPX6", product=LIGHT),
    C("Does the Beacon light come with a helmet mount?", r"helmet mount", product=LIGHT),
    C("How long does the Beacon 800 take to charge?", r"3 hours", product=LIGHT),
    C("How long are the Gripline grips?", r"135 mm", product=GRIPS),
    C("Will the Gripline grips fit a 22.2 mm handlebar?", r"22\.2 mm", product=GRIPS),
    C("Does the Ridgeback multi-tool have a T25 Torx?", r"T25", product=TOOL),
    C("Is there a chain breaker on the Ridgeback 12?", r"chain breaker", product=TOOL),
    C("What size hex keys are on the Ridgeback multi-tool?", r"8 mm", product=TOOL),
    C("How much paraffin wax is in the dry chain lube?", r"15%", product=LUBE),
    C("How often should I reapply the dry chain lube?", r"150 km", product=LUBE),
    C("Is the dry lube OK for wet, muddy rides?", r"not for wet", product=LUBE),
    C("How long does the dry lube need to dry?", r"4 hours", product=LUBE),
    C("Does the Linkwell cassette fit a SRAM XD driver?", r"not compatible[^.]*XD", product=CASSETTE),
    C("What are the cog sizes on the 11-32T Linkwell cassette?", r"11-12-14-16-18-20-22-25-28-32", product=CASSETTE),
    C("Does the full tune-up include wheel truing?", r"truing", product=TUNEUP),
    C("How long does a full tune-up take?", r"3 to 5 business days", product=TUNEUP),
    C("Are parts included in the tune-up price?", r"charged separately", product=TUNEUP),
    C("How long does a flat tire repair take?", r"20 minutes", product=FLAT),
    C("Does the flat tire repair price include the inner tube?", r"labour only|CA\$9\.99", product=FLAT),
    C("How many vents does the Orbit kids' helmet have?", r"10 vents", product=HELMET),
    # --- metafields
    C("What are the Stopwell brake pads made of?", r"organic resin", product=PADS),
    C("What is the Coldspring bottle made of?", r"BPA-free polypropylene", product=BOTTLE, no_disclosure=True),
    C("What are the Gripline grips made from?", r"Kraton", product=GRIPS),
    C("What does the Ridgeback 12 weigh?", r"165 g", product=TOOL),
    C("What's the warranty on the Ridgeback multi-tool?", r"lifetime", product=TOOL),
    C("What warranty does the Sprocket Pro floor pump have?", r"2-year", product=PUMP),
    C("Is the Orbit helmet CSA certified?", r"CSA D113\.2-M", product=HELMET),
    # --- option values
    C("What lengths does the Linkwell 11-speed chain come in?", r"116 links.*126 links", product=CHAIN),
    C("What sizes does the Trailhead sealant come in?", r"120 mL.*500 mL.*1 L", product=SEALANT),
    C("What flavours do the Velo Fuel chews come in?", r"Citrus.*Cola|Cola.*Citrus", product=CHEWS),
    C("What sizes does the Coldspring bottle come in?", r"500 mL.*650 mL", product=BOTTLE),
    C("What ranges does the Linkwell 10-speed cassette come in?", r"11-32T.*11-36T", product=CASSETTE),
    C("What sizes does the Orbit kids' helmet come in?", r"52-56 cm", product=HELMET),
    C("What colours does the Orbit helmet come in?", r"Sky Blue.*Lime|Lime.*Sky Blue", product=HELMET),
    C("Do the Gripline grips come in teal?", r"teal", product=GRIPS, absent=r"\bonly\b"),
    C("Do you have the Gripline grips in blue?", r"Black, Red,? and Teal", product=GRIPS, absent=YES),
    C(
        "What sizes does the Sprocket Pro floor pump come in?",
        r"not recorded|hasn't recorded|has not recorded",
        product=PUMP,
        absent=r"default title",
    ),
    # --- price, sale, stock
    C("How much is the 126-link Linkwell chain?", r"CA\$44\.99", product=CHAIN, absent=r"CA\$39\.99"),
    C("How much is a full tune-up?", r"CA\$129\.00", product=TUNEUP),
    C("Is the Sprocket Pro floor pump on sale?", r"CA\$69\.99.*CA\$89\.99", product=PUMP),
    C("Is the 11-36T Linkwell cassette on sale?", r"CA\$54\.99.*CA\$64\.99", product=CASSETTE),
    C("Is the 1 L Trailhead sealant in stock?", r"sold out", product=SEALANT),
    C("Are the cola energy chews in stock?", r"sold out", product=CHEWS),
    C("Is the small Sky Blue Orbit helmet in stock?", r"sold out", product=HELMET),
    C("Is the 120 mL Trailhead sealant in stock?", r"in stock", product=SEALANT, absent=r"sold out"),
    C("Can I book a flat tire repair now?", r"available|in stock|CA\$25\.00", product=FLAT, absent=r"sold out"),
    # --- do you sell X
    C("Do you sell tubeless sealant?", r"Trailhead Tubeless Sealant", product=SEALANT),
    C("Do you sell bike lights?", r"Beacon 800 Front Light", product=LIGHT),
    C("Do you sell electric bikes?", NR, absent=YES + "|" + PRICE),
    C("Do you sell a carbon aero wheelset?", NR, absent=YES + r"|1,?899|Aeris"),
    C("Do you rent bikes?", NR, absent=YES),
    # --- lists across products
    C("Which of your products are on sale?", r"(?=.*Sprocket Pro Floor Pump)(?=.*Linkwell 10-Speed Cassette)"),
    C("What repair services do you offer?", r"(?=.*Full Tune-Up)(?=.*Flat Tire Repair)"),
    C("Which of your products are made by Linkwell?", r"(?=.*Linkwell 11-Speed Chain)(?=.*Linkwell 10-Speed Cassette)"),
    # --- returns, shipping, privacy, terms
    C("How long do I have to return something?", r"30 days"),
    C("Can I return an opened bottle of chain lube?", r"opened lubricants"),
    C("Can I get a refund on a tune-up I didn't like?", r"workshop services"),
    C("Who pays for return shipping?", r"paid by the customer"),
    C("How long will my refund take?", r"10 business days"),
    C("How long does shipping to the United States take?", r"5-10 business days"),
    C("What does shipping to the US cost?", r"CA\$24\.95"),
    C("Is shipping free to Alberta?", r"free on orders over CA\$99"),
    C("How long does delivery to Nunavut take?", r"7-14 business days"),
    C("How much is delivery?", r"(?=.*CA\$9\.95)(?=.*CA\$14\.95)", country="CA"),
    C("Do you ship to the United Kingdom?", r"do not ship|don't ship|" + NR, absent=YES),
    C("Can you deliver to my address in Australia?", r"do not ship|don't ship|" + NR, country="AU", absent=YES),
    C("What time do I need to order by for same-day shipping?", r"1:00 pm"),
    C("Will I have to pay duties on a US order?", r"no duties|Duty Paid"),
    C("Can you ship the dry chain lube by air?", r"ground only"),
    C("Do you sell my personal information?", r"never sell"),
    C("How long do you keep my order records?", r"7 years"),
    C("How can I get my personal data deleted?", r"privacy@spokeandsprocket\.example"),
    C("Are your prices in Canadian dollars?", r"Canadian dollars"),
    C("Which law governs your terms of service?", r"British Columbia"),
    C("Is there a storage fee if I leave my bike at the workshop?", r"CA\$5 per day"),
    # --- FAQ and pages
    C("Do you price match?", r"identical in-stock item"),
    C("Can I bring my own parts to be fitted?", r"CA\$80 per hour"),
    C("Do you accept Interac?", r"Interac"),
    C("Can I pick up my order in store?", r"within 2 hours"),
    C("How do I know what chain length I need?", r"Count the links"),
    C("Do you build custom wheels?", r"2 weeks"),
    C("Do your gift cards expire?", r"never expire"),
    C("Where is your workshop?", r"2150 Main Street"),
    C("Are you open on Mondays?", r"Closed on Sundays and Mondays|Tuesday to Saturday"),
    # --- not recorded: never guess, never borrow a neighbour's fact
    C("Do you offer financing?", NR, absent=YES),
    C("Do you have a student discount?", NR, absent=YES),
    C("Can I pay with Bitcoin?", NR, absent=YES),
    C("Where is the Sprocket Pro floor pump made?", NR, absent=YES),
    C("How much does the Beacon 800 front light weigh?", NR, absent=r"\d+ g\b"),
    C("Does the Orbit kids' helmet have MIPS?", NR, absent=YES),
    C("What colour is the Coldspring bottle?", NR, absent=r"gid://"),
    C("Is the Linkwell cassette made in Japan?", NR, absent=YES),
    # --- ids
    C("How much is this?", r"CA\$44\.99", ids=("LW-CH11-126",), product=CHAIN, absent=r"CA\$39\.99"),
    C("Is this in stock?", r"sold out", ids=(f"gid://{NS}/ProductVariant/TH-SEAL-1L",), product=SEALANT),
    C("What does it include?", r"truing", ids=(f"{BASE}/products/full-tune-up?utm_source=agent",), product=TUNEUP),
    C("What is it made of?", r"Kraton", ids=("gripline-lock-on-grips",), product=GRIPS),
    C("Is this vegan?", r"vegan", ids=(CHEWS,), product=CHEWS, absent=r"\bnot\b"),
    C(
        "How much is this?",
        r"not found|couldn't find|could not find|" + NR,
        ids=(gid("no-such-part"),),
        message="not_found",
        absent=PRICE,
    ),
    # --- disclosures travel verbatim
    C("Tell me about the Trailhead tubeless sealant", r"Trailhead", disclosure=("allergens", SEALANT_ALLERGENS)),
    C("What's in the Velo Fuel chews?", r"Velo Fuel", disclosure=("allergens", CHEWS_ALLERGENS)),
    C("How much is the Beacon 800 front light?", r"CA\$89\.00", disclosure=("safety", LIGHT_SAFETY)),
    C("What sizes does the dry chain lube come in?", r"60 mL.*120 mL", disclosure=("safety", LUBE_SAFETY)),
    C("Tell me about the Orbit kids' helmet", r"Orbit", disclosure=("safety", HELMET_SAFETY)),
    # --- follow-ups in one conversation
    C("how long does it take to charge?", r"3 hours", after="Tell me about the Beacon 800 front light", product=LIGHT),
    C("and what does it weigh?", r"165 g", after="How much is the Ridgeback 12 multi-tool?", product=TOOL),
]

# ---------------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def shop_index(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    return build_inline_shop(tmp_path_factory.mktemp("unseen3") / "spoke-sprocket", FILES, embedder)


@pytest.fixture(scope="module")
def shop_engine(shop_index: Path, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    with SqliteStore(tmp_path_factory.mktemp("unseen3-conversations") / "conversations.sqlite") as store:
        eng = Engine.open(shop_index, embedder=embedder, store=store)
        yield eng
        eng.close()


def _request(check: Check, conversation: str | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {"query": check.query}
    if check.ids:
        request["ids"] = list(check.ids)
    if check.country:
        request["context"] = {"address_country": check.country}
    if conversation:
        request["conversation"] = {"id": conversation}
    return request


@pytest.fixture(scope="module")
def answers(shop_engine: Engine) -> list[tuple[Check, list[dict[str, Any]]]]:
    """Every check asked once: the responses of its turns (the earlier turn first, for a follow-up)."""
    out: list[tuple[Check, list[dict[str, Any]]]] = []
    for check in CHECKS:
        turns: list[dict[str, Any]] = []
        conversation = None
        if check.after:
            first = shop_engine.ask({"query": check.after}, asker=ASKER).to_json()
            turns.append(first)
            conversation = first["conversation"]["id"]
        turns.append(shop_engine.ask(_request(check, conversation), asker=ASKER).to_json())
        out.append((check, turns))
    return out


def failure(check: Check, data: dict[str, Any]) -> str | None:
    """Why `data` does not answer `check` as the shop's data says it should (None: it does)."""
    text = plain(data)
    if not re.search(check.expect, text, re.I | re.S):
        return f"expected /{check.expect}/"
    if check.absent and re.search(check.absent, text, re.I | re.S):
        return f"must not match /{check.absent}/"
    if check.expect == NR and check.absent is None and re.search(YES, text, re.I):
        return "a guessed yes"
    if check.product and not any(
        link.get("id") == check.product and link["url"] == url(check.product.rsplit("/", 1)[1])
        for link in product_links(data)
    ):
        return f"no link to {check.product}: {[link.get('id') for link in product_links(data)]}"
    warnings = [m for m in data.get("messages") or [] if m.get("presentation") == "disclosure"]
    if check.disclosure:
        code, content = check.disclosure
        sent = [m for m in warnings if m.get("code") == code]
        if [m.get("content") for m in sent] != [content] or sent[0].get("type") != "warning":
            return f"disclosure {code!r} not sent once verbatim: {warnings}"
    if check.no_disclosure and warnings:
        return f"unexpected disclosures: {warnings}"
    if check.message and not codes(data, check.message):
        return f"no {check.message!r} message: {data.get('messages')}"
    return None


# ---------------------------------------------------------------------------------------------------- tests


def test_the_csv_shop_indexes_active_products_policies_page_and_json_faq(shop_engine: Engine) -> None:
    docs = shop_engine.index.documents
    assert {f"product:{g}" for g in TITLES} <= set(docs)
    assert len(TITLES) >= 12
    assert not any(d.title == DRAFT_TITLE for d in docs.values())
    policies = {"refund_policy", "shipping_policy", "privacy_policy", "terms_of_service"}
    assert {f"policy:{p}" for p in policies} | {"page:visit-the-workshop"} <= set(docs)
    assert sum(1 for d in docs.values() if d.kind == "faq") == len(FAQ["entries"])
    # the compliance namespace is disclosures, and each notice is also a fact the answer can quote, read in the
    # fact sheet; a metaobject reference is no fact at all
    assert [d.code for d in docs[f"product:{HELMET}"].disclosures] == ["safety"]
    assert [f.value for f in docs[f"product:{HELMET}"].facts if f.source == "disclosure"] == [HELMET_SAFETY]
    assert any(f"Safety warning: {HELMET_SAFETY}" in p.text for p in shop_engine.index.passages)  # its own label
    assert not any("gid://shopify/Metaobject" in p.text for p in shop_engine.index.passages)


def test_there_are_enough_checks_of_every_kind() -> None:
    assert len(CHECKS) >= 60
    assert sum(1 for c in CHECKS if c.expect == NR) >= 8
    assert sum(1 for c in CHECKS if c.disclosure) >= 4
    assert any(c.after for c in CHECKS) and any(c.ids for c in CHECKS) and any(c.country for c in CHECKS)


def test_every_response_matches_the_schema(answers: list[tuple[Check, list[dict[str, Any]]]]) -> None:
    bad = [
        (check.query, errors)
        for check, turns in answers
        for data in turns
        if (errors := schema_errors("ask_response", data)) or not plain(data).strip()
    ]
    assert not bad, bad


def test_at_least_95_percent_of_the_checks_pass(answers: list[tuple[Check, list[dict[str, Any]]]]) -> None:
    failures = [
        (check, why, plain(turns[-1])) for check, turns in answers if (why := failure(check, turns[-1])) is not None
    ]
    rate = 1 - len(failures) / len(answers)
    report = "\n".join(
        f"- {check.query!r} ids={list(check.ids)} {why}\n    got: {got!r}" for check, why, got in failures
    )
    print(f"third unseen shop: {len(answers) - len(failures)} of {len(answers)} checks pass ({rate:.1%})\n{report}")
    assert rate >= 0.95, f"{rate:.1%} of {len(answers)} checks pass; failures:\n{report}"


def _plain_answer(engine: Engine, query: str) -> str:
    data = engine.ask({"query": query}, asker=ASKER).to_json()
    assert schema_errors("ask_response", data) == [], data
    return plain(data)


def test_a_question_what_is_on_sale_lists_every_product_on_sale_however_retrieval_ranks_them(
    shop_engine: Engine,
) -> None:
    # the cassette is on sale in one variant only; its page reads no closer to these questions than any other
    for query in ("What's on sale?", "Is anything discounted right now?", "Which of your products are on sale?"):
        text = _plain_answer(shop_engine, query)
        assert "Sprocket Pro Floor Pump" in text and "Linkwell 10-Speed Cassette" in text, (query, text)
        assert "CA$89.99" in text and "CA$64.99" in text, (query, text)
    # a kind of goods named keeps those of that kind
    text = _plain_answer(shop_engine, "Are any of your pumps on sale?")
    assert "Sprocket Pro Floor Pump" in text and "Cassette" not in text, text
    # a policy question that mentions a sale is not a request for the list
    text = _plain_answer(shop_engine, "Can I return an item I bought on sale?")
    assert "30-day return policy" in text and "Cassette" not in text, text


def test_a_return_question_about_a_product_gets_the_policy_entry_naming_its_kind_not_a_tag_word(
    shop_engine: Engine,
) -> None:
    # "Opened lubricants, sealants and cleaners" follows the lead-in "Certain types of items cannot be returned:"
    text = _plain_answer(shop_engine, "Can I return an opened bottle of chain lube?")
    assert re.search(r"cannot be returned: opened lubricants", text, re.I), text
    # the pump is tagged "workshop": "Workshop services once the work has been done" is not its rule
    text = _plain_answer(shop_engine, "Can I return the floor pump?")
    assert "Workshop services" not in text and "30-day return policy" in text, text


def test_a_shipping_question_about_a_product_gets_the_shipping_rule_naming_its_kind(shop_engine: Engine) -> None:
    text = _plain_answer(shop_engine, "Can you ship the dry chain lube by air?")
    assert "ground only" in text, text
