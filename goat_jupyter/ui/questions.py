"""AskUserQuestion in the cell: a button per option (checkboxes + Submit for multi-select), plus Other."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from goat_jupyter.ui import style
from goat_jupyter.ui.comm_idle import Answer, Show, ipywidgets, on_click, record_bundle, show_until_answered

if TYPE_CHECKING:
    from goat_jupyter.tools.base import ToolOutput
    from goat_jupyter.tools.conversation.ask_user_question import AskUserQuestionInput, Question

OTHER_PLACEHOLDER = "Other answer…"
MULTI_SEPARATOR = ", "


class QuestionBlock:
    """One question's widgets; calls `done(answer)` once, then shows the answer in their place."""

    def __init__(self, question: Question, done: Callable[[str, str], None]) -> None:
        w = ipywidgets()
        self.question = question
        self._done = done
        self.error = w.HTML("")
        self.other = w.Text(placeholder=OTHER_PLACEHOLDER, continuous_update=False)
        self.checkboxes: list[Any] = []
        title = w.HTML(f"<b>{escape(question.header)}</b> · {escape(question.question)}")
        hints = w.HTML(options_html(question))
        if question.multiSelect:
            self.checkboxes = [
                w.Checkbox(value=False, description=o.label, indent=False, tooltip=o.description)
                for o in question.options
            ]
            submit = w.Button(description="Submit", button_style="primary")
            on_click(submit, self._submit_selection)
            rows = [w.VBox(self.checkboxes), hints, w.HBox([self.other, submit])]
        else:
            buttons = [self._option_button(o.label, o.description) for o in question.options]
            use_other = w.Button(description="Answer", tooltip="Answer with the text on the left")
            on_click(use_other, self._submit_other)
            rows = [w.HBox(buttons), hints, w.HBox([self.other, use_other])]
        self.box = w.VBox([title, *rows, self.error], layout=w.Layout(margin="4px 0"))

    def _option_button(self, label: str, description: str) -> Any:
        button = ipywidgets().Button(description=label, tooltip=description)
        on_click(button, lambda: self._answer(label))
        return button

    def _submit_selection(self) -> None:
        chosen = [str(box.description) for box in self.checkboxes if box.value]
        other = str(self.other.value).strip()
        if other:
            chosen.append(other)
        if not chosen:
            self.error.value = (
                f'<span style="color:{style.RED}">Tick at least one option or type an answer.</span>'
            )
            return
        self._answer(MULTI_SEPARATOR.join(chosen))

    def _submit_other(self) -> None:
        text = str(self.other.value).strip()
        if not text:
            self.error.value = f'<span style="color:{style.RED}">Type your answer first.</span>'
            return
        self._answer(text)

    def _answer(self, text: str) -> None:
        self.box.children = (ipywidgets().HTML(f"✓ <b>{escape(self.question.header)}</b>: {escape(text)}"),)
        self._done(self.question.question, text)


def options_html(question: Question) -> str:
    items = "".join(f"<li><b>{escape(o.label)}</b>: {escape(o.description)}</li>" for o in question.options)
    return f'<ul style="{style.NOTE};margin:2px 0">{items}</ul>'


class QuestionsPrompt:
    """All questions at once; `answer` resolves with {question: answer} when every one is answered."""

    def __init__(self, questions: Sequence[Question]) -> None:
        self.answer: Answer[dict[str, str]] = Answer()
        self._count = len(questions)
        self._answers: dict[str, str] = {}
        blocks = [QuestionBlock(q, self._on_answer) for q in questions]
        self.view = ipywidgets().VBox([b.box for b in blocks])

    def _on_answer(self, question: str, text: str) -> None:
        self._answers[question] = text
        if len(self._answers) == self._count:
            self.answer.set(dict(self._answers))


def answers_text(questions: Sequence[Question], answers: Mapping[str, str]) -> str:
    """What the model reads: each question with its answer (multi-select answers joined with ", ")."""
    lines = [f'- "{q.question}" → {answers.get(q.question, "(no answer)")}' for q in questions]
    return "The user answered your questions:\n" + "\n".join(lines) + "\nContinue with these answers in mind."


def answers_record(questions: Sequence[Question], answers: Mapping[str, str]) -> dict[str, str]:
    summary = "; ".join(f"{q.header}: {answers.get(q.question, '')}" for q in questions)
    return record_bundle("✓", style.GREEN, f"Answered by the user — {summary}")


async def ask_questions(args: AskUserQuestionInput, show: Show) -> ToolOutput:
    """Ask what is not already answered in `args.answers`, wait for every answer, return them all."""
    from goat_jupyter.tools.base import ToolOutput

    answers = dict(args.answers or {})
    pending = [q for q in args.questions if q.question not in answers]
    if pending:
        prompt = QuestionsPrompt(pending)
        cancelled = record_bundle("⊘", style.AMBER, "Questions cancelled (cell interrupted)")
        got = await show_until_answered(
            show,
            prompt.view,
            prompt.answer,
            lambda a: answers_record(pending, a),
            cancelled,
            "goat asks: " + " / ".join(q.question for q in pending),
        )
        answers.update(got)
    text = answers_text(args.questions, answers)
    shown = "\n".join(f"{q.question}\n  → {answers.get(q.question, '(no answer)')}" for q in args.questions)
    count = len(args.questions)
    summary = f"{count} question{'s' if count != 1 else ''} answered"
    return ToolOutput(text, metadata={"answers": answers}, summary=summary, display=shown)
