"""The web tools: WebFetch (a page as markdown) and WebSearch."""
