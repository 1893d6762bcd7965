"""`%goat autoload on|off`: an entry in the user's IPython kernel configuration that loads goat in
every new kernel. `off` removes exactly the bytes `on` added (or the file `on` created)."""

from __future__ import annotations

from pathlib import Path

_END = "# <<< goat_jupyter autoload <<<\n"
_LINE = 'c.InteractiveShellApp.extensions.append("goat_jupyter")\n'
# Appended to an existing file; the leading newline keeps a last line without one intact.
APPENDED = f"\n# >>> goat_jupyter autoload (remove with %goat autoload off) >>>\n{_LINE}{_END}"
# The whole file when `on` had to create it: `off` deletes the file again.
CREATED = f"# >>> goat_jupyter autoload (this file was created by %goat autoload on) >>>\n{_LINE}{_END}"


def ipython_dir() -> Path:
    """IPython's configuration folder, as IPython finds it (IPYTHONDIR, else ~/.ipython)."""
    from IPython.paths import get_ipython_dir

    return Path(get_ipython_dir())


def kernel_config_path(profile_dir: Path | None = None) -> Path:
    return (profile_dir or ipython_dir() / "profile_default") / "ipython_kernel_config.py"


def _read(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _write(path: Path, text: str) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def is_enabled(path: Path | None = None) -> bool:
    text = _read(path or kernel_config_path())
    return text is not None and (text.startswith(CREATED) or APPENDED in text)


def enable(path: Path | None = None) -> str:
    """Add the entry (idempotent); returns what was done, in words."""
    path = path or kernel_config_path()
    if is_enabled(path):
        return f"Autoload is already on ({path})."
    text = _read(path)
    if text is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, CREATED)
    else:
        _write(path, text + APPENDED)
    return f"Autoload is on: new kernels load goat at start ({path})."


def disable(path: Path | None = None) -> str:
    """Remove exactly what `enable` added; leave a file edited in between alone (and say so)."""
    path = path or kernel_config_path()
    text = _read(path)
    if text is None or not is_enabled(path):
        return f"Autoload is already off ({path})."
    if text == CREATED:
        path.unlink()
    elif text.startswith(CREATED):
        _write(path, text[len(CREATED) :])
    else:
        cut = text.rindex(APPENDED)
        _write(path, text[:cut] + text[cut + len(APPENDED) :])
    return f"Autoload is off: new kernels need %load_ext goat_jupyter again ({path})."


def command(args: list[str], path: Path | None = None) -> str:
    """`%goat autoload [on|off]`."""
    action = args[0].lower() if args else "status"
    if action == "on":
        return enable(path)
    if action == "off":
        return disable(path)
    state = "on" if is_enabled(path) else "off"
    return f"Autoload is {state} ({path or kernel_config_path()}). Use %goat autoload on|off."
