"""The built walkthrough page without a browser: seed 000's steps and GPT-2 figures, the static
grids against the engine, the code panel against the engine's file, and no typed numbers."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from bs4 import BeautifulSoup

from generator.config import TOY
from generator.engine import forward, toy_token_ids, toy_weights
from tests.site_helpers import ROOT, SEEDS, seed_code_sections
from tests.test_walkthrough_data import ENGINE_FILE, PAGE, SEED, page_json

SEED_000 = SEEDS / "000_7fc7e8683cbde98a.txt"
SEED_003 = SEEDS / "003_eae0eb8e5315b14b.txt"
DOC = ROOT / "docs" / "walkthrough" / "attention.md"


def soup_of(site: Path) -> BeautifulSoup:
    return BeautifulSoup((site / PAGE).read_text(encoding="utf-8"), "html.parser")


def sections(soup: BeautifulSoup) -> list:
    return soup.select(".itm-wt section.itm-wt__step")


def seed_steps() -> list[tuple[str, str]]:
    """Seed 000's "All steps": [(title, the GPT-2 figure line without "GPT-2 ")]."""
    if not SEED_000.exists():
        pytest.skip(f"seed 000 not found at {SEED_000} (../shared is absent)")
    text = SEED_000.read_text(encoding="utf-8")
    body = text[text.index("All steps") : text.index("\nCode\n")]
    steps = []
    for block in re.split(r"\n  \d\. ", "\n" + body)[1:]:
        lines = [line.strip() for line in block.strip().split("\n") if line.strip()]
        steps.append((lines[0], lines[-1]))
    return steps


def test_seven_steps_in_seed_order(built_site: Path) -> None:
    titles = [
        re.sub(r"^\d+\s*", "", s.select_one(".itm-wt__title").get_text().strip().rstrip("¶"))
        for s in sections(soup_of(built_site))
    ]
    assert titles == [title for title, _ in seed_steps()]
    assert len(titles) == 7
    # every step has an explanation with inline math, a display formula and a GPT-2 figure
    for section in sections(soup_of(built_site)):
        text = section.select_one(".itm-wt__text")
        assert len(text.get_text()) > 120 and text.select_one("div.arithmatex"), section["id"]
        assert section.select_one(".itm-wt__fig .itm-wt__tag").get_text().startswith("GPT-2")


def test_gpt2_figures_equal_seed_000(built_site: Path) -> None:
    """Seed 000 prints GPT-2 small's figures: ours must read the same (the seed is reviewed)."""
    soup = soup_of(built_site)
    label = "GPT-2 small"
    ours = {}
    for section in sections(soup):
        tag = section.select_one(".itm-wt__fig .itm-wt__tag").get_text()
        assert tag == label
        line = section.select_one(".itm-wt__fig").get_text().strip()
        ours[section["data-key"]] = line.removeprefix(tag).strip().replace(label, "GPT-2")
    seed = dict(zip(ours, [figure for _, figure in seed_steps()], strict=True))
    exact = ("projections", "scale", "output-projection")
    # The seed writes tokens as N; the site writes T, its Notation page's symbol for tokens
    # (N there is Kaplan et al.'s parameter count).
    seed = {key: re.sub(r"\bN\b", "T", figure) for key, figure in seed.items()}
    for key in exact:
        assert ours[key] == seed[key].removeprefix("GPT-2 "), key
    for key in ("scores", "weighted-sum"):
        assert ours[key].startswith(seed[key].removeprefix("GPT-2 ")), key
    assert not [line for line in ours.values() if re.search(r"\bN\b", line)], ours
    scores = soup.select_one('section[data-key="scores"] .itm-wt__text').get_text()
    assert "25 cells here, over a million per head at 1,024 tokens" in scores


@pytest.mark.slow
def test_gpt2_figures_equal_transformers_shapes_and_flop_counts(built_site: Path) -> None:
    """GEMM shapes from GPT2Attention's own weights; MFLOPs from torch's FlopCounterMode."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from torch.utils.flop_counter import FlopCounterMode

    config = transformers.GPT2Config()
    attn = transformers.models.gpt2.modeling_gpt2.GPT2Attention(config)
    d, d3 = attn.c_attn.weight.shape  # Conv1D: [in, out]
    T, heads, d_head = config.n_positions, config.n_head, config.n_embd // config.n_head

    def mflops(fn) -> str:
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            fn()
        return f"{counter.get_total_flops() / T / 1e6:.1f} MFLOPs / token"

    x = torch.zeros(1, T, d)
    q = torch.zeros(1, heads, T, d_head)
    figures = {
        s["data-key"]: s.select_one(".itm-wt__fig").get_text()
        for s in sections(soup_of(built_site))
    }
    assert f"[T×{d}]·[{d}×{d3}] + b · {mflops(lambda: attn.c_attn(x))}" in figures["projections"]
    out_in, out_out = attn.c_proj.weight.shape
    assert (
        f"[T×{out_in}]·[{out_in}×{out_out}] + b · {mflops(lambda: attn.c_proj(x))}"
        in (figures["output-projection"])
    )
    scores = mflops(lambda: q @ q.transpose(-1, -2))
    assert f"{heads} × [T×{d_head}]·[{d_head}×T] · {scores}" in figures["scores"]
    assert f"÷ {math.isqrt(d_head)}" in figures["scale"]


def number(text: str) -> float:
    return float(text.replace("−", "-"))


def test_static_grids_show_the_engine_values_of_head_1(built_site: Path) -> None:
    """Rendered at build time (no JavaScript): every cell against the engine, recomputed here."""
    data = page_json(built_site)
    attention = forward(toy_weights(TOY, SEED), TOY, toy_token_ids(TOY, SEED)).blocks[0].attention
    T = len(data["tokens"])
    checked = 0
    for section, step in zip(sections(soup_of(built_site)), data["steps"], strict=True):
        tables = section.select(".itm-wt__toy table.itm-wt-grid")
        assert [t["data-matrix"] for t in tables] == step["show"]
        for table in tables:
            key = table["data-matrix"]
            expected = attention[key][0] if attention[key].ndim == 3 else attention[key]
            rows = table.select("tbody tr")
            assert [r.th.get_text().strip() for r in rows] == data["tokens"]
            for i, row in enumerate(rows):
                cells = row.select("td:not(.itm-wt-blend)")
                assert len(cells) == expected.shape[1]
                for j, cell in enumerate(cells):
                    text, want = cell.get_text(), expected[i, j]
                    assert cell.get("aria-label", "").endswith(text)  # labelled cells
                    if np.isneginf(want):
                        assert text == "−∞" and "is-masked" in cell["class"]
                    elif key == "weights" and j > i:
                        assert text == "0" and want == 0 and "is-masked" in cell["class"]
                    else:
                        assert abs(number(text) - want) <= 0.005 + 1e-9, (key, i, j)
                        assert abs(float(cell["data-v"]) - want) <= 5e-7
                    checked += 1
    assert checked == 3 * T * 4 + 4 * T * T + T * 4 + 2 * T * 8


def test_code_panel_is_the_engines_own_file_with_its_line_numbers(built_site: Path) -> None:
    soup = soup_of(built_site)
    data = page_json(built_site)
    block = soup.select_one(f"div.highlight#{data['code_block']}")
    assert block is not None
    code = block.select_one("td.code").get_text().rstrip("\n").split("\n")
    numbers = [int(n.get_text()) for n in block.select("td.linenos span.normal")]
    file_lines = ENGINE_FILE.read_text(encoding="utf-8").split("\n")
    assert numbers == list(range(numbers[0], numbers[0] + len(code)))
    assert code == file_lines[numbers[0] - 1 : numbers[0] - 1 + len(code)]
    assert code[0].startswith("def attention(")
    # Each step's lines are inside the excerpt, have line anchors, and the step links to them.
    for section, step in zip(sections(soup), data["steps"], strict=True):
        first, last = step["lines"]
        assert section["data-lines"] == f"{first}-{last}"
        assert numbers[0] <= first <= last <= numbers[-1]
        for n in (first, last):
            assert block.select_one(f'[id="__span-{data["code_block"]}-{n}"]') is not None
        link = section.select_one(".itm-wt__codelink a")["href"]
        assert link == f"#__codelineno-{data['code_block']}-{first}"


def test_upstream_excerpts_sit_next_to_ours_as_seed_003_prints_them(built_site: Path) -> None:
    if not SEED_003.exists():
        pytest.skip(f"seed 003 not found at {SEED_003}")
    theirs = soup_of(built_site).select_one(".itm-wt-code__theirs")
    fences = {}
    for block in theirs.select("div.highlight[id]"):
        first = int(block["id"].rsplit("-", 1)[1])
        fences[first] = block.select_one("td.code").get_text().rstrip("\n").split("\n")
    for label, lines in seed_code_sections(SEED_003.read_text(encoding="utf-8")).items():
        first = int(re.search(r"(\d+)–", label).group(1))
        assert fences.get(first) == lines, label


def test_no_step_writes_tokens_as_n(built_site: Path) -> None:
    """N is Kaplan et al.'s parameter count on the Notation page: a grid of tokens is T × T."""
    tex = [
        annotation.get_text()
        for section in sections(soup_of(built_site))
        for annotation in section.select('.itm-wt__text annotation[encoding="application/x-tex"]')
    ]
    assert tex and not [t for t in tex if re.search(r"(?<![\\\w])N(?!\w)", t)], tex
    assert "T \\times T" in tex


def test_without_javascript_the_controls_are_hidden_and_the_toy_is_described(
    built_site: Path,
) -> None:
    soup = soup_of(built_site)
    for selector in ("[data-wt-controls]", "[data-wt-nav]", "[data-wt-panel]"):
        assert soup.select_one(selector).has_attr("hidden"), selector
    # The trained head's words are there for the script to show (site CSS hides them by default).
    for trained in soup.select(".itm-wt-trained-only"):
        trained.decompose()
    sub = soup.select_one(".itm-wt-sub").get_text()
    assert sub == "causal self-attention · block 0 · head 0"  # numbered as on the forward pass
    note = soup.select_one(".itm-wt-note").get_text()
    assert "no biases" in note and "random" in note
    assert f"{TOY.d_model}" in note and f"{TOY.n_head} heads" in note
    assert [a["href"] for a in soup.select(".itm-wt__steps ol a")] == [
        f"#step-{n}" for n in range(1, 8)
    ]


def test_the_page_source_types_no_digits() -> None:
    """Every number on the page comes from code: the Markdown has none ("GPT-2" is a name)."""
    text = DOC.read_text(encoding="utf-8").replace("GPT-2", "GPT")
    assert re.findall(r"\d+", text) == []
