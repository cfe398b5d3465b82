"""Mixtral 8×7B: Mistral's decoder layer with a mixture of eight SwiGLU experts, two per token.

sizes.py: its size, from MixtralConfig()'s defaults in sizes.toml (checked against the pinned
lines), in Llama's tensor names; family.toml: its rows' words, its map and its components' prose.
Its norms, embedding, rotary positions, attention and unembedding are the Llama family's modules,
explained on the Llama pages (linked from Mixtral's map): family.toml borrows them.
"""
