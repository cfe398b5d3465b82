"""The site's declarative tables are TOML files read by one typed loader
(generator/data_file.py): a wrong type, an unknown key or bad TOML in any of them is one
InputError naming the file, the entry and the fix, never a traceback or a page built half right.
Each shipped file also reads back as the table its module holds."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from generator import differences, glossary
from generator.errors import InputError
from generator.models import papers
from generator.walkthrough import steps

# (the shipped file, its module's reader, what the module holds of it)
FILES: dict[str, tuple[Path, Callable[[Path], object], object]] = {
    "differences": (
        differences.DIFFERENCES_FILE,
        differences.read_differences,
        differences.DIFFERENCES,
    ),
    "glossary": (glossary.GLOSSARY_FILE, glossary.read_glossary, glossary.GLOSSARY),
    "papers": (papers.PAPERS_FILE, papers.read_papers, papers.PAPERS),
    "steps": (steps.STEPS_FILE, steps.read_steps, steps.WALKTHROUGHS),
}


def first_entry(data: Any, where: str = "") -> tuple[str, dict[str, Any]]:
    """The first table of an array of tables in `data`, and its entry as an error names it."""
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            return f"{where}{key}[0]", value[0]
        if isinstance(value, dict):
            found = first_entry(value, f"{where}{key}.")
            if found[0]:
                return found
    return "", {}


def refusal(tmp_path: Path, name: str, text: str) -> InputError:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / f"{name}.toml"
    path.write_text(text, "utf-8")
    with pytest.raises(InputError) as caught:
        FILES[name][1](path)
    error = caught.value
    assert error.file == str(path) and error.fix and "\n" not in error.problem
    return error


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_shipped_file_reads_back_as_its_table(tmp_path: Path, name: str) -> None:
    source, read, held = FILES[name]
    copy = tmp_path / source.name
    copy.write_bytes(source.read_bytes())
    assert read(copy) == held


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_wrong_type_or_an_unknown_key_is_named(tmp_path: Path, name: str) -> None:
    data = tomllib.loads(FILES[name][0].read_text("utf-8"))
    entry, table = first_entry(data)
    key = next(k for k, v in table.items() if isinstance(v, str))
    table[key] = 7
    error = refusal(tmp_path / "type", name, tomli_w.dumps(data))
    assert (error.entry, error.problem) == (f"{entry}.{key}", "Expected `str`, got `int`")
    del table[key]
    table["colour"] = "red"
    error = refusal(tmp_path / "key", name, tomli_w.dumps(data))
    assert error.entry == entry and "unknown field `colour`" in error.problem


@pytest.mark.parametrize("name", sorted(FILES))
def test_bad_toml_is_one_line(tmp_path: Path, name: str) -> None:
    error = refusal(tmp_path, name, 'title = "unclosed\n')
    assert error.problem.startswith("is not valid TOML") and "line 1" in error.problem


def test_the_glossary_names_a_repeated_anchor_and_a_value_without_its_symbol(
    tmp_path: Path,
) -> None:
    data = tomllib.loads(glossary.GLOSSARY_FILE.read_text("utf-8"))
    symbols = data["notation"]["llama"]["symbols"]
    symbols[1]["anchor"] = "d"  # GPT-2's d: one #sym-d link for two rows
    error = refusal(tmp_path / "a", "glossary", tomli_w.dumps(data))
    assert (error.entry, error.problem) == ("notation.llama.symbols[1].anchor", "repeats an anchor")
    del symbols[1]  # llama-h, whose value VALUES computes
    error = refusal(tmp_path / "b", "glossary", tomli_w.dumps(data))
    assert "no symbol for llama-h" in error.problem


def test_a_name_cited_twice_is_refused(tmp_path: Path) -> None:
    """Papers are cited by name: a repeated one would silently stand for the last."""
    data = tomllib.loads(papers.PAPERS_FILE.read_text("utf-8"))
    data["papers"][2]["name"] = data["papers"][0]["name"]
    error = refusal(tmp_path, "papers", tomli_w.dumps(data))
    assert error.entry == "papers[2]" and "repeats" in error.problem


def test_a_difference_names_only_numbers_the_code_measures(tmp_path: Path) -> None:
    """An unknown {placeholder} would reach the page as written."""
    data = tomllib.loads(differences.DIFFERENCES_FILE.read_text("utf-8"))
    data["differences"][1]["text"] += " The gap is {gelu_gpa}."
    error = refusal(tmp_path, "differences", tomli_w.dumps(data))
    assert error.entry == "differences[1].text" and "'gelu_gpa'" in error.problem


def test_an_unknown_placeholder_names_the_step_it_is_written_in() -> None:
    """It named only the placeholder: a writer had to search steps.toml for it."""
    with pytest.raises(InputError) as caught:
        steps.fill("width [[dh]], then [[nope]]", {"dh": "4"}, "attention.steps[2].text")
    error = caught.value
    assert error.entry == "attention.steps[2].text" and "[[nope]]" in error.problem
    assert error.file.endswith("steps.toml") and "dh" in (error.fix or "")


def test_a_step_shows_only_matrices_its_walkthrough_has(tmp_path: Path) -> None:
    data = tomllib.loads(steps.STEPS_FILE.read_text("utf-8"))
    data["rotary"]["steps"][1]["matrices"] = ["angles", "scores"]  # the attention's, not RoPE's
    error = refusal(tmp_path / "a", "steps", tomli_w.dumps(data))
    assert error.entry == "rotary.steps[1].matrices" and "scores" in error.problem
    data["rotary"]["matrices"][0]["columns"] = "rows"
    error = refusal(tmp_path / "b", "steps", tomli_w.dumps(data))
    assert error.entry == "rotary.matrices[0].columns" and "'rows'" in error.problem
