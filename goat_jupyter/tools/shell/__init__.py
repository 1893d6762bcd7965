"""The shell tools: Bash, RunCode (Python in a subprocess), and TaskOutput/TaskStop for background tasks."""
