"""The agent: the loop, the model client (the only litellm importer), prompts, session and context
management. Imports tools and below; never IPython."""
