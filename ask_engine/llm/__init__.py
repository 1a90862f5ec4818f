"""The OpenAI-compatible LLM generator (`generator`), the prompt it sends (`prompt`) and how its reply becomes a cited
Draft (`reply`). The grounding guard, not the model, decides which sentences reach the buyer."""

from __future__ import annotations

from ask_engine.llm.generator import OpenAICompatibleGenerator
from ask_engine.llm.prompt import Prompt, PromptPassage, build_prompt, fence
from ask_engine.llm.reply import ANSWER_SCHEMA, Reply, build_draft, is_action_claim, markdown_plain, parse_reply

__all__ = [
    "ANSWER_SCHEMA",
    "OpenAICompatibleGenerator",
    "Prompt",
    "PromptPassage",
    "Reply",
    "build_draft",
    "build_prompt",
    "fence",
    "is_action_claim",
    "markdown_plain",
    "parse_reply",
]
