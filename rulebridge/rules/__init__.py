"""Rules and where they come from: signatures and keys, `Rule`, the adapter base and discovery,
the registry, the policy of which rule `source=None` uses, and speed measurement."""
