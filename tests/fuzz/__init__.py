"""Property-based fuzzing: random NumPy programs, their rulebridge gradients checked against
float64 central differences. `python -m tests.fuzz.report` prints the figures in the README."""
