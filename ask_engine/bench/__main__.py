"""`python -m ask_engine.bench`: the benchmark run (`ask_engine.bench.benchmark.main`)."""

import sys

from ask_engine.bench.benchmark import main

sys.exit(main())
