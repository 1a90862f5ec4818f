"""`make fuzz` (not in CI): schemathesis against the OpenAPI document a real server serves, for a fixed budget.

Indexes nothing itself: give it a built index (`make fuzz` builds the sample shop's first). Exit status is
schemathesis's: 0 when no check failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index", required=True)
    parser.add_argument("--max-examples", type=int, default=200, help="examples per operation and phase")
    parser.add_argument("--seed", type=int, default=8, help="fixed, so a run can be repeated")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    from ask_engine.config import Settings
    from ask_engine.server.app import create_app
    from tests.server_helpers import serve

    with tempfile.TemporaryDirectory() as tmp:
        # No auth and limits out of the way: the budget goes to inputs, not to 429s.
        settings = Settings(rate_limit_per_minute=0, rate_limit_per_hour=0, store_path=str(Path(tmp) / "fuzz.sqlite3"))
        with serve(create_app([args.index], settings)) as server:
            command = [
                str(Path(sys.executable).with_name("schemathesis")),
                "run",
                f"{server.base_url}/openapi.json",
                "--checks",
                "all",
                # A schema-valid request is accepted only when UCP-Agent names a platform profile that can be
                # fetched and negotiated, which no schema can say: that one check cannot hold for this API.
                "--exclude-checks",
                "positive_data_acceptance",
                "--max-examples",
                str(args.max_examples),
                "--seed",
                str(args.seed),
                "--request-timeout",
                "60",
                "--no-color",
            ]
            return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
