"""The approval prompt in the cell: preview, four buttons, feedback, edit-arguments; a record after."""

from __future__ import annotations

import dataclasses
import json
import os
from html import escape
from pathlib import Path
from typing import Any

from goat_jupyter.live import cell_mark
from goat_jupyter.permissions.policy import ApprovalAnswer, ApprovalRequest, Choice
from goat_jupyter.text import loads_json, map_strings
from goat_jupyter.tools.redaction import cleaner
from goat_jupyter.ui import style
from goat_jupyter.ui.comm_idle import (
    Answer,
    Bundle,
    Show,
    WidgetView,
    ipywidgets,
    model_id,
    on_click,
    record_bundle,
    show_until_answered,
)
from goat_jupyter.ui.preview import Preview, arguments_block, build_preview
from goat_jupyter.ui.summary import relative

CHOICES: dict[Choice, str] = {
    "allow_once": "Allow once",
    "allow_session": "Allow for session",
    "always_allow": "Always allow",
    "deny": "Deny",
}
BUTTON_STYLES: dict[Choice, str] = {
    "allow_once": "success",
    "allow_session": "",
    "always_allow": "",
    "deny": "danger",
}
FEEDBACK_PLACEHOLDER = "Optional feedback for the model (sent with Deny)"
RISK_COLOR = {"low": style.GREY, "medium": style.AMBER, "high": style.AMBER, "critical": style.RED}


# Tools whose rules cover one exact piece of code (permissions/suggest.py), and what it is called.
CODE_SCOPES = {"RunCell": "cell source", "KernelInspect": "expression"}


def _rules_text(rules: tuple[str, ...]) -> str:
    if len(rules) == 1:
        return f"the rule {_short(rules[0])}"
    return "the rules " + ", ".join(_short(rule) for rule in rules)


def _short(rule: str) -> str:
    """A rule as it fits in a line (a RunCell rule holds a whole cell's source)."""
    flat = " ".join(rule.split())
    return flat if len(flat) <= 120 else flat[:100] + " …" + flat[-10:]


def who() -> str:
    return os.environ.get("JUPYTERHUB_USER") or "the user"


PREVIEW_LABEL = {
    "Bash": "command",
    "Edit": "diff",
    "Write": "diff",
    "NotebookEdit": "cell change",
    "RunCell": "cell source",
}


def subject(request: ApprovalRequest) -> str:
    """The call in one phrase, its tool named once: `Edit analysis.py`, `Bash: ls -la`."""
    if request.title.split(" ", 1)[0] == request.tool_name:
        return request.title
    return f"{request.tool_name}: {request.title}"


def answer_record(request: ApprovalRequest, answer: ApprovalAnswer, preview: Preview | None = None) -> Bundle:
    """What was decided, by whom, about which call, with what it was decided on kept below."""
    called = subject(request)
    shown = preview or Preview("", "")
    details = {
        "details_html": shown.html,
        "details_text": shown.text,
        "summary": PREVIEW_LABEL.get(request.tool_name, "what was asked"),
    }
    if answer.choice == "deny":
        feedback = f" — feedback: {cleaner()(answer.feedback)}" if answer.feedback else ""
        return record_bundle("✗", style.RED, f"Denied by {who()}: {called}{feedback}", **details)
    if answer.updated_input is not None:
        edited = cleaner()(json.dumps(answer.updated_input, ensure_ascii=False, indent=2))
        return record_bundle(
            "✎",
            style.GREEN,
            f"Allowed once with edited arguments by {who()}: {called}",
            details_html=f'<pre style="{style.PRE}">{escape(edited)}</pre>',
            details_text=edited,
            summary="edited arguments",
        )
    rule = _rules_text(request.rules)
    outcome = {
        "allow_once": "Allowed once",
        "allow_session": f"Allowed for this session ({rule})",
        "always_allow": f"Always allowed ({rule} saved to .goat/settings.json)",
    }[answer.choice]
    return record_bundle("✓", style.GREEN, f"{outcome} by {who()}: {called}", **details)


def cancelled_record(request: ApprovalRequest) -> Bundle:
    return record_bundle("⊘", style.AMBER, f"Approval cancelled (cell interrupted): {subject(request)}")


class ApprovalPrompt:
    """The widget for one approval; `answer` resolves from its button callbacks (any thread)."""

    def __init__(self, request: ApprovalRequest, preview: str, fallback: str = "") -> None:
        w = ipywidgets()
        self.request = request
        self.title_shown_below = escape(request.title) in preview  # a command the preview shows
        self.answer: Answer[ApprovalAnswer] = Answer()
        self.buttons = {choice: self._choice_button(choice) for choice in self._choices()}
        self.feedback = w.Text(
            placeholder=FEEDBACK_PLACEHOLDER, continuous_update=False, layout=w.Layout(width="60%")
        )
        self.editor = w.Textarea(
            value=json.dumps(request.args, indent=2, ensure_ascii=False),
            continuous_update=False,
            rows=min(20, 2 + json.dumps(request.args, indent=2).count("\n")),
            layout=w.Layout(width="90%"),
        )
        self.edit_error = w.HTML("")
        self.run_edited = w.Button(description="Run edited", button_style="warning")
        on_click(self.run_edited, self._submit_edited)
        self.edit_toggle = w.Button(description="Edit arguments", tooltip="Change the arguments, then run")
        on_click(self.edit_toggle, self._toggle_editor)
        self.editor_box = w.VBox(
            [self.editor, self.run_edited, self.edit_error], layout=w.Layout(display="none")
        )
        self.fallback_html = self._header_html() + fallback
        self.view = w.VBox(
            [
                w.HTML(self._header_html() + preview),
                w.HBox(list(self.buttons.values()), layout=w.Layout(flex_flow="row wrap")),
                w.HTML(self._scopes_html()),
                self.feedback,
                self.edit_toggle,
                self.editor_box,
            ]
        )

    def _choices(self) -> list[Choice]:
        """All four, except the rule-saving ones when there is no rule that could cover the call."""
        if not self.request.rules:
            return ["allow_once", "deny"]
        return list(CHOICES)

    def _choice_button(self, choice: Choice) -> Any:
        rule = _rules_text(self.request.rules)
        tooltips: dict[Choice, str] = {
            "allow_once": "Run this call once",
            "allow_session": f"Allow calls matching {rule} for the rest of this goat session",
            "always_allow": f"Save {rule} to .goat/settings.json",
            "deny": "Do not run it; the model gets your feedback",
        }
        button = ipywidgets().Button(
            description=CHOICES[choice], button_style=BUTTON_STYLES[choice], tooltip=tooltips[choice]
        )
        on_click(button, lambda: self._choose(choice))
        return button

    def _scopes_html(self) -> str:
        """What the rule-saving buttons save, in words next to them (not only in a tooltip)."""
        rules = self.request.rules
        if not rules:
            return ""
        exact = CODE_SCOPES.get(self.request.tool_name)
        if exact is not None:
            text = (
                f"Allow for session: this exact {exact} only, until the kernel restarts; any other code "
                f"still asks. Always allow: saves this exact {exact} to .goat/settings.json in this project."
            )
            return f'<div style="{style.NOTE};line-height:1.5">{escape(text)}</div>'
        code = ", ".join(f"<code>{escape(rule)}</code>" for rule in rules)
        return (
            f'<div style="{style.NOTE};line-height:1.5">Allow for session: calls matching {code} until the kernel restarts. '
            f"Always allow: saves {code} to .goat/settings.json in this project.</div>"
        )

    def _header_html(self) -> str:
        color = RISK_COLOR.get(self.request.risk, style.AMBER)
        reason = (
            f'<div style="{style.NOTE}">{escape(self.request.reason)}</div>' if self.request.reason else ""
        )
        title = "" if self.title_shown_below else f": {escape(self.request.title)}"
        return (
            f'<div style="border-left:4px solid {color};padding-left:6px">'
            f"<b>⚠ {escape(self.request.tool_name)}</b> wants permission{title}"
            f"{reason}</div>"
        )

    def _choose(self, choice: Choice) -> None:
        feedback = str(self.feedback.value).strip() if choice == "deny" else ""
        self.answer.set(ApprovalAnswer(choice, feedback or None))

    def _toggle_editor(self) -> None:
        shown = self.editor_box.layout.display != "none"
        self.editor_box.layout.display = "none" if shown else "flex"

    def _submit_edited(self) -> None:
        try:
            value = loads_json(str(self.editor.value))
        except ValueError as exc:
            self._show_edit_error(f"Not valid JSON: {exc}. Nothing was run.")
            return
        if not isinstance(value, dict):
            self._show_edit_error("The arguments must be a JSON object. Nothing was run.")
            return
        edited: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        self.answer.set(ApprovalAnswer("allow_once", updated_input=edited))

    def _show_edit_error(self, text: str) -> None:
        self.edit_error.value = f'<span style="color:{style.RED}">{escape(text)}</span>'


def for_people(request: ApprovalRequest, preview: Preview, base: str) -> tuple[ApprovalRequest, Preview]:
    """The prompt's and the record's words: workspace-relative paths, no known key anywhere (titles,
    reasons, arguments, rules, the preview of a file's lines); the call itself keeps its own."""
    clean = cleaner()

    def words(text: str) -> str:
        return clean(relative(text, base))

    shown = dataclasses.replace(
        request,
        title=words(request.title),
        reason=words(request.reason),
        args=map_strings(request.args, clean),
        suggested_rule=clean(request.suggested_rule) if request.suggested_rule else None,
        suggested_rules=tuple(map(clean, request.suggested_rules)),
    )
    mark = preview.mark.cleaned(words) if preview.mark else None
    return shown, Preview(words(preview.html), words(preview.text), mark)


async def ask_approval(
    request: ApprovalRequest, show: Show, cwd: Path, notebook: Any = None
) -> ApprovalAnswer:
    """Show the prompt for one call and wait (no timeout) for a button; the stop button cancels it."""
    preview = await build_preview(request.tool_name, request.args, cwd, notebook)
    request, preview = for_people(request, preview, str(cwd))
    prompt = ApprovalPrompt(
        request, preview.html + relative(arguments_block(request.args), str(cwd)), preview.html
    )
    waiting = f"goat asks permission for {subject(request)}"
    try:
        if preview.mark is not None:
            await cell_mark.show(notebook, preview.mark, model_id(prompt.view))
        return await show_until_answered(
            show,
            WidgetView(prompt.view, waiting, html=prompt.fallback_html),
            prompt.answer,
            lambda answer: answer_record(request, answer, preview),
            cancelled_record(request),
            waiting,
        )
    finally:
        if preview.mark is not None:
            await cell_mark.hide(notebook, preview.mark, model_id(prompt.view))
