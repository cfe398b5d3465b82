"""Inside the Model: the generator behind the site (engine, accounting, pinned sources, renderers)."""
