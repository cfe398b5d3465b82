"""`itm numbers`: print the parameter and FLOP tables of a model size, for writers to cite.

itm numbers --model gpt2-xl --context 1024
itm numbers --model gpt2 --component attention --format tex
itm numbers --model mistral-7b-v0.1 --context 4096
"""

from __future__ import annotations

import argparse

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
    print(tables_text(cfg, n_ctx, args.component, args.format))
    return 0
