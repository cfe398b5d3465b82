"""The attention walkthrough: seed 000's seven steps at toy scale, with GPT-2's sizes beside them.

toy.py      the engine's trace of the toy (5 tokens, d_model 8, 2 heads, no biases)
figures.py  GPT-2's shapes and costs per step, from generator.config and generator.accounting
steps.py    the seven steps: title, explanation, formula, GPT-2 figure, matrices shown
grids.py    build-time HTML: value grids, legend, the picture of how a grid scales
code.py     the code panel: the engine's own attention() with its line numbers, next to upstream
data.py     the JSON file the page's widget reads
feature.py  the plug-in point: files(site) and macros(page)
"""
