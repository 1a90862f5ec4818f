"""Transports of the ask capability: UCP REST and MCP bindings, discovery, authentication, limits and negotiation."""
