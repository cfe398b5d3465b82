"""`itm numbers`: print the parameter and FLOP tables of a model size, for writers to cite.

itm numbers --model gpt2-xl --context 1024
itm numbers --model gpt2 --component attention --format tex
itm numbers --model mistral-7b-v0.1 --context 4096
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator import accounting as acc
from generator.config import CONFIGS, ModelConfig
from generator.errors import InputError
from generator.models import FAMILIES, get_family, get_size
from generator.render.number_tables import tables_text


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "numbers",
        help="print parameter and FLOP tables for a model size",
        description="Exact parameter and forward-FLOP accounting, per component, for one model.",
    )
    every = [
        *CONFIGS,
        *(size for f in FAMILIES.values() for size in f.sizes if size not in CONFIGS),
    ]
    parser.add_argument("--model", default="gpt2", help=f"one of: {', '.join(every)}")
    parser.add_argument(
        "--context", type=int, default=None, help="sequence length T for FLOPs (default: n_ctx)"
    )
    parser.add_argument(
        "--component",
        choices=list(dict.fromkeys(c for f in FAMILIES.values() for c in f.components)),
        help="print the rows of this component only",
    )
    parser.add_argument("--format", choices=("text", "tex"), default="text")
    parser.add_argument("--root", default=".", help="the project folder, for its pins (default: .)")
    parser.set_defaults(func=run)


def model_names() -> list[str]:
    """GPT-2's sizes and the toy, then every other family's sizes."""
    return [*CONFIGS, *(s for f in FAMILIES.values() for s in f.sizes if s not in CONFIGS)]


def model(name: str) -> ModelConfig:
    if name in CONFIGS:
        return CONFIGS[name]
    if name in model_names():
        return get_size(name)
    raise InputError(
        f"unknown model {name!r}", entry=name, fix=f"use one of: {', '.join(model_names())}"
    )


def run(args: argparse.Namespace) -> int:
    cfg = model(args.model)
    if args.component and args.component not in get_family(cfg.family).components:
        acc.param_rows(cfg, args.component)  # an InputError listing the family's components
    n_ctx = cfg.n_ctx if args.context is None else args.context
    acc.flop_rows(cfg, "attention", n_ctx)  # an unusable context fails before anything prints
    unchecked = check_sizes(cfg, Path(args.root))
    print(tables_text(cfg, n_ctx, args.component, args.format))
    if unchecked:
        print(f"itm numbers: {cfg.name}'s size is not checked against its pinned lines: {unchecked}",
              file=sys.stderr)  # fmt: skip
    return 0


def check_sizes(cfg: ModelConfig, root: Path) -> str | None:
    """The family's sizes against the pinned config lines they are read from, as every build
    checks them (InputError naming the field, as the build does), reading the lines from the
    cache or a local clone only, never the network; None once checked, else why not. A size row
    edited to what the pinned lines do not say (Mistral with attention_bias) printed its numbers."""
    family = get_family(cfg.family)
    if family.check_pinned is None:
        return None
    from generator.inputs import LOCK_FILE
    from generator.settings import Settings
    from generator.sources.lock import load_lock
    from generator.sources.resolve import resolve_excerpts

    if not (root / LOCK_FILE).is_file():
        return f"no {LOCK_FILE} in {root} (run it in the project folder, or pass --root)"
    settings = Settings.load(root)
    lock = load_lock(root / LOCK_FILE, root=root)
    try:
        excerpts = resolve_excerpts(lock, settings, offline=True)
    except InputError:
        return "they are not in the cache (a build fetches them: make site)"
    family.check_pinned({i: e.text for i, e in excerpts.items()}, file=LOCK_FILE)
    return None
