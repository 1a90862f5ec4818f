"""Sample shops shipped with the package, so a fresh `pip install` has something to index.

`fjord-fell` is an excerpt of the repository's evaluation shop (`eval/shops/fjord-fell`): 9 of its 78 products
(the Tarn Wellington Boot, a safety notice, an allergen notice, an age restriction, a gift card...), with all of its
policies, pages and FAQ, unchanged.

    >>> from ask_engine import samples
    >>> shop = samples.path("fjord-fell")      # a folder with shop.toml: `ask-engine index <it> --out indexes/fjord-fell`
"""

from __future__ import annotations

from pathlib import Path

from ask_engine.errors import ConfigError

_HERE = Path(__file__).resolve().parent


def names() -> list[str]:
    """The sample shops shipped, by name."""
    return sorted(p.name for p in _HERE.iterdir() if (p / "shop.toml").is_file())


def path(name: str = "fjord-fell") -> Path:
    """The folder of the sample shop `name`; ConfigError naming the shipped ones for an unknown name."""
    folder = _HERE / name
    if name not in names():
        raise ConfigError(f"no sample shop {name!r}; the package ships: {', '.join(names())}")
    return folder
