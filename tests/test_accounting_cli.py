"""`itm numbers` and the number formatting it shares with the pages."""

from __future__ import annotations

import re

import pytest

from generator import accounting as acc
from generator import decode_costs, scaling
from generator.cli import main
from generator.config import CONFIGS
from generator.models import get_size
from generator.models.rows import Row, prefixed
from generator.render.number_tables import details, labels
from generator.render.numbers import fmt_flops, fmt_int, row_label, tex_int


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["numbers", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_fmt_int_and_tex_int():
    assert fmt_int(2362368) == "2,362,368"
    assert tex_int(2362368) == "2{,}362{,}368"
    assert fmt_int(0) == "0" and tex_int(768) == "768"


def test_a_row_label_names_its_numbers_and_the_renderers_write_them_out():
    """The accounting computes numbers and never formats them: a label names its numbers, and
    row_label (a renderer) writes them out, or words in their place."""
    rows = {r.key: r for r in decode_costs.kv_cache_rows(get_size("mistral-7b-v0.1"), 8192)}
    window = rows["context.values"]
    assert window.label == "Values for {T} tokens (a window keeps the last {kept})"
    assert row_label(window) == "Values for 8,192 tokens (a window keeps the last 4,095)"
    forward = scaling.flop_relations(CONFIGS["gpt2"])[0]
    assert row_label(forward) == "Forward FLOPs per token at T = 1,024, exact"
    assert (
        row_label(forward, T="the context") == "Forward FLOPs per token at T = the context, exact"
    )
    assert row_label(prefixed("all", [forward])[0]).startswith(
        "all forward FLOPs per token at T = 1,024"
    )
    assert row_label(Row("tex", "a {b} c", ((1,),))) == "a {b} c"  # no numbers: left as it is


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (3_538_944, "3.5 MFLOPs"),
        (1_179_648, "1.2 MFLOPs"),
        (284_812_800, "284.8 MFLOPs"),
        (3_424_515_200, "3.4 GFLOPs"),
        (999_999_999, "1.0 GFLOPs"),
        (1_500, "1.5 kFLOPs"),
        (940, "940 FLOPs"),
        (0, "0 FLOPs"),
        (2.9e12, "2.9 TFLOPs"),
    ],
)
def test_fmt_flops(n, text):
    assert fmt_flops(n) == text


@pytest.mark.slow
def test_numbers_text_for_gpt2_xl_matches_transformers(capsys):
    torch = pytest.importorskip("torch")
    from transformers import GPT2LMHeadModel

    from tests.engine_helpers import hf_config

    code, out, err = run(capsys, "--model", "gpt2-xl", "--context", "1024")
    assert code == 0 and err == ""
    with torch.device("meta"):
        model = GPT2LMHeadModel(hf_config(CONFIGS["gpt2-xl"]))
    numel = sum(p.numel() for p in model.parameters())
    line = next(line for line in out.splitlines() if line.startswith("Parameters (lm_head tied"))
    assert line.split()[-1] == f"{numel:,}"
    assert "GPT-2 XL (gpt2-xl): 48 blocks, 25 heads, d_model 1,600" in out
    assert "One multiply-add counts as 2 FLOPs" in " ".join(out.split())
    titles = labels(CONFIGS["gpt2-xl"])
    for component in acc.COMPONENTS:  # every component has a line in the overview
        assert re.search(rf"^{re.escape(titles[component])}\s+{component}\s", out, re.M)
    assert "LayerNorm before attention (ln_1)" in out  # one norm a layer, not ln_1 and ln_2


def test_numbers_tex_prints_tabulars(capsys):
    code, out, _ = run(capsys, "--model", "gpt2", "--component", "attention", "--format", "tex")
    assert code == 0
    assert out.count("\\begin{tabular}") == out.count("\\end{tabular}") == 1
    assert "$768 \\times 2{,}304 + 2{,}304$ & $1{,}771{,}776$ \\\\" in out
    body = out.split("\\begin{tabular}")[1].split("\\end{tabular}")[0]
    assert all(ord(ch) < 128 for ch in body), "non-ASCII inside the tabular"
    for line in body.strip().splitlines()[2:]:
        if line not in ("\\hline",):
            assert line.count("&") == 3, line


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "gpt3"], "unknown model 'gpt3'"),
        (["--context", "2048"], "outside 1..1024"),
        (["--context", "0"], "outside 1..1024"),
    ],
)
def test_bad_input_exits_2_with_a_fix(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and "fix:" in err


def test_numbers_print_the_cache_and_training_rows(capsys):
    code, out, _ = run(capsys, "--model", "gpt2-medium", "--context", "300")
    assert code == 0
    cfg = CONFIGS["gpt2-medium"]
    cache = next(
        line for line in out.splitlines() if line.startswith("KV cache") and "Values per" in line
    )
    assert cache.split()[-1] == fmt_int(decode_costs.kv_values_per_token(cfg))
    steps = [line.split()[-1] for line in out.splitlines() if "Step total" in line]
    assert steps == [fmt_int(decode_costs.decode_flops(cfg, 300, cached=c)) for c in (True, False)]
    train = next(line for line in out.splitlines() if "Training step total" in line)
    assert train.split()[-1] == fmt_int(scaling.train_flops_per_token(cfg, 300))
    assert "reads token number t = 300" in out


@pytest.mark.parametrize("name", ["llama-2-7b", "mistral-7b-v0.1"])
def test_numbers_prints_a_llama_size_from_its_family(
    capsys, monkeypatch, tmp_path, name: str
) -> None:
    """With an empty cache the size rows cannot be checked against their pinned lines (itm
    numbers never downloads): the numbers print, and one line on stderr says they are unchecked.
    The checked path: tests/test_sources_real_lock.py."""
    from generator.models import get_size

    monkeypatch.setenv("ITM_CACHE_DIR", str(tmp_path / "empty-cache"))
    cfg = get_size(name)
    code, out, err = run(capsys, "--model", name, "--context", "2048")
    assert code == 0
    assert err == (
        f"itm numbers: {name}'s size is not checked against its pinned lines: they are not in"
        " the cache (a build fetches them: make site)\n"
    )
    assert (
        f"{cfg.n_head} heads ({cfg.n_kv_head} key/value heads)" in out
        or cfg.n_kv_head == cfg.n_head
    )
    assert "untied lm_head" in out and "wpe" not in out.split("\n\n")[1]
    assert fmt_int(acc.params_total(cfg, "model")) in out
    assert fmt_int(acc.flops_per_token(cfg, "model", 2048)) in out
    assert "Kaplan N" not in out and "Kaplan's 6N" not in out  # GPT-2's shape, not this one
    code, _, err = run(capsys, "--model", name, "--component", "wpe")
    assert code == 2 and "unknown component 'wpe'" in err and "rope" in err


def test_a_reader_that_goes_away_is_not_a_traceback() -> None:
    import subprocess
    import sys

    from tests.site_helpers import ROOT

    done = subprocess.run(
        f"{sys.executable} -m generator.cli numbers --model gpt2-xl | head -1",
        shell=True, cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.stdout.startswith("GPT-2 XL") and "Traceback" not in done.stderr


def test_the_rows_of_kinds_of_layers_say_what_sets_them_apart():
    """Layers that differ get a row each, named by what differs: words, not the kinds' keys run
    together ("Decoder layers with full experts attention")."""
    flops = {
        name: [r.label for r in acc.flop_rows(get_size(name), "model") if r.key != "logits"]
        for name in ("gpt-oss-120b", "deepseek-v3")
    }
    assert flops == {
        "gpt-oss-120b": [
            "Decoder layers with sliding-window attention",
            "Decoder layers with full attention",
        ],
        "deepseek-v3": ["Decoder layers with a dense MLP", "Decoder layers with experts"],
    }
    params = [r.label for r in acc.param_rows(get_size("deepseek-v3"), "model")]
    assert params[1:3] == ["Decoder layers with a dense MLP", "Decoder layers with experts"]
    captions = [t[0] for t in details(get_size("gpt-oss-120b"), "attention", 131072)]
    assert [c.split("], ")[1] for c in captions] == [
        "layers with sliding-window attention: 18 instance(s) (layers 0, 2, 4, …, 34)",
        "layers with full attention: 18 instance(s) (layers 1, 3, 5, …, 35)",
    ]
