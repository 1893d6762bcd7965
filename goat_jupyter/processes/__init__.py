"""Processes goat starts: spawning with ownership (cgroup + marker), the reaper watchdog, background
tasks, and RunCode's bubblewrap sandbox with its limits and seccomp filter."""
