"""ask_engine: answer buyers' questions through UCP's ask capability, grounded in the shop's own content."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["AskRequest", "AskResponse", "Engine", "Settings", "__version__"]

if TYPE_CHECKING:
    from ask_engine.config import Settings
    from ask_engine.engine import Engine
    from ask_engine.models import AskRequest, AskResponse


def __getattr__(name: str) -> Any:
    # Lazy: `import ask_engine` stays fast; heavy backends load on first use.
    if name == "Engine":
        from ask_engine.engine import Engine

        return Engine
    if name == "Settings":
        from ask_engine.config import Settings

        return Settings
    if name in ("AskRequest", "AskResponse"):
        from ask_engine import models

        return getattr(models, name)
    raise AttributeError(name)
