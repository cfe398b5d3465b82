"""The frontier families on the built site: every family's numbers on its page and in What
changed's side-by-side table equal numel() of transformers' model of that size on the meta
device; each step of the chain after Mistral prints the costs the accounting gives, its reason
with papers, and both sides' code; the experts step's two sides are transformers' own models (a
dense Mistral-shaped model and Mixtral)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from generator import accounting as acc
from generator import decode_costs
from generator.models import FAMILIES
from generator.pages.chain import side_by_side_models, steps
from generator.render.code import excerpt_anchor
from tests.test_site_pages import built_html, number, soup, tab_blocks

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from transformers import GPT2Config, GPT2LMHeadModel, MistralConfig, MistralForCausalLM  # noqa: E402

from tests import frontier_helpers, llama_helpers  # noqa: E402

pytestmark = pytest.mark.slow


def numel_on_meta(cfg) -> int:
    """numel() of transformers' model of cfg's family and shape, built on the meta device."""
    with torch.device("meta"):
        if cfg.family in frontier_helpers.CLASSES:
            model = frontier_helpers.CLASSES[cfg.family][1](frontier_helpers.hf_config(cfg))
        elif cfg.family == "llama":
            arch = llama_helpers.arch_of(cfg)
            model = llama_helpers.ARCHS[arch][1](llama_helpers.hf_config(cfg, arch))
        else:
            model = GPT2LMHeadModel(
                GPT2Config(
                    vocab_size=cfg.vocab_size,
                    n_positions=cfg.n_ctx,
                    n_embd=cfg.d_model,
                    n_layer=cfg.n_layer,
                    n_head=cfg.n_head,
                )  # fmt: skip
            )
    return sum(p.numel() for p in model.parameters())


def test_every_family_side_by_side_has_transformers_counts(built_site: Path) -> None:
    html = soup(built_site / "what-changed/index.html")
    models = side_by_side_models()
    assert {cfg.family for cfg in models} == set(FAMILIES)
    assert any(cfg.sliding_window for cfg in models)  # Mistral has its row
    for cfg in models:
        shown = number(html.select_one(f'[data-q="side.params.{cfg.name}"]').get_text())
        assert shown == numel_on_meta(cfg), cfg.name
        active = number(html.select_one(f'[data-q="side.active.{cfg.name}"]').get_text())
        assert active == acc.active_params(cfg) <= shown
        if cfg.experts is None:
            assert active == shown


@pytest.mark.parametrize("family", ["mixtral", "gpt-oss", "deepseek-v3"])
def test_each_frontier_family_page_counts_like_transformers(built_site: Path, family: str) -> None:
    html = soup(built_site / f"{family}/index.html")
    for cfg in FAMILIES[family].sizes.values():
        block = tab_blocks(html.select_one(".tabbed-set"))[cfg.label]
        total = number(block.select_one('[data-q="params.model"]').get_text())
        assert total == numel_on_meta(cfg)
        active = number(block.select_one('[data-q="params.active"]').get_text())
        assert active == acc.active_params(cfg) < total
        kv = number(block.select_one('[data-q="kv.values"]').get_text())
        assert kv == decode_costs.kv_values_per_token(cfg)


def test_the_chain_prints_every_cost_its_reason_and_both_sides(built_site: Path) -> None:
    html = soup(built_site / "what-changed/index.html")
    for step in steps():
        heading = html.find(id=step.key)
        assert heading is not None, step.key
        section = []
        for sibling in heading.find_next_siblings():
            if sibling.name == "h2":
                break
            section.append(sibling)
        text = " ".join(s.get_text(" ") for s in section)
        assert "Why." in text and "arXiv:" in text, step.key
        for excerpt in (*step.before_code, *step.after_code):  # each side's code, cited
            anchor = f"#{excerpt_anchor(excerpt)}"
            assert any(s.select(f'a[href$="{anchor}"]') for s in section), (step.key, excerpt)
        for cfg in FAMILIES[step.family].sizes.values():
            shown = [
                number(s.get_text())
                for part in section
                for s in part.select(f'[data-q="step.{step.key}.after"]')
            ]
            assert {after for _, _, after in step.costs(cfg)} <= set(shown), step.key


def test_the_experts_step_sets_mixtral_against_transformers_dense_twin() -> None:
    """Before: Mixtral's shape with one MLP as wide as an expert, which is a MistralForCausalLM
    without a window; after: MixtralForCausalLM. Both counted by transformers."""
    step = next(s for s in steps() if s.key == "experts")
    cfg = FAMILIES["mixtral"].sizes["mixtral-8x7b"]
    (label, before, after), *_ = step.costs(cfg)
    assert label == "Parameters of the model" and after == numel_on_meta(cfg)
    dense = dataclasses.replace(cfg, experts=None, d_mlp=cfg.experts.d_expert)
    with torch.device("meta"):
        twin = MistralForCausalLM(
            MistralConfig(
                vocab_size=dense.vocab_size,
                hidden_size=dense.d_model,
                intermediate_size=dense.d_mlp,
                num_hidden_layers=dense.n_layer,
                num_attention_heads=dense.n_head,
                num_key_value_heads=dense.n_kv_head,
                tie_word_embeddings=False,
                sliding_window=None,
            )  # fmt: skip
        )
    assert before == sum(p.numel() for p in twin.parameters())


def test_a_windowed_familys_flop_footnote_and_ledger_say_what_they_count(built_site: Path) -> None:
    """Under a table of windowed counts (gpt-oss's sliding layers, Mistral's tab) the footnote
    said "over the full T × T grid", and so did the Notation ledger's row over gpt-oss's and
    Mistral's columns; families without a window keep the full grid's words."""
    owners: dict[str, str] = {}  # a family may show another's page (Mixtral: Llama's attention)
    for name, family in FAMILIES.items():
        for component in family.registry:
            if component.key == "attention":
                owners.setdefault(component.page, name)
    for page, name in owners.items():
        windowed = any(cfg.sliding_window for cfg in FAMILIES[name].sizes.values())
        text = soup(built_site / page.removesuffix(".md") / "index.html").get_text()
        assert ("over the full T × T grid" in text) is not windowed, name
        assert ("over the keys each query sees" in text) is windowed, name
    ledger = soup(built_site / "glossary/index.html").get_text(" ")
    assert "QKᵀ and A·V over the keys each query sees" in ledger
    assert "over the full T × T grid" not in ledger


def test_each_ratio_on_the_chain_is_what_its_rows_numbers_give(built_site: Path) -> None:
    """A ratio column reads after ÷ before from the two numbers beside it; one that three digits
    would round to 1 (the sinks' 2,304 parameters over 956 million) shows the difference, not a
    "×1" that says nothing changed."""
    html = soup(built_site / "what-changed/index.html")
    rows = [tr for tr in html.select("tr") if tr.select_one('[data-q$=".ratio"]')]
    assert len(rows) >= sum(
        len(s.costs(next(iter(FAMILIES[s.family].sizes.values())))) for s in steps()
    )
    for tr in rows:
        before = number(tr.select_one('[data-q$=".before"]').get_text())
        after = number(tr.select_one('[data-q$=".after"]').get_text())
        shown = tr.select_one('[data-q$=".ratio"]').get_text()
        if before == after:
            assert shown == "="
        elif shown[0] in "+−":
            assert number(shown[1:]) == abs(after - before) and shown[0] == "+−"[after < before]
            assert round(max(after, before) / min(after, before), 2) == 1.0, shown
        else:
            factor = max(after, before) / min(after, before)
            assert shown[0] == "×÷"[after < before] and float(shown[1:]) == float(f"{factor:.3g}")
            assert float(shown[1:]) != 1, shown


def test_a_lone_latex_link_names_its_component_as_the_map_does(built_site: Path) -> None:
    """An experts page's one "LaTeX source of this table" link read "mlp" (the checkpoint's
    module name, which only tells several norms on one page apart); it reads the map's label."""
    for family in FAMILIES.values():
        for component in family.registry:
            html = soup(built_html(built_site, component.page))
            for block in html.find_all(string=re.compile("LaTeX source of this table:")):
                links = block.parent.find_all("a")
                if len(links) == 1:
                    label = links[0].get_text()
                    assert label in {c.short for c in family.registry}, (component.page, label)


# The frontier formulas' symbols, as generator/models/*/family.toml writes them.
FORMULA_SYMBOLS = (
    "K", r"\mathcal{K}", "p", r"W_{\mathrm{gate}}", "r", "W_r", "b_r", "w_e", r"\gamma",
    r"\operatorname{FFN}_e", r"\operatorname{FFN}_{\mathrm{shared}}", r"\alpha", "s_h", "W(t)",
    "c_t", r"W_{\mathrm{DKV}}", r"W_{\mathrm{KR}}", r"W_{\mathrm{UKV},h}", r"d_{\mathrm{nope}}",
    r"d_{\mathrm{rope}}",
)  # fmt: skip


def test_the_notation_page_has_every_frontier_symbol_with_transformers_values(built_site) -> None:
    """Each symbol the frontier formulas use has a row on the Notation page (#sym-<anchor>), and
    its values per family are those of transformers' default configs and modules."""
    from transformers import DeepseekV3Config, GptOssConfig, MixtralConfig
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssExperts

    from generator.glossary import FRONTIER_SYMBOLS

    families = ("mixtral", "gpt-oss", "deepseek-v3")
    formulas = " ".join(
        c.formula for family in families for c in FAMILIES[family].registry if c.formula
    )
    page = soup(built_site / "glossary" / "index.html")
    rows = {
        tr["id"].removeprefix("sym-"): [td.get_text() for td in tr.find_all("td")[2:]]
        for tr in page.select("tr[id^=sym-]")
    }
    for symbol in FORMULA_SYMBOLS:
        assert symbol in formulas, symbol
        anchors = [s.anchor for s in FRONTIER_SYMBOLS.values() if symbol in s.tex.split(r",\ ")]
        assert len(anchors) == 1 and anchors[0] in rows, symbol
    mixtral, oss, deepseek = MixtralConfig(), GptOssConfig(), DeepseekV3Config()
    with torch.device("meta"):
        alpha = GptOssExperts(GptOssConfig(num_local_experts=2, hidden_size=8)).alpha
    nope, rope, rank = deepseek.qk_nope_head_dim, deepseek.qk_rope_head_dim, deepseek.kv_lora_rank
    expected = {
        "E": [mixtral.num_local_experts, oss.num_local_experts, deepseek.n_routed_experts],
        "K": [
            f"{mixtral.num_experts_per_tok} of {mixtral.num_local_experts}",
            f"{oss.num_experts_per_tok} of {oss.num_local_experts}",
            f"{deepseek.num_experts_per_tok} of {deepseek.n_routed_experts}",
        ],
        "gamma": [None, None, f"{deepseek.routed_scaling_factor:g}"],
        "alpha": [None, f"{alpha:g}", None],
        "s_h": [None, oss.num_attention_heads, None],
        "w": [None, oss.sliding_window, None],
        "c_t": [None, None, rank],
        "d_nope": [None, None, nope],
        "d_rope": [None, None, rope],
        "W_DKV": [None, None, f"[{rank:,} × {deepseek.hidden_size:,}]"],
        "W_KR": [None, None, f"[{rope} × {deepseek.hidden_size:,}]"],
        "W_UKV": [None, None, f"[{nope + deepseek.v_head_dim} × {rank}]"],
        "FFN_shared": [
            None, None, f"{deepseek.n_shared_experts * deepseek.moe_intermediate_size:,}"
        ],
    }  # fmt: skip
    for anchor, values in expected.items():
        want = ["—" if v is None else f"{v:,}" if isinstance(v, int) else v for v in values]
        assert rows[anchor] == want, anchor


def test_a_component_whose_layers_differ_shows_one_flop_table_per_kind(built_site: Path) -> None:
    """gpt-oss's attention page showed one instance's FLOPs, a windowed layer's, as if every one
    of its 36 layers cost that; it shows a table per kind of layer that GptOssConfig's
    layer_types names, each the count of a layer of that kind."""
    from transformers import GptOssConfig

    cfg = FAMILIES["gpt-oss"].sizes["gpt-oss-120b"]
    types = GptOssConfig().layer_types
    html = soup(built_site / "gpt-oss/attention/index.html")
    shown = [
        number(s.get_text())
        for s in html.select('[data-q^="flops.per_token"], [data-q^="flops.kind"]')
    ]
    first = {kind: types.index(kind) for kind in types}  # the first layer of each kind
    assert len(shown) == len(first) == 2
    want = [
        sum(r.value for r in acc.flop_rows(cfg, "attention", cfg.n_ctx, i)) for i in first.values()
    ]
    assert shown == want and shown[0] != shown[1]
    text = html.get_text()
    assert f"The {types.count('sliding_attention')} layers with sliding-window attention" in text
