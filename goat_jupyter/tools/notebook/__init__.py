"""The notebook tools: NotebookEdit, RunCell and KernelInspect, with the live-notebook bridge, the notebook view the model reads, cell locks and provenance."""
