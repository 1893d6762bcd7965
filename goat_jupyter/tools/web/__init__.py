"""The web tools: WebFetch (a page as markdown, or answered by a small model) and WebSearch
(the clients: goat_jupyter/web/)."""
