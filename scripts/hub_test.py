"""A real JupyterHub on 127.0.0.1 with two real unix users (run as root by scripts/hub-test).

DummyAuthenticator, LocalProcessSpawner, configurable-http-proxy from npm. For each user: goat's
labextension and server extension load in the single-user server, `%%goat` runs against a replay
server, the settings panel writes that user's own ~/.goat, and neither user can read the other's keys
or sessions. Checks marked [managed] need the managed-settings layer (GOAT_MANAGED_DIR)."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from goat_jupyter.replay import ReplayServer  # noqa: E402
from tests.agent_helpers import text_turn  # noqa: E402
from tests.remote_kernel import RemoteKernel, open_notebook  # noqa: E402
from tests.server_harness import JupyterServer, free_port  # noqa: E402

USERS = ("goathuba", "goathubb")
TOKEN = "goat-hub-test-service-token"
SECRET = {"goathuba": "sk-secret-of-user-a-1234567890", "goathubb": "sk-secret-of-user-b-0987654321"}
DAILY = 0.002  # max_cost_per_user_per_day in the managed file: one "spend" run ($0.0036) crosses it
RESULTS: list[tuple[str, bool, str]] = []


def check(name: str, ok: bool, detail: str = "") -> None:
    RESULTS.append((name, ok, detail))
    print(
        f"{'PASS' if ok else 'FAIL'}  {name}" + (f"\n      {detail[:600]}" if not ok and detail else ""),
        flush=True,
    )


def chp_command() -> str:
    found = shutil.which("configurable-http-proxy")
    cached = REPO.parent.parent / ".cache" / "chp" / "node_modules" / ".bin" / "configurable-http-proxy"
    local = Path(os.environ.get("GOAT_CHP", cached))
    if found or local.exists():
        return found or str(local)
    raise SystemExit(
        "configurable-http-proxy not found: npm install --prefix <dir> configurable-http-proxy, set GOAT_CHP"
    )


@contextmanager
def unix_users() -> Iterator[None]:
    created = [u for u in USERS if not _exists(u)]
    for user in created:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", user], check=True)
    try:
        yield
    finally:
        for user in created:
            subprocess.run(["userdel", "--remove", user], check=False, stderr=subprocess.DEVNULL)


def _exists(user: str) -> bool:
    try:
        pwd.getpwnam(user)
    except KeyError:
        return False
    return True


@contextmanager
def python_reachable() -> Iterator[None]:
    """The users run this Python: folders above it that others cannot enter get o+x for the run."""
    changed: list[tuple[Path, int]] = []
    for folder in [*Path(sys.executable).resolve().parents, *REPO.parents]:
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            changed.append((folder, mode))
            folder.chmod(mode | stat.S_IXOTH)
    try:
        yield
    finally:
        for folder, mode in changed:
            folder.chmod(stat.S_IMODE(mode))


def hub_config(tmp: Path, port: int, replay: ReplayServer, managed: Path) -> Path:
    env = {
        "PYTHONPATH": str(REPO),
        "OPENAI_API_BASE": replay.url,  # the admin's shared endpoint (a LiteLLM proxy in production)
        "OPENAI_API_KEY": "shared-by-the-admin",
        "GOAT_MODEL": "openai/gpt-4o-mini",
        "GOAT_PERMISSION_MODE": "bypassPermissions",
        "GOAT_MANAGED_DIR": str(managed),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    config = f"""
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {free_port()}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.command = [{chp_command()!r}]
c.JupyterHub.db_url = "sqlite:///{tmp}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{tmp}/cookie_secret"
c.JupyterHub.pid_file = "{tmp}/hub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = "goat-hub-password"
c.Authenticator.allowed_users = {set(USERS)!r}
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [{sys.executable!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {env!r}
c.JupyterHub.services = [{{"name": "goat-test", "api_token": {TOKEN!r}}}]
c.JupyterHub.load_roles = [{{"name": "goat-test", "services": ["goat-test"],
    "scopes": ["admin:users", "admin:servers", "access:servers", "list:users", "read:users"]}}]
"""
    path = tmp / "jupyterhub_config.py"
    path.write_text(config)
    return path


def stop_servers(hub: str) -> None:
    """Stop each user's server through the hub (it ends that server's kernels) and wait for it."""
    for user in USERS:
        with suppress(OSError):
            hub_request(f"{hub}/hub/api/users/{user}/server", "DELETE")
    for user in USERS:
        with suppress(OSError, TimeoutError):
            wait(f"{user}'s server to stop", lambda u=user: _stopped(hub, u), 60)


def _stopped(hub: str, user: str) -> bool:
    return not json.loads(hub_request(f"{hub}/hub/api/users/{user}")[1]).get("servers")


def hub_request(url: str, method: str = "GET", body: object = None) -> tuple[int, str]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Authorization": f"token {TOKEN}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def wait(what: str, predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with suppress(OSError):
            if predicate():
                return
        time.sleep(0.5)
    raise TimeoutError(f"{what} not ready after {timeout:.0f} s")


def start_server(hub: str, user: str) -> JupyterServer:
    status, text = hub_request(f"{hub}/hub/api/users/{user}/server", "POST")
    assert status in (201, 202, 400), (status, text)

    def ready() -> bool:
        info = json.loads(hub_request(f"{hub}/hub/api/users/{user}")[1])
        return bool(info.get("servers", {}).get("", {}).get("ready"))

    wait(f"{user}'s server", ready, 150)
    home = Path(pwd.getpwnam(user).pw_dir)
    return JupyterServer(f"{hub}/user/{user}", home, home, {}, home / "none.log")


def as_user(user: str, code: str) -> str:
    """Run Python as `user` (what that user, or that user's agent, could do); its stdout."""
    done = subprocess.run(["runuser", "-u", user, "--", sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    return done.stdout + done.stderr


READ_ALL = """
import os, sys
for top, _, files in os.walk(sys.argv[1] if len(sys.argv) > 1 else {root!r}):
    for name in files:
        path = os.path.join(top, name)
        try:
            print("READABLE", path, open(path, "rb").read()[:200])
        except OSError as exc:
            pass
"""


def check_server_and_panel(server: JupyterServer, user: str) -> None:
    check(
        f"{user}: single-user server answers /api/status",
        server.request("GET", "/api/status", token=TOKEN).status == 200,
    )
    page = hub_request(f"{server.url}/lab")[1]
    check(
        f"{user}: labextension goat-jupyter is in JupyterLab's page config",
        "goat-jupyter" in page,
        page[:300],
    )
    check(
        f"{user}: server extension /goat/settings answers",
        server.request("GET", "/goat/settings", token=TOKEN).status == 200,
    )
    saved = server.request("PUT", "/goat/settings", {"model": "openai/gpt-4o-mini"}, token=TOKEN)
    check(f"{user}: settings panel saves", saved.status == 200, saved.raw)
    keys = server.request("PUT", "/goat/keys", {"set": {"ANTHROPIC_API_KEY": SECRET[user]}}, token=TOKEN)
    check(
        f"{user}: settings panel stores a key", keys.status == 200 and SECRET[user] not in keys.raw, keys.raw
    )
    uid = pwd.getpwnam(user).pw_uid
    for name in ("settings.json", "keys.json"):
        path = server.home / ".goat" / name
        info = path.stat() if path.exists() else None
        ok = info is not None and info.st_uid == uid and stat.S_IMODE(info.st_mode) & 0o077 == 0
        check(f"{user}: ~/.goat/{name} is the user's own, not readable by others", ok, str(info))
    saved_model = json.loads((server.home / ".goat" / "settings.json").read_text()).get("model")
    check(
        f"{user}: the panel wrote this user's own settings file",
        saved_model == "openai/gpt-4o-mini",
        str(saved_model),
    )


async def run_goat(kernel: RemoteKernel, prompt: str) -> str:
    result = await kernel.execute(f"%%goat --new\n{prompt}", timeout=150)
    return result.text("text/plain") + result.text("text/markdown") + str(result.error or "")


async def check_kernels(servers: dict[str, JupyterServer]) -> None:
    kernels = {user: await open_notebook(server, "nb.ipynb", TOKEN) for user, server in servers.items()}
    for user, kernel in kernels.items():
        loaded = await kernel.execute("%load_ext goat_jupyter", timeout=120)
        check(f"{user}: %load_ext goat_jupyter in a kernel spawned by the hub", loaded.status == "ok")
        shown = await run_goat(kernel, f"[hello-{user}] say hello")
        check(f"{user}: %%goat runs against the scripted model", f"Hello {user}" in shown, shown)
    a, b = USERS
    for me, other in ((a, b), (b, a)):
        other_home = servers[other].home
        peek = await kernels[me].execute(f"print(open({str(other_home / '.goat' / 'keys.json')!r}).read())")
        check(
            f"{me}'s kernel cannot read {other}'s keys",
            SECRET[other] not in peek.stdout and peek.error is not None,
            peek.stdout,
        )
        leaked = as_user(me, READ_ALL.format(root=str(other_home / ".goat")))
        check(
            f"{me} (as a unix user) can read no file under {other}'s ~/.goat (keys, sessions)",
            "READABLE" not in leaked,
            leaked,
        )
        mine = await kernels[me].execute("import os; print(os.environ.get('ANTHROPIC_API_KEY', '-'))")
        own = SECRET[me] in mine.stdout and SECRET[other] not in mine.stdout
        check(f"{me}'s kernel sees its own key from the panel, not the other's", own, mine.stdout)
    check_the_detector(servers)
    sessions = [p for u in USERS for p in (servers[u].home / ".goat" / "sessions").glob("*")]
    check("each %%goat run left a session file in its user's home", len(sessions) >= 2, str(sessions))
    await check_managed(kernels)
    for kernel in kernels.values():
        kernel.close()


def check_the_detector(servers: dict[str, JupyterServer]) -> None:
    """The cross-user check must fail when keys are readable: open one store up and see it caught."""
    a, b = USERS
    store = servers[a].home / ".goat" / "keys.json"
    modes = {path: stat.S_IMODE(path.stat().st_mode) for path in (store, store.parent)}
    store.chmod(0o644)
    store.parent.chmod(0o755)
    try:
        leaked = as_user(b, READ_ALL.format(root=str(store.parent)))
        check(f"the check catches {a}'s keys when they are readable (0644)", SECRET[a] in leaked, leaked)
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


async def check_managed(kernels: dict[str, RemoteKernel]) -> None:
    a, b = USERS
    for user, kernel in kernels.items():
        status = await kernel.execute("%goat status")
        text = status.stdout + status.text()
        check(
            f"[managed] {user}: %goat status lists the managed policy",
            "managed" in text.lower() and "Bash" in text,
            text,
        )
        refused = await kernel.execute("%goat config output_style=default")
        shown = refused.stdout + refused.text()
        check(
            f"[managed] {user}: a managed key cannot be changed with %goat config",
            "managed" in shown.lower(),
            shown,
        )
    first = await run_goat(kernels[a], f"[spend-{a}] spend")
    stopped = await run_goat(kernels[a], f"[over-{a}] again")
    check(
        f"[managed] {a}: the per-user daily budget stops the next run",
        "max_cost_per_user_per_day" in stopped,
        first + stopped,
    )
    other = await run_goat(kernels[b], f"[free-{b}] my turn")
    check(
        f"[managed] {b}: {a}'s spending does not stop {b}",
        "Answer for" in other and "max_cost_per_user_per_day" not in other,
        other,
    )


def turns() -> list[dict[str, object]]:
    a, b = USERS
    small = {"usage": {"prompt_tokens": 100, "completion_tokens": 10}}  # $0.00002 at gpt-4o-mini prices
    big = {"usage": {"prompt_tokens": 20000, "completion_tokens": 1000}}  # $0.0036
    return [
        *[text_turn(f"Hello {u}.", match=f"[hello-{u}]", **small) for u in USERS],
        text_turn("Spent.", match=f"[spend-{a}]", **big),
        text_turn("Answer for a again.", match=f"[over-{a}]", **small),
        text_turn(f"Answer for {b}.", match=f"[free-{b}]", **small),
    ]


def main() -> int:
    if os.geteuid() != 0:
        print("scripts/hub-test creates unix users: run it as root (in a container or CI machine).")
        return 2
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="goat-hub-"))
    tmp.chmod(0o755)
    managed = tmp / "managed"
    managed.mkdir()
    policy = {"disabled_tools": ["Bash"], "output_style": "explain", "max_cost_per_user_per_day": DAILY}
    (managed / "managed-settings.json").write_text(json.dumps(policy))
    port = free_port()
    hub = f"http://127.0.0.1:{port}"
    with ReplayServer(turns()) as replay, unix_users(), python_reachable():
        config = hub_config(tmp, port, replay, managed)
        with (tmp / "hub.log").open("w") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "jupyterhub", "-f", str(config)],
                cwd=tmp,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            wait("the hub", lambda: hub_request(f"{hub}/hub/api/")[0] == 200, 90)
            print(f"hub up after {time.monotonic() - started:.1f} s", flush=True)
            servers = {user: start_server(hub, user) for user in USERS}
            print(f"both single-user servers up after {time.monotonic() - started:.1f} s", flush=True)
            for user, server in servers.items():
                check_server_and_panel(server, user)
            asyncio.run(asyncio.wait_for(check_kernels(servers), 500))
        except Exception as exc:  # report, then the hub log's tail
            check("the run finished", False, f"{type(exc).__name__}: {exc}")
            print((tmp / "hub.log").read_text()[-3000:])
        finally:
            stop_servers(hub)
            process.terminate()
            with suppress(subprocess.TimeoutExpired):
                process.wait(30)
            if process.poll() is None:
                process.kill()
    failed = [name for name, ok, _ in RESULTS if not ok]
    print(
        f"\n{len(RESULTS) - len(failed)} passed, {len(failed)} failed in {time.monotonic() - started:.0f} s"
    )
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
