"""`python tests/llama_launcher.py <llama_cpp.server args>`: llama-cpp-python's OpenAI-compatible server, with the
model loaded without llama.cpp's extra buffer types (`use_extra_bufts=False`).

On CPUs with AMX (Intel Xeon) the extra buffer types (AMX / repacked weights) crash on the first prompt longer than
one token; the server has no flag for them and `Llama()` takes no argument for them, so the model parameters are set
here, before the server loads the model. A build without AMX (`make setup` builds portably) does not need this; it
keeps the test tier stable on a wheel built elsewhere.
"""

from __future__ import annotations

import sys
from typing import Any


def disable_extra_buffer_types() -> bool:
    """Make every model load with `use_extra_bufts = False`; False when this llama.cpp has no such parameter."""
    import llama_cpp.llama_cpp as lib

    default_params = lib.llama_model_default_params
    if "use_extra_bufts" not in {name for name, *_ in lib.llama_model_params._fields_}:
        return False

    def params() -> Any:
        value = default_params()
        value.use_extra_bufts = False
        return value

    lib.llama_model_default_params = params
    return True


def main() -> None:
    disabled = disable_extra_buffer_types()
    print(f"llama_launcher: use_extra_bufts={'False' if disabled else 'unsupported'}", file=sys.stderr, flush=True)
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
