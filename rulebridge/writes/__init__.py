"""In-place writes: the write op and its per-tape state, the routes that reach it (`x[i] = v`,
`+=`, `out=`, `fill`, allocators), and views that alias a written array."""

from .routes import ROUTES

__all__ = ["ROUTES"]
