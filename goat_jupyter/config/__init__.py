"""Where goat's configuration comes from besides its own settings files: Claude Code's files, the
provider key store, and the IPython kernel autoload entry."""
