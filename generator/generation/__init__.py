"""The Generation page: the sampling loop and the KV cache, computed by the engine at build time."""
