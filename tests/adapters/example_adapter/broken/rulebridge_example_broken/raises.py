"""An adapter whose module fails to import, as one with a missing native library would."""

raise RuntimeError("libexample.so: cannot open shared object file")
