"""Text from the model, a recording or a notebook made safe where it enters a display: Markdown that
renders no HTML of its own (markdown.py) and terminal text without control sequences (controls.py)."""
