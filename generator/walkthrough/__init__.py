"""The attention walkthrough: seed 000's seven steps at toy scale, with GPT-2's sizes beside them.

toy.py        the engine's trace of the toy (5 tokens, d_model 8, 2 heads, no biases)
trained.py    a trained head (the stand-in's, or GPT-2's with its weights) on a phrase that repeats
gpt2_scale.py GPT-2's shapes and costs per step, from generator.config and generator.accounting
steps.py      the seven steps: title, explanation, formula, GPT-2 figure, matrices shown
grids.py      the value grids, legend and picture of how a grid scales, as blocks
code.py       the code panel: the engine's own attention() with its line numbers, next to upstream
data.py       the JSON file the page's widget reads
blocks.py     the page blocks (data); their markup is in generator/templates/walkthrough_*.html
feature.py    the plug-in point: files(site) and macros(page)
page.py       what both walkthrough pages' macros share (links, scales, note, code panel)

The Llama family's rotary step uses the same widget, templates and script on a toy of its own:
rotary.py          the toy Llama layer's q and k, their angles and rotation (the Llama engine's
                   trace, ops.rope_angles), the three steps, the Llama sizes beside each
rotary_feature.py  its plug-in point, for docs/llama/walkthrough.md
"""
