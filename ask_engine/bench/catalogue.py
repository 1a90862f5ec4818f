"""The synthetic shop's vocabulary: product categories (titles, options, prices, specs), names, colours, disclosures."""

from __future__ import annotations

from dataclasses import dataclass

# Place-like line names: titles read like a real brand's ranges ("Alder Ridge 28 Daypack").
_NAMES = (
    "Alder", "Ashby", "Birchwood", "Bramble", "Calder", "Cobble", "Corran", "Drumlin", "Eskdale", "Fenwick",
    "Glen", "Granite", "Harbour", "Heather", "Holloway", "Ironbridge", "Juniper", "Kestrel", "Larch", "Linden",
    "Marram", "Moorland", "Nettle", "Northfield", "Oakhurst", "Orkney", "Pennine", "Quarry", "Ravensworth", "Rowan",
    "Saltire", "Shingle", "Skerry", "Solway", "Tamar", "Thistle", "Torridon", "Upland", "Vale", "Wensley",
    "Wharfe", "Whin", "Wren", "Yarrow", "Ystwyth", "Zephyr",
)  # fmt: skip
_SECOND = ("", "", "", "Ridge", "Trail", "Peak", "Coast", "Field", "Brook", "Crag", "Pro", "Lite", "Classic")
_COLOURS = (
    "Black", "Charcoal", "Navy", "Forest Green", "Olive", "Rust", "Sand", "Slate Blue", "Burgundy", "Ochre",
    "Teal", "Stone", "Plum", "Red", "Grey Marl",
)  # fmt: skip
_COUNTRIES = ("Vietnam", "Portugal", "China", "Italy", "United Kingdom", "Bangladesh", "Taiwan", "Germany", "India")
_APPAREL_SIZES = ("XS", "S", "M", "L", "XL", "XXL")
_SHOE_SIZES = tuple(str(s) for s in range(4, 13))
_WAISTS = ("28", "30", "32", "34", "36", "38")
# Disclosure texts by code: the engine must always pass these on, whatever the question.
_DISCLOSURES = {
    "age_restricted": "**Age-restricted item.** You must be 18 or over to buy this product, and photo ID is checked "
    "on delivery. It can only be delivered to addresses in the United Kingdom.",
    "lithium_battery": "Contains a lithium-ion battery. Do not puncture, crush or expose to temperatures above "
    "60 °C. Recycle at a battery collection point, never with household waste.",
    "allergens": "**Allergy advice:** contains peanuts and tree nuts. Made in a factory that also handles milk, "
    "sesame and gluten.",
    "small_parts": "**Warning:** not suitable for children under 36 months. Contains small parts that are a choking "
    "hazard.",
    "open_flame": "Never leave a burning candle unattended. Keep away from children, pets and anything that can "
    "catch fire.",
    "external_use": "For external use only. Avoid contact with eyes; stop use if irritation occurs.",
}


@dataclass(frozen=True)
class Category:
    """One product type: how its titles, options, prices, descriptions and specs are made."""

    product_type: str
    nouns: tuple[str, ...]
    prices: tuple[int, int]  # whole currency units, inclusive
    grams: tuple[int, int]
    options: tuple[tuple[str, tuple[str, ...]], ...]  # option name -> the values a product picks from
    uses: tuple[str, ...]
    features: tuple[str, ...]
    materials: tuple[str, ...]
    care: tuple[str, ...]
    gendered: bool = False
    disclosure: str | None = None  # a disclosure code from _DISCLOSURES
    disclosure_rate: float = 0.0  # share of products in this category that carry it
    extra_specs: tuple[str, ...] = ()  # spec names `_spec` knows
    tags: tuple[str, ...] = ()


CATEGORIES: tuple[Category, ...] = (
    Category(
        "Waterproof Jackets", ("Waterproof Jacket", "Rain Shell", "Storm Jacket", "Packable Jacket"), (79, 329),
        (280, 620), (("Colour", _COLOURS), ("Size", _APPAREL_SIZES)),
        ("hillwalking in sideways rain", "wet commutes", "long days on exposed ridges", "coastal walks"),
        ("a helmet-compatible hood with a wired peak", "two-way front zip", "pit zips for venting",
         "hand pockets placed above a hip belt", "taped seams throughout", "adjustable Velcro cuffs"),
        ("3-layer recycled nylon", "2.5-layer polyester ripstop", "2-layer nylon with a mesh lining"),
        ("Machine wash at 30 °C with a technical cleaner; tumble dry low to reactivate the water-repellent finish.",),
        gendered=True, extra_specs=("waterproof_rating", "waterproof"), tags=("waterproof", "jacket"),
    ),
    Category(
        "Fleeces", ("Fleece", "Grid Fleece", "Half-Zip Fleece", "Sherpa Fleece"), (35, 120), (240, 480),
        (("Colour", _COLOURS), ("Size", _APPAREL_SIZES)),
        ("cold belays", "autumn dog walks", "layering under a shell", "evenings at camp"),
        ("a full-length zip with a chin guard", "zipped chest pocket", "stretch-bound cuffs", "a dropped hem"),
        ("recycled polyester grid fleece", "300-weight polyester fleece", "brushed-back polyester"),
        ("Machine wash at 30 °C inside out; do not tumble dry.",),
        gendered=True, tags=("fleece", "midlayer"),
    ),
    Category(
        "Base Layers", ("Long Sleeve Crew", "Zip Neck Base Layer", "Leggings", "T-Shirt"), (25, 95), (120, 260),
        (("Colour", _COLOURS), ("Size", _APPAREL_SIZES)),
        ("multi-day treks", "winter running", "ski touring", "everyday wear"),
        ("flatlock seams that don't rub under a pack", "a longer back hem", "thumb loops", "odour resistance"),
        ("200 gsm merino wool", "150 gsm merino and nylon blend", "recycled polyester jersey"),
        ("Machine wash at 30 °C on a wool cycle; dry flat.",),
        gendered=True, extra_specs=("fabric_weight",), tags=("base-layer",),
    ),
    Category(
        "Trousers", ("Softshell Trousers", "Trek Trousers", "Convertible Trousers", "Overtrousers"), (45, 140),
        (300, 520), (("Colour", _COLOURS), ("Waist", _WAISTS)),
        ("scrambling", "long summer hikes", "wet and windy days", "travel"),
        ("articulated knees", "zipped thigh pocket", "a gusseted crotch", "adjustable ankle cuffs"),
        ("stretch softshell", "nylon ripstop with elastane", "polyamide with a PFC-free finish"),
        ("Machine wash at 30 °C; line dry.",),
        gendered=True, extra_specs=("inside_leg",), tags=("trousers",),
    ),
    Category(
        "Hiking Boots", ("Hiking Boot", "Leather Walking Boot", "Mid Boot", "Mountain Boot"), (89, 260),
        (900, 1500), (("Colour", ("Brown", "Black", "Grey", "Olive")), ("Size", _SHOE_SIZES)),
        ("rocky fell paths", "boggy moorland", "long-distance trails", "winter walking"),
        ("a waterproof breathable membrane", "a Vibram outsole", "a padded ankle collar", "a rubber toe rand"),
        ("full-grain leather", "nubuck leather with a textile lining", "synthetic suede and mesh"),
        ("Brush off mud after each walk, let dry away from direct heat and re-proof the uppers regularly.",),
        extra_specs=("waterproof", "fit_note"), tags=("boots", "footwear"),
    ),
    Category(
        "Running Shoes", ("Trail Shoe", "Road Running Shoe", "Fell Shoe"), (70, 180), (240, 340),
        (("Colour", ("Black", "Blue", "Teal", "Orange", "Grey")), ("Size", _SHOE_SIZES)),
        ("muddy fell races", "daily road miles", "ultra-distance trails", "parkrun"),
        ("6 mm lugs for grip in mud", "a rock plate", "a cushioned midsole", "a gusseted tongue"),
        ("engineered mesh", "ripstop upper with TPU overlays"),
        ("Rinse off mud with cold water and stuff with newspaper to dry.",),
        extra_specs=("drop",), tags=("running", "footwear"),
    ),
    Category(
        "Backpacks", ("Daypack", "Trekking Pack", "Rolltop Pack", "Travel Pack"), (39, 210), (600, 1900),
        (("Colour", _COLOURS),),
        ("day hikes", "hut-to-hut treks", "bike commuting", "weekend travel"),
        ("a ventilated back panel", "hip-belt pockets", "a rain cover", "a hydration sleeve", "ice-axe loops"),
        ("420D recycled nylon", "waterproof TPU-coated polyester", "210D ripstop nylon"),
        ("Wipe clean with a damp cloth; do not machine wash.",),
        extra_specs=("capacity",), tags=("backpack",),
    ),
    Category(
        "Tents", ("Backpacking Tent", "Family Tent", "Tunnel Tent", "Pop-Up Tent"), (99, 699), (1100, 9800),
        (("Colour", ("Green", "Sand", "Grey")),),
        ("wild camping", "family festivals", "windy coastal sites", "bikepacking"),
        ("colour-coded poles", "two porches", "a fully taped flysheet", "blackout bedrooms", "storm guy-lines"),
        ("polyester flysheet with a PU coating", "silicone-coated nylon flysheet"),
        ("Always dry the tent fully before storing to prevent mildew.",),
        extra_specs=("berths", "hydrostatic_head", "packed_weight"), tags=("tent", "camping"),
    ),
    Category(
        "Sleeping Bags", ("Down Sleeping Bag", "Synthetic Sleeping Bag", "Quilt"), (49, 389), (700, 1800),
        (("Length", ("Regular", "Long")), ("Zip", ("Left", "Right"))),
        ("three-season camping", "alpine bivvies", "summer festivals", "winter hut trips"),
        ("a shaped hood with a drawcord", "a zip baffle", "a stash pocket", "a compression sack"),
        ("800-fill responsibly sourced duck down", "recycled synthetic insulation"),
        ("Store loosely in the cotton storage sack, never compressed.",),
        extra_specs=("comfort_temperature",), tags=("sleeping-bag", "camping"),
    ),
    Category(
        "Headlamps", ("Headlamp", "Rechargeable Headlamp", "Head Torch"), (19, 89), (45, 120),
        (("Colour", ("Black", "Orange", "Blue")),),
        ("night navigation", "early alpine starts", "camp chores", "winter running"),
        ("a red night-vision mode", "a lock-out mode for your pack", "USB-C charging", "a tilting head"),
        ("polycarbonate housing",),
        ("Charge fully before storing; store at room temperature.",),
        disclosure="lithium_battery", disclosure_rate=0.8, extra_specs=("lumens", "battery_life"),
        tags=("lighting",),
    ),
    Category(
        "Knives & Multitools", ("Folding Knife", "Fixed-Blade Knife", "Multitool"), (15, 120), (60, 240),
        (("Finish", ("Steel", "Black Oxide")),),
        ("bushcraft", "camp cooking", "everyday carry", "whittling"),
        ("a locking blade", "a leather sheath", "a lanyard hole", "a wood saw"),
        ("Sandvik 12C27 stainless steel", "carbon steel with an oak handle"),
        ("Hand wash and dry straight away; oil carbon steel blades lightly.",),
        disclosure="age_restricted", disclosure_rate=1.0, extra_specs=("blade_length",), tags=("knife",),
    ),
    Category(
        "Cookware", ("Frying Pan", "Saucepan", "Cook Set", "Stockpot"), (18, 160), (300, 2400),
        (("Size", ("16 cm", "20 cm", "24 cm", "28 cm")),),
        ("everyday cooking", "searing steaks", "batch cooking", "camp kitchens"),
        ("an oven-safe handle up to 220 °C", "a tempered glass lid", "a PFAS-free non-stick coating",
         "a pouring lip"),
        ("hard-anodised aluminium", "tri-ply stainless steel", "cast iron"),
        ("Dishwasher safe; hand washing extends the life of the coating.",),
        extra_specs=("induction", "oven_safe"), tags=("kitchen",),
    ),
    Category(
        "Snacks", ("Energy Bar (Box of 12)", "Trail Mix 500 g", "Nut Butter 340 g", "Flapjack (Box of 12)"),
        (4, 24), (340, 900), (),
        ("long hill days", "post-run recovery", "lunch boxes", "expedition rations"),
        ("no palm oil", "a resealable pouch", "slow-release oats", "vegan recipe"),
        ("oats, peanuts, dates and honey", "almonds, cashews, raisins and dark chocolate"),
        ("Store in a cool, dry place; once opened, eat within 7 days.",),
        disclosure="allergens", disclosure_rate=0.7, extra_specs=("energy", "best_before"), tags=("food",),
    ),
    Category(
        "Skincare", ("Sunscreen SPF 50", "Lip Balm SPF 15", "Foot Balm", "Hand Cream"), (5, 28), (30, 160),
        (("Size", ("50 ml", "100 ml", "200 ml")),),
        ("summer hikes", "high-altitude days", "sore feet after long walks", "cold, dry weather"),
        ("a water-resistant formula", "no added fragrance", "reef-friendly filters", "a recyclable tube"),
        ("shea butter, beeswax and calendula", "zinc oxide mineral filters"),
        ("Store below 25 °C out of direct sunlight.",),
        disclosure="external_use", disclosure_rate=0.5, extra_specs=("skincare_use",), tags=("skincare",),
    ),
    Category(
        "Candles", ("Scented Candle", "Pillar Candle", "Tin Candle"), (9, 45), (150, 900),
        (("Scent", ("Pine", "Sea Salt", "Fig", "Woodsmoke", "Unscented")),),
        ("cosy evenings", "cabin weekends", "gifting", "the reading corner"),
        ("a 45-hour burn time", "a cotton wick", "a reusable glass jar", "essential-oil fragrance"),
        ("soy wax", "rapeseed wax", "beeswax"),
        ("Trim the wick to 5 mm before each burn and burn for no more than 4 hours at a time.",),
        disclosure="open_flame", disclosure_rate=1.0, extra_specs=("burn_time",), tags=("home", "gift"),
    ),
    Category(
        "Home Textiles", ("Wool Throw", "Linen Cushion", "Picnic Blanket"), (25, 140), (400, 1600),
        (("Colour", ("Natural", "Charcoal", "Moss", "Ochre", "Heather")),),
        ("sofa evenings", "cold bedrooms", "summer picnics", "gifting"),
        ("hand-finished edges", "a waterproof backing", "a concealed zip", "fringed ends"),
        ("British lambswool", "washed linen", "recycled cotton"),
        ("Hand wash cold and dry flat.", "Machine wash at 40 °C; line dry."),
        tags=("home", "gift"),
    ),
    Category(
        "Electronics", ("Power Bank", "Bluetooth Speaker", "Solar Charger", "GPS Watch"), (25, 349), (150, 480),
        (("Colour", ("Black", "Grey", "Blue")),),
        ("multi-day trips off grid", "music at camp", "charging a phone on the trail", "training"),
        ("USB-C power delivery", "IPX7 water resistance", "a rugged rubber shell", "two charging ports"),
        ("aluminium and TPU", "polycarbonate with a silicone bumper"),
        ("Keep charged between 20 and 80 % for long-term storage.",),
        disclosure="lithium_battery", disclosure_rate=1.0, extra_specs=("battery_capacity", "water_resistance"),
        tags=("electronics",),
    ),
    Category(
        "Toys & Games", ("Wooden Puzzle", "Card Game", "Kite", "Building Set"), (8, 60), (150, 900),
        (),
        ("rainy days in the tent", "family evenings", "beach trips", "birthday presents"),
        ("FSC-certified wood", "a cotton storage bag", "illustrated instructions", "rounded edges"),
        ("beech wood with water-based paint", "recycled card", "ripstop nylon and fibreglass", "ABS plastic bricks"),
        ("Wipe clean with a damp cloth.",),
        disclosure="small_parts", disclosure_rate=0.6, extra_specs=("age_range", "pieces"), tags=("toys", "kids"),
    ),
)  # fmt: skip
