"""Pinned upstream code excerpts: the lock, verified resolution, and how pages cite them.

    lock = load_lock(Path("sources/lock.toml"))   # .lock: InputError(file, entry, fix)
    excerpts = resolve_excerpts(lock, settings)   # .resolve
    excerpts["gpt2.attn"].blocks, .permalink, .label, .license, .evidence_level, .swhid

Nothing is imported here: a page's Markdown reads its excerpt options (sources/pageblocks.py)
without loading the lock's and resolution's modules, which a warm build never needs.
"""
