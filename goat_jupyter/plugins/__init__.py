"""What users register from Python (custom tools, an approver), kept apart from the public API
module (goat_jupyter.api) so the runtime can read it without importing the API. No IPython."""
