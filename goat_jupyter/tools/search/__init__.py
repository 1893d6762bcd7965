"""The search tools: Glob (paths) and Grep (contents). Both run ripgrep (ripgrep.py, grep_backend.py)
and fall back to a pure-Python walker (grep_fallback.py, ignore_walk.py) where it is missing;
search_filter.py holds what they share."""
