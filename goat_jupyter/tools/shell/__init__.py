"""The shell tools: Bash, RunCode (Python in a subprocess), and TaskOutput/TaskStop for the
background tasks they start (the processes themselves: goat_jupyter/processes/)."""
