"""Browser-test harness: a real JupyterLab server and headless Chromium via Playwright.

Fixtures:
  chromium_path  the system Chromium ($JAXDBG_CHROMIUM or /usr/bin/chromium); skips if absent
  lab_server     session-wide `jupyter lab` from this venv, on a free port with a random token
  notebook_server  the same for Notebook 7 (`jupyter notebook`); the helpers work on both
  server         lab_server, then notebook_server (parametrized): a flow for both
  browser        session-wide headless Chromium (Playwright sync API)
  page           per test: the loaded Lab page the last test handed on (KeptLabPage), else a
                 new page in a fresh browser context; kernels are shut down afterwards. A
                 test marked `fresh_page` always gets a new page of its own
  lab_page       the same, for a test of JupyterLab alone

Helpers (import them with `from support.lab_helpers import ...`):
  open_notebook(page, server, name, cells), run_cell(page, i), run_all_cells(page),
  cell(page, i), cell_output_text(page, i), cell_outputs(page, i),
  wait_for_output_text(page, i, text), save_screenshot(page, name); for the debugger
  panel live_panel(page, i), type_command(panel, line), wait_log(page, panel, regex),
  wait_heading(page, panel, regex)

Every test in this folder is marked `browser`. On failure, a screenshot and the browser
console go to test-artifacts/; the server logs are test-artifacts/jupyterlab-server[-gwN].log
and notebook7-server[-gwN].log (one server of each per pytest worker).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # so `import support.lab_helpers` works under any import mode
    sys.path.insert(0, str(HERE.parent))

from jaxdbg.job.local_processes import free_address  # noqa: E402
from support.lab_helpers import (  # noqa: E402
    ARTIFACTS,
    INSTALLED_WHEEL_KERNEL,
    THEMES,
    LabServer,
    close_documents,
    dismiss_dialogs,
    lab_loaded,
    save_screenshot,
    set_theme,
)
from support.port_lock import PortLock  # noqa: E402

DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]
SERVER_START_TIMEOUT_S = 120

_skip_reasons: set[str] = set()


# ---------------------------------------------------------------------------- hooks


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark every test here `browser`. A flow runs in Notebook 7 too only when marked
    `notebook7`: where Notebook 7's own shell changes what the user meets (its keyboard
    shortcuts, when an output is drawn, the kernel's status, saving and reloading); the
    panel's own drawing is the same widget code in both. (A colour test measures every
    theme in one flow: see lab_helpers.each_theme.)"""
    kept, dropped = [], []
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)
        params = getattr(getattr(item, "callspec", None), "params", {})
        in_notebook7 = params.get("server") == "notebook"
        if in_notebook7 and item.get_closest_marker("notebook7") is None:
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for reason in sorted(_skip_reasons):
        terminalreporter.write_sep("!", f"browser tests SKIPPED: {reason}", yellow=True, bold=True)


def _skip(reason: str):
    _skip_reasons.add(reason)
    pytest.skip(f"browser tests SKIPPED: {reason}")


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path of the Chromium binary Playwright drives; skips the test when there is none."""
    path = os.environ.get("JAXDBG_CHROMIUM") or DEFAULT_CHROMIUM
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        _skip(
            f"no Chromium at {path} (run `python3 dev.py test` as root, "
            f"or `apt-get install chromium`, or set JAXDBG_CHROMIUM)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        _skip(f"playwright is not installed ({exc}); use `python3 dev.py test`")
    return path


def _free_port() -> int:
    """A free port below the ephemeral range, where no outgoing connection of any
    process takes it before the server binds it (other servers hold PortLock)."""
    return int(free_address().rsplit(":", 1)[1])


def _write_lab_settings(settings_dir: Path) -> None:
    """User settings that keep first-open notifications (news, update checks) away."""
    target = settings_dir / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))


def _stop(proc: subprocess.Popen, grace_s: float = 20) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            pass
    try:  # kernels started by the server live in its process group too
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass


def _serve(app: str, tmp_path_factory):
    """A `jupyter lab` or Notebook 7 `jupyter notebook` from this venv on 127.0.0.1,
    token-protected, in a temp root dir (a generator for the fixtures below)."""
    base = tmp_path_factory.mktemp(app)
    root_dir, settings, workspaces, runtime, config = (
        base / name for name in ("root", "settings", "workspaces", "runtime", "config")
    )
    for d in (root_dir, workspaces, runtime, config):
        d.mkdir()
    _write_lab_settings(settings)
    token = secrets.token_hex(16)
    ports = PortLock().acquire()  # released once the server answers on its port
    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab" if app == "lab" else "notebook",
        "--no-browser",
        f"--ServerApp.token={token}",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--ip=127.0.0.1",
        f"--ServerApp.root_dir={root_dir}",
        "--allow-root",
        f"--{APP_CLASS[app]}.expose_app_in_browser=True",
        f"--{APP_CLASS[app]}.user_settings_dir={settings}",
        f"--{APP_CLASS[app]}.workspaces_dir={workspaces}",
        # Its kernels on Unix sockets, not TCP ports a starting kernel could find taken
        # (kernel_harness.py); out of the root dir, which the page's file browser shows.
        "--KernelManager.transport=ipc",
        f"--KernelManager.ip={runtime}/kernel",
    ]
    env = dict(os.environ)
    data_dir = base / "data"
    if _write_installed_wheel_kernelspec(data_dir):
        env["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(data_dir), env.get("JUPYTER_PATH")]))
    env.update(
        JUPYTER_PREFER_ENV_PATH="1",  # this venv's python3 kernelspec wins over ~/.local
        JUPYTER_RUNTIME_DIR=str(runtime),
        JUPYTER_CONFIG_DIR=str(config),
        PYTHONUNBUFFERED="1",
    )
    ARTIFACTS.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # one server (and log) per worker
    log_path = ARTIFACTS / (
        ("jupyterlab-server" if app == "lab" else "notebook7-server") + (f"-{worker}" if worker else "") + ".log"
    )
    log = open(log_path, "w")
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=root_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except BaseException:
        ports.release()
        log.close()
        raise
    url = f"http://127.0.0.1:{port}/"
    server = LabServer(url=url, token=token, root_dir=root_dir, log_path=log_path, app=app)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"jupyter lab exited with {proc.returncode}; see {log_path}:\n" + log_path.read_text()[-3000:]
                )
            try:
                server.api("GET", "api/status", timeout=5)
                ports.release()
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter lab did not answer within {SERVER_START_TIMEOUT_S}s; see {log_path}")
            time.sleep(0.25)
        yield server
    finally:
        ports.release()  # a no-op when released already
        _stop(proc)
        log.close()


APP_CLASS = {"lab": "LabApp", "notebook": "JupyterNotebookApp"}


def _write_installed_wheel_kernelspec(data_dir: Path) -> bool:
    """A kernelspec for the matrix's installed-wheel Python ($JAXDBG_WHEEL_PYTHON), with
    nothing of the checkout on its path; False when the matrix has none."""
    python = os.environ.get("JAXDBG_WHEEL_PYTHON")
    if not python:
        return False
    spec_dir = data_dir / "kernels" / INSTALLED_WHEEL_KERNEL
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "jaxdbg (installed wheel)",
                "language": "python",
                "env": {"PYTHONPATH": ""},
            }
        )
    )
    return True


@pytest.fixture(scope="session")
def lab_server(chromium_path, tmp_path_factory):
    """A `jupyter lab` from this venv on 127.0.0.1, token-protected, in a temp root dir."""
    yield from _serve("lab", tmp_path_factory)


@pytest.fixture(scope="session")
def notebook_server(chromium_path, tmp_path_factory):
    """A Notebook 7 `jupyter notebook` server, set up like ``lab_server``."""
    yield from _serve("notebook", tmp_path_factory)


@pytest.fixture(scope="session")
def browser(chromium_path):
    """Headless Chromium (the system binary, no Playwright browser download)."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
    except Exception:
        pw.stop()
        raise
    yield b
    b.close()
    pw.stop()


@pytest.fixture(params=["lab", "notebook"])
def server(request) -> LabServer:
    """JupyterLab 4, then Notebook 7: a flow written once runs in both."""
    return request.getfixturevalue("lab_server" if request.param == "lab" else "notebook_server")


VIEWPORT = {"width": 1280, "height": 1000}

# What a test must leave as a fresh Lab page has it for its page to go to the next test:
# the light theme, the sidebars and the mode as they open, no dialog, one page.
_LAB_STATE_JS = """() => { const app = window.jupyterapp, shell = app.shell;
  return JSON.stringify([document.body.dataset.jpThemeName, shell.leftCollapsed, shell.rightCollapsed,
    shell.mode, !!document.querySelector('.jp-Dialog'), !!document.fullscreenElement]); }"""


class KeptLabPage:
    """One loaded JupyterLab page per pytest worker, handed from test to test.

    Loading JupyterLab costs a page about 5 s of CPU; the browser tests open over fifty
    notebooks. A test that passes and leaves its page as a fresh Lab page has it (its
    documents closed, its kernels shut down) hands it on; any other test's page is
    closed, and the next test starts a fresh one. A test marked ``fresh_page`` (one
    that counts on a cold page, or adds listeners and pages) never shares one."""

    def __init__(self) -> None:
        self.page = None
        self.fresh_state: str | None = None  # _LAB_STATE_JS on the first Lab page

    def take(self):
        page, self.page = self.page, None
        return page

    def hand_on(self, page, server: LabServer) -> bool:
        """Keep `page` for the next test, if it is fit to be; its documents are closed."""
        if len(page.context.pages) != 1 or not lab_loaded(page, server):
            return False
        try:
            close_documents(page)
            dismiss_dialogs(page)
            state = page.evaluate(_LAB_STATE_JS)
        except Exception:
            return False
        if self.fresh_state is None:
            self.fresh_state = state
        if state != self.fresh_state:
            return False
        self.page = page
        return True


@pytest.fixture(scope="session")
def kept_lab_page() -> KeptLabPage:
    return KeptLabPage()


def _new_page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(30_000)
    return page


@pytest.fixture
def page(browser, request, kept_lab_page):
    """A page: the Lab page the last test handed on (see KeptLabPage), else a new page
    in a fresh browser context. On failure its screenshot and console go to
    test-artifacts/; the kernels of the servers the test used are shut down afterwards."""
    fresh = request.node.get_closest_marker("fresh_page") is not None
    pg = None if fresh else kept_lab_page.take()
    if pg is not None and pg.is_closed():  # its renderer gone: its context too
        pg.context.close()
        pg = None
    if pg is None:
        pg = _new_page(browser)
    else:
        pg.set_viewport_size(VIEWPORT)
    console: list[str] = []

    def on_console(msg) -> None:
        console.append(f"[{msg.type}] {msg.text}")

    def on_page_error(err) -> None:
        console.append(f"[pageerror] {err}")

    pg.on("console", on_console)
    pg.on("pageerror", on_page_error)
    yield pg
    failed = any(getattr(getattr(request.node, f"rep_{when}", None), "failed", False) for when in ("setup", "call"))
    if failed:
        try:
            save_screenshot(pg, f"{request.node.name}-failure")
        except Exception as exc:  # the page may be gone
            console.append(f"[harness] screenshot failed: {exc}")
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / f"{request.node.name}-console.txt").write_text("\n".join(console) + "\n")
    kept = False
    if not (failed or fresh) and "lab_server" in request.fixturenames:
        kept = kept_lab_page.hand_on(pg, request.getfixturevalue("lab_server"))
    if kept:
        pg.remove_listener("console", on_console)
        pg.remove_listener("pageerror", on_page_error)
    else:
        pg.context.close()
    for name in ("lab_server", "notebook_server"):
        if name in request.fixturenames:
            served = request.getfixturevalue(name)
            try:
                served.shutdown_kernels()
                set_theme(served, THEMES["light"])  # a theme switched live is the server's setting too
            except Exception:
                pass


@pytest.fixture
def lab_page(page, lab_server):
    """``page`` for a JupyterLab-only test."""
    page.set_viewport_size({"width": 1400, "height": 900})
    return page
