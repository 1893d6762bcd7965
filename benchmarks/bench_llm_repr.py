"""Tokens the model reads for the same data questions with goat's summarisers vs without them.

Each question's object is put in front of a scripted model (the replay server, over real HTTP via
litellm) as the tool result a cell run would give: with the summarisers (`represent`, what
KernelInspect and RunCell send now) and without (the object's text/plain repr, cut at RunCell's old
30,000-character bound). Prompt tokens are counted with the replay server's tokenizer; prints
per-question tokens, whether the facts the question needs are in the result, and the ratio. Also
prints what offering the summary as text/llm+plain adds to a saved DataFrame output.
Run: python benchmarks/bench_llm_repr.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # runnable from a checkout, uninstalled

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch
import litellm
import numpy as np
import pandas as pd

from goat_jupyter.replay import ReplayServer
from goat_jupyter.replay.tokens import prompt_tokens
from goat_jupyter.represent import represent
from goat_jupyter.text import cut_middle

OLD_BOUND = 30_000


def questions() -> list[tuple[str, Any, list[str]]]:
    """(question, object, facts the answer needs) — the facts are looked for in what the model reads."""
    rng = np.random.default_rng(0)
    sales = pd.DataFrame({f"m{i}": rng.random(5_000) for i in range(28)})
    sales["region"] = rng.choice(["North", "South", "West"], 5_000)
    sales["units"] = rng.integers(0, 100, 5_000)
    sales.loc[::9, "m3"] = np.nan
    wide = pd.DataFrame(rng.random((200, 1_700)), columns=[f"f{i}" for i in range(1_700)])
    wide.loc[0, "f1500"] = np.nan
    huge = rng.random((5_000, 5_000))
    return [
        ("Which column has missing values, and how many?", sales, ["m3", "556 null"]),
        ("What is the mean of units?", sales, [f"mean {sales['units'].mean():.4g}"]),
        ("Which region is most common?", sales, ["top: '"]),
        ("Which of the 1,700 features has a missing value?", wide, ["f1500 1"]),
        ("What are the min and max of the array?", huge, ["min ", "max 1"]),
    ]


def tokens(server: ReplayServer, question: str, result: str) -> int:
    messages = [
        {"role": "user", "content": question},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "KernelInspect", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]
    litellm.completion(model="openai/gpt-4o-mini", messages=messages, api_base=server.url, api_key="x")
    return prompt_tokens(server.requests[-1])


def main() -> None:
    asked = questions()
    with ReplayServer([{"text": "ok"}] * (2 * len(asked))) as server:
        totals = [0, 0]
        for question, value, facts in asked:
            ours, theirs = represent(value), cut_middle(repr(value), OLD_BOUND)
            counts = [tokens(server, question, ours), tokens(server, question, theirs)]
            found = [all(f in text for f in facts) for text in (ours, theirs)]
            totals = [totals[0] + counts[0], totals[1] + counts[1]]
            print(
                f"{question[:50]:<52} with {counts[0]:>6} tok facts={found[0]!s:<5}  without {counts[1]:>6} tok facts={found[1]}"
            )
        print(
            f"total: with summarisers {totals[0]} tokens, without {totals[1]}; ratio {totals[0] / totals[1]:.2f}x"
        )
    frame = questions()[0][1]
    html, summary = frame._repr_html_() or "", represent(frame)
    saved = len(json.dumps({"text/html": html, "text/plain": repr(frame)}))
    print(
        f"text/llm+plain on a 5,000 x 30 DataFrame output: +{len(summary):,} characters on {saved:,} ({len(summary) / saved:.0%})"
    )


if __name__ == "__main__":
    main()
