"""The root conftest's kernel-start lock: a chapter's first cell waits while another worker holds
it, and no other test does."""

from __future__ import annotations

import fcntl
import threading
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def conftest(pytestconfig: pytest.Config) -> ModuleType:
    """The root conftest.py as pytest loaded it (``import conftest`` may find another folder's)."""
    module = pytestconfig.pluginmanager.get_plugin(str(ROOT / "conftest.py"))
    assert isinstance(module, ModuleType), "pytest did not load the root conftest.py"
    return module


def _setup_in_thread(conftest: ModuleType, item: object) -> threading.Thread:
    """Run the setup hook's wrapper around a setup that does nothing, in a thread."""

    def run() -> None:
        wrapper = conftest.pytest_runtest_setup(item)
        next(wrapper)
        for _ in wrapper:  # the setup happened; leave the wrapper
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_chapters_first_cell_waits_for_the_kernel_start_lock(conftest: ModuleType) -> None:
    first_cell = SimpleNamespace(path=Path("book/01_x.ipynb"), parent=SimpleNamespace(kernel=None))
    later_cell = SimpleNamespace(path=Path("book/01_x.ipynb"), parent=SimpleNamespace(kernel=1))
    unit_test = SimpleNamespace(path=Path("tests/test_x.py"), parent=SimpleNamespace())
    with conftest.KERNEL_START_LOCK.open("a") as held:  # another worker starting a kernel
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = _setup_in_thread(conftest, first_cell)
        others = [_setup_in_thread(conftest, item) for item in (later_cell, unit_test)]
        for thread in others:
            thread.join(timeout=5)
            assert not thread.is_alive(), "a test that starts no kernel waited for the lock"
        waiting.join(timeout=0.3)
        assert waiting.is_alive(), "a chapter's first cell started while the lock was held"
        fcntl.flock(held, fcntl.LOCK_UN)
    waiting.join(timeout=60)  # a worker starting a chapter's kernel may take the lock first
    assert not waiting.is_alive(), "the first cell still waits after the lock was let go"
