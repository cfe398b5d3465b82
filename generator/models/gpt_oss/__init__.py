"""gpt-oss-120b: grouped-query attention with sinks and biases, alternating sliding and full
layers, YaRN-scaled rotary positions, 128 clamped-SwiGLU experts of which four run per token.

sizes.py: its size, from GptOssConfig()'s defaults in sizes.toml (checked against the pinned
lines), and its checkpoint's names; family.toml: its rows' words, its map and its components' prose
(its embedding, norms and unembedding borrowed from the Llama family, explained on its pages).
"""
