"""Merchant insights: the opt-in question log (`log`), its scrubbing rule (`scrub`) and the report built from it
(`report`, `render`): what shoppers asked that the shop could not answer."""
