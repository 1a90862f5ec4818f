"""Catalog search that explains itself: constraints read from the question, per-product verdicts, UCP shapes."""
