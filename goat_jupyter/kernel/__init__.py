"""Everything that runs inside IPython: %load_ext, the %%goat / %goat magics and subcommands, the
per-kernel runtime that wires agent, tools, UI and services together, and kernel inspection."""
