"""The engine: the box the user's code sees (`Traced`), the tape it records onto (one `Op`
type, one record path), the reverse sweep, and the memory policy (collector pause, shedding).
It knows rules only through their contract (rulebridge.rules) and writes only through the hook
an op may carry (docs/architecture.md)."""
