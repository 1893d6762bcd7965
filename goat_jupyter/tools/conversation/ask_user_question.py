"""AskUserQuestion: multiple-choice questions answered with buttons in the cell."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from goat_jupyter.tools.base import Tool, ToolContext, ToolInput, ToolOutput
from goat_jupyter.tools.context import required


class QuestionOption(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1, description="Short answer text shown on the button.")
    description: str = Field(description="What choosing this option means.")


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, description="The full question.")
    header: str = Field(
        max_length=30, description="A very short label for the question (max 12 chars ideally)."
    )
    options: list[QuestionOption] = Field(min_length=2, max_length=4)
    multiSelect: bool = Field(default=False, description="Allow several answers.")  # noqa: N815

    @model_validator(mode="after")
    def _unique_labels(self) -> Question:
        labels = [o.label for o in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError(f"option labels must be unique within a question: {labels}")
        return self


class AskUserQuestionInput(ToolInput):
    questions: list[Question] = Field(min_length=1, max_length=4, description="1 to 4 questions.")
    answers: dict[str, str] | None = Field(default=None, description="Answers already known, by question.")

    @model_validator(mode="after")
    def _unique_questions(self) -> AskUserQuestionInput:
        texts = [q.question for q in self.questions]
        if len(set(texts)) != len(texts):
            raise ValueError("question texts must be unique")
        return self


class AskUserQuestionTool(Tool[AskUserQuestionInput]):
    name = "AskUserQuestion"
    input_model = AskUserQuestionInput
    side_effect = "blocking"

    def title_for(self, args: AskUserQuestionInput) -> str:
        return "Ask: " + "; ".join(q.header for q in args.questions)

    async def run(self, args: AskUserQuestionInput, ctx: ToolContext) -> ToolOutput | str:
        ui = required(ctx.services.ui, "ui", self.name)
        return await ui.ask_questions(args, ctx)
