"""The Llama family (Llama 2, Mistral): RMSNorm, rotary positions, grouped-query attention, a
SwiGLU MLP, no biases, an untied lm_head; Mistral adds a sliding window.

sizes.py: the sizes, from transformers' config defaults in sizes.toml (checked against the pinned
lines); names.py: its checkpoint's tensor names; family.toml: its rows' words, its architecture map
and its components' prose; changes.py: what changed from GPT-2. The engine, the accounting and the
tensors are the shared ones.
"""
