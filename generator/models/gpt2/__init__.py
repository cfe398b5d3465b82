"""GPT-2: learned positions, LayerNorm, a GELU MLP 4 × d_model wide, biases, tied unembedding.

sizes.py: its four sizes (its tensor names are ModelConfig's default); family.toml: its rows'
words, its architecture map and its components' prose. Its traced engine, whose steps the
walkthrough and the forward-pass page show, is generator/engine/.
"""
