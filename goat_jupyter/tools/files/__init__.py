"""The file tools: Read, Write, Edit, LS, Delete and Move, with Edit's matcher (edit_match.py), the
omission-placeholder check of Write and Edit (placeholders.py), Read's line window (text_window.py)
and its images and PDFs (read_formats.py).

Other families and layers use the names below; the other helpers are this family's own
(tests/test_architecture.py)."""

from goat_jupyter.tools.files.read_formats import ShownImage, prepare_image

__all__ = ["ShownImage", "prepare_image"]
