"""DeepSeek-V3: multi-head latent attention, three dense layers, then 58 layers of 256 routed
experts (group-limited top-8) and one shared expert.

sizes.py: its size, from DeepseekV3Config()'s defaults in sizes.toml (checked against the pinned
lines), in Llama's tensor names; family.toml: its rows' words, its map and its components' prose
(its embedding, norms, rotary positions and unembedding borrowed from the Llama family).
"""
