"""`itm forward`: run the forward-pass page's computation and print what the page would show.
`itm train-standin`: retrain the stand-in (torch) and rewrite its committed file and pin.

    itm forward [--weights PATH] [--prompt TEXT] [--download]
    itm train-standin

--weights names GPT-2's model.safetensors (or a folder with it, vocab.json and merges.txt); it
wins over ITM_GPT2_WEIGHTS. --download allows fetching the pinned revision (ITM_DOWNLOAD_WEIGHTS=1).
Without GPT-2's files the committed stand-in is used.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "forward",
        help="run the forward-pass page's model on a prompt",
        description="Run the forward-pass page's model on a prompt. Budget: a 1,024-token prompt "
        "through GPT-2 small (float64) within 60 s and 4 GB on two cores (bench/bench_forward.py).",
    )
    parser.add_argument("--weights", help="GPT-2's model.safetensors, or a folder holding it")
    parser.add_argument("--prompt", help="the prompt (default: the page's)")
    parser.add_argument("--download", action="store_true", help="fetch the pinned revision")
    parser.add_argument("--root", default=".", help="the project folder (default: .)")
    parser.set_defaults(func=run_command)
    train = subparsers.add_parser(
        "train-standin",
        help="train the stand-in with torch; rewrite sources/standin.safetensors and its pin",
    )
    train.add_argument("--root", default=".", help="the project folder (default: .)")
    train.set_defaults(func=train_command)
    check = subparsers.add_parser(
        "check-heads",
        help="check a built site's GPT-2 heads against what interpretability work reports",
        description="Check a built site's GPT-2 heads against what interpretability work reports."
        " Exit status: 0 the site shows GPT-2's heads and they agree; 1 they disagree, or the"
        " site shows the stand-in; 2 the site's forward/heads.json cannot be read.",
    )
    check.add_argument("site", help="the built site folder (its forward/heads.json is read)")
    check.set_defaults(func=check_command)


HEADS_FILE = "forward/heads.json"
MAX_HEADS_BYTES = 16 * 1024 * 1024  # GPT-2 small's 144 heads take 30 KB, GPT-2 XL's 1,200 250 KB
SCORES = ("previous_token", "induction", "first_token")


def check_command(args: argparse.Namespace) -> int:
    """Exit 1 unless the site shows GPT-2's own heads and they agree with the literature; an
    InputError (exit 2) when the site's heads cannot be read."""
    from generator.forward.literature import compare, problems, verdict

    site = Path(args.site)
    if not site.is_dir():
        from generator.checked_io import what_is
        from generator.errors import InputError

        problem = "not found" if not site.exists() else f"is {what_is(site)}, not a site folder"
        raise InputError(
            problem,
            file=str(site),
            fix="build the site first (make site), or give"
            " the folder a build wrote (site_dir in mkdocs.yml, site/ by default)",
        )
    path = site / HEADS_FILE
    source, model, heads = read_heads(path)
    if source != "gpt2":
        print(f"{path}: the page shows the {model}, not GPT-2 (weights not found)")
        return 1
    for c in compare(heads):
        print(f"{c.known.kind} head {c.known.label} ({c.known.source}): {verdict(c)}")
    found = problems(heads)
    for problem in found:
        print(f"DISAGREES: {problem}")
    return 1 if found else 0


def read_heads(path: Path) -> tuple[str, str, list]:
    """(source, model, [HeadScore]) from a built site's forward/heads.json, checked field by
    field: an InputError names the file, the entry and the fix."""
    import json
    import math

    from generator.checked_io import read_text_input
    from generator.errors import InputError
    from generator.forward.analysis import HeadScore

    fix = (
        "give the folder a build wrote (site_dir in mkdocs.yml, site/ by default), after a build"
        " that ran to the end"
    )
    text = read_text_input(path, max_bytes=MAX_HEADS_BYTES, fix=fix)
    try:
        data = json.loads(text)
    except ValueError as error:
        raise InputError(f"not JSON ({error})", file=str(path), fix=fix) from None
    except RecursionError:  # [[[[...]]]]
        raise InputError("not JSON (nested too deeply)", file=str(path), fix=fix) from None

    def bad(entry: str, expected: str) -> InputError:
        return InputError(f"not {expected}", file=str(path), entry=entry, fix=fix)

    if not isinstance(data, dict):
        raise InputError("not a JSON object", file=str(path), fix=fix)
    for key in ("source", "model"):
        if not isinstance(data.get(key), str):
            raise bad(key, "a string")
    if not isinstance(data.get("heads"), list):
        raise bad("heads", "a list")
    heads = []
    for i, head in enumerate(data["heads"]):
        if not isinstance(head, dict):
            raise bad(f"heads[{i}]", "an object")
        for key in ("layer", "head"):
            value = head.get(key)
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
                raise bad(f"heads[{i}].{key}", "a whole number from 0")
        for key in SCORES:
            value = head.get(key)
            if value is None and key == "induction":
                continue  # the prompt repeats no token
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise bad(f"heads[{i}].{key}", "a finite number")
            if not math.isfinite(value):  # NaN or Infinity: JSON as Python writes it
                raise bad(f"heads[{i}].{key}", "a finite number")
        heads.append(HeadScore(**{k: head[k] for k in ("layer", "head", *SCORES)}))
    return data["source"], data["model"], heads


def train_command(args: argparse.Namespace) -> int:
    from generator.engine import forward
    from generator.forward.standin_training import probe_scores, probe_sequences, train_and_pin

    root = Path(args.root).resolve()
    s = train_and_pin(root, log=lambda m: print(m, file=sys.stderr))
    ids = probe_sequences(s.training, s.cfg.vocab_size)
    traces = [forward(s.weights, s.cfg, row) for row in ids]
    patterns = [
        np.stack([t.blocks[layer].attention["weights"] for t in traces])
        for layer in range(s.cfg.n_layer)
    ]
    scores = probe_scores(patterns, ids)
    print(f"wrote {s.path.relative_to(root)} ({s.path.stat().st_size:,} bytes) and its pin")
    print(
        f"final loss {s.record['final_loss']:.3f}; best heads on the probe sequences: "
        f"previous-token {scores['previous_token']:.2f}, induction {scores['induction']:.2f}"
    )
    print("check the page (make site) and the behaviour tests, then commit both files")
    return 0


def run_command(args: argparse.Namespace) -> int:
    from generator.forward.analysis import KINDS, strongest
    from generator.forward.pipeline import run
    from generator.render.code import visible
    from generator.settings import Settings, not_utf8

    settings = Settings.load(Path(args.root))
    if args.prompt is not None:
        if not args.prompt.strip():
            from generator.errors import InputError

            raise InputError(
                f"--prompt {args.prompt!r} is blank",
                entry="--prompt",
                fix="give the prompt some words, or leave --prompt out for the page's own prompt",
            )
        not_utf8(args.prompt, "--prompt")
        settings = dataclasses.replace(settings, forward_prompt=args.prompt)
    if args.download:
        settings = dataclasses.replace(settings, download_weights=True)
    fp = run(settings, weights=args.weights)
    print(f"model: {fp.cfg.label} ({fp.source.where})")
    # A token may hold an escape sequence or a bidi mark: shown, never sent to the terminal.
    print(f"tokens ({len(fp.tokens)}): {'|'.join(visible(t) for t in fp.tokens)}")
    for kind in KINDS:
        best = strongest(fp.heads, kind)
        shown = ", ".join(f"{h.label} {h.score(kind):.2f}" for h in best) or "–"
        print(f"{kind:>15}: {shown}")
    print("next token: " + ", ".join(f"{t!r} {100 * p:.1f}%" for t, p in fp.top_next[:5]))
    for r in fp.removals:  # the intact model first
        print(
            f"{'removed ' + r.label:>15}: right answer at repeats {100 * r.repeat_prob:.1f}%, "
            f"top guess {r.last_top!r} {100 * r.last_top_prob:.1f}%"
        )
    return 0
