"""The Llama family's built pages against independent truth: every parameter count a page prints
equals numel() of transformers' LlamaForCausalLM / MistralForCausalLM (meta device), the FLOPs
equal the accounting that FlopCounterMode proves, RoPE's rates equal the engine's own inverse
frequencies, and "What changed" prints each change's cost as both families' accounting gives it."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import accounting as acc
from generator.models import FAMILIES
from generator.pages.compare import CHANGES, cost_rows
from tests.test_site_pages import number, soup, tab_blocks

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.llama_helpers import ARCHS, arch_of, hf_config  # noqa: E402

SIZES = FAMILIES["llama"].sizes
# page -> (transformers' parameters of one instance, instances)
PAGES = {
    "llama/token-embedding": (("model.embed_tokens.",), lambda cfg: 1),
    "llama/rmsnorm": (("model.layers.0.input_layernorm.",), lambda cfg: cfg.n_layer),
    "llama/rope": ((), lambda cfg: cfg.n_layer),
    "llama/attention": (("model.layers.0.self_attn.",), lambda cfg: cfg.n_layer),
    "llama/mlp": (("model.layers.0.mlp.",), lambda cfg: cfg.n_layer),
    "llama/decoder-layer": (("model.layers.0.",), lambda cfg: cfg.n_layer),
    "llama/lm-head": (("lm_head.",), lambda cfg: 1),
    "llama/model": (("model.", "lm_head."), lambda cfg: 1),
}


@pytest.fixture(scope="module")
def meta_models() -> dict[str, object]:
    models = {}
    for name, cfg in SIZES.items():
        _, model_class, _ = ARCHS[arch_of(cfg)]
        with torch.device("meta"):
            models[name] = model_class(hf_config(cfg))
    return models


def numel(model, prefixes: tuple[str, ...]) -> int:
    return sum(p.numel() for n, p in model.named_parameters() if n.startswith(prefixes))


# pages that count several components as one group: page -> (that group, the whole model's kind)
GROUPS = {
    "llama/rmsnorm": (
        r"model\.layers\.\d+\.(input|post_attention)_layernorm\.",
        r"model\.layers\.\d+\.(input|post_attention)_layernorm\.|model\.norm\.",
    ),
}


def numel_matching(model, pattern: str) -> int:
    import re

    return sum(p.numel() for n, p in model.named_parameters() if re.match(pattern, n))


def test_every_count_on_the_component_pages_equals_numel(built_site: Path, meta_models) -> None:
    for page, (prefixes, instances) in PAGES.items():
        html = soup(built_site / page / "index.html")
        shapes = tab_blocks(html.select_one(".itm-shapes .tabbed-set"))
        for name, cfg in SIZES.items():
            model = meta_models[name]
            per = numel(model, prefixes) if prefixes else 0
            block = shapes[cfg.label]
            assert number(block.select_one('[data-q="params.per_instance"]').get_text()) == per
            if page in GROUPS:
                group, kind = GROUPS[page]
                shown = number(block.select_one('[data-q="params.page_total"]').get_text())
                assert shown == numel_matching(model, group), (page, name)
                counts = [e.get_text() for e in html.select('[data-q="params.model_count"]')]
                assert any(number(c) == numel_matching(model, kind) for c in counts), page
                continue
            total = block.select_one('[data-q="params.total"]')
            assert (number(total.get_text()) if total else per) == per * instances(cfg), page


def test_the_numbers_tables_and_the_flop_split(built_site: Path, meta_models) -> None:
    for page in ("llama", "llama/model"):
        tables = soup(built_site / page / "index.html").select(".tabbed-set")
        numbers = next(t for t in tables if t.select('[data-q="flops.2n"]'))
        for name, cfg in SIZES.items():
            block = tab_blocks(numbers)[cfg.label]
            value = lambda q, b=block: number(b.select_one(f'[data-q="{q}"]').get_text())  # noqa: E731
            model = meta_models[name]
            assert value("params.model") == numel(model, ("model.", "lm_head."))
            assert value("params.unembed") == numel(model, ("lm_head.",))
            assert value("flops.model") == acc.flops_per_token(cfg, "model")
            assert value("flops.model") == value("flops.2n") + value("flops.grid") + value(
                "flops.unembed"
            )
            matrices = sum(p.numel() for n, p in model.named_parameters()
                           if n.startswith("model.layers.") and p.dim() == 2)  # fmt: skip
            assert value("params.block_weights") == matrices
            assert value("kv.values") == 2 * cfg.n_layer * cfg.n_kv_head * cfg.d_head


def test_the_rope_page_states_the_engines_rates(built_site: Path) -> None:
    from generator.models.ops import rope_inv_freq

    html = soup(built_site / "llama/rope/index.html")
    table = next(t for t in html.select(".tabbed-set") if t.select('[data-q="rope.slowest"]'))
    for cfg in SIZES.values():
        block = tab_blocks(table)[cfg.label]
        inv_freq = rope_inv_freq(cfg.d_head, cfg.rope_theta)
        slowest = float(block.select_one('[data-q="rope.slowest"]').get_text())
        assert slowest == pytest.approx(float(inv_freq[-1]), rel=5e-3)  # 3 significant digits
        assert number(block.select_one('[data-q="rope.pairs"]').get_text()) == len(inv_freq)


def test_what_changed_prints_every_cost_and_both_excerpts(built_site: Path) -> None:
    html = soup(built_site / "what-changed/index.html")
    for change in CHANGES:
        heading = html.find(id=change.key)
        assert heading is not None, change.key
        shown_for = [
            c for c in SIZES.values() if not change.only_with or getattr(c, change.only_with)
        ]
        assert shown_for, change.key
        for cfg in shown_for:
            rows = cost_rows(change, cfg)
            shown = [
                number(s.get_text()) for s in html.select(f'[data-q="change.{change.key}.llama"]')
            ]
            assert {after for _, _, after in rows} <= set(shown), change.key
        section = []  # this change's own section: its heading up to the next one
        for sibling in heading.find_next_siblings():
            if sibling.name == "h2":
                break
            section.append(sibling)
        for excerpt in (change.gpt2, *change.llama):
            anchor = f'a[href$="#ex-{excerpt.replace(".", "-")}"]'
            assert any(part.select(anchor) for part in section), (change.key, excerpt)
    # Mistral's grouped-query attention: its K/V cache shrinks by n_head / n_kv_head
    mistral = SIZES["mistral-7b-v0.1"]
    (kv,) = [r for r in cost_rows(CHANGES[2], mistral) if r[0].startswith("KV cache")]
    assert kv[1] == kv[2] * mistral.n_rep
