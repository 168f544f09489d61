"""code_fixers (scripted, without --yes) driven from the web page: the worker's shell and
edit calls wait for approval, the page shows the command or the edit as a diff, the
answers go back over the API, and the sample repository's tests then pass."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.web_browser import ROOT, Console, browser, need_browser, new_session, serve, shot

pytestmark = pytest.mark.browser

FIXERS = ROOT / "examples" / "code_fixers"
LIMIT_MS = 60_000  # a bound against hangs, never a measured figure


def test_shell_and_edit_approvals_answered_from_the_page(tmp_path: Path) -> None:
    need_browser()
    repo = tmp_path / "shop"
    shutil.copytree(FIXERS / "sample_repo", repo)
    before = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                            cwd=repo, capture_output=True, text=True, check=False)
    assert before.returncode != 0, "the sample repository should start with failing tests"
    env = {"FIXERS_WORKSPACE": str(repo)}
    with serve(FIXERS, tmp_path / "runs", env=env) as server, browser() as b:
        console = Console()
        page = console.watch(b.new_page(viewport={"width": 1280, "height": 800}))
        page.goto(server.url + "/")
        page.wait_for_selector("#f-text", state="attached")
        new_session(page, "fixers")
        page.fill("#f-text", "Make the failing tests pass.")
        page.click("#composer-send")
        seen: list[str] = []
        while True:
            try:
                page.wait_for_selector("dialog#approval[open]", timeout=LIMIT_MS)
            except Exception:
                break  # no more approvals: the worker is done (or stuck; checked below)
            title = page.text_content("#approval-title") or ""
            current = page.evaluate("terrariumApprovals.current.id")
            if "shell" in title:
                command = page.text_content("#approval-body pre.command") or ""
                assert "pytest" in command
                seen.append("shell")
                if seen.count("shell") == 1:
                    shot(page, "approval-shell")
            elif "edit" in title:
                assert page.locator("#approval-body .diff .del").count() >= 1
                assert page.locator("#approval-body .diff .add").count() >= 1
                seen.append("edit")
                shot(page, "approval-edit")
            else:
                raise AssertionError(f"unexpected approval: {title}")
            page.click("#approval-yes")
            page.wait_for_function(
                "id => !terrariumApprovals.current || terrariumApprovals.current.id !== id",
                arg=current)
            if "edit" in seen and seen[-1] == "shell" and seen.count("shell") >= 2:
                break  # tests run again after the edit: the worker's part is over
        assert "shell" in seen and "edit" in seen, seen
        # the reviewer runs the tests (no approval needed) and gives its verdict
        page.click("#tab-transcripts")
        page.select_option("#transcript-creature", "reviewer")
        page.wait_for_selector("#transcript li[data-kind=tool_result]", timeout=LIMIT_MS)
        assert console.errors == []
    after = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                           cwd=repo, capture_output=True, text=True, check=False)
    assert after.returncode == 0, after.stdout + after.stderr


ASKER = ROOT / "tests" / "serve_fixtures" / "asker"


def test_question_answered_and_approval_denied_from_the_page(tmp_path: Path) -> None:
    """ask_user shows its question and takes a typed answer; a denied call is marked as
    refused in the creature's transcript."""
    need_browser()
    with serve(ASKER, tmp_path / "runs") as server, browser() as b:
        console = Console()
        page = console.watch(b.new_page(viewport={"width": 1280, "height": 800}))
        page.goto(server.url + "/")
        page.wait_for_selector("#f-text", state="attached")
        new_session(page, "asker")
        page.fill("#f-text", "A question for you.")
        page.click("#composer-send")
        page.wait_for_selector("dialog#approval[open]", timeout=LIMIT_MS)
        assert page.text_content("#approval-body .question") == "Tea or coffee?"
        page.fill("#approval-answer", "Tea, please.")
        shot(page, "question")
        page.keyboard.press("Enter")  # Enter in the answer field answers
        page.wait_for_selector("dialog#approval:not([open])", state="attached")
        page.click("#tab-transcripts")
        page.select_option("#transcript-creature", "clerk")
        page.wait_for_selector("#transcript li[data-kind=tool_result]:has-text('Tea, please.')",
                               timeout=LIMIT_MS)
        page.fill("#f-text", "Please remember this.")
        page.click("#composer-send")
        page.wait_for_selector("dialog#approval[open]", timeout=LIMIT_MS)
        assert "memory_write" in (page.text_content("#approval-title") or "")
        assert "The user likes tea." in (page.text_content("#approval-body") or "")
        page.click("#approval-deny")
        page.wait_for_selector("#transcript li.failed[data-kind=tool_result]", timeout=LIMIT_MS)
        assert console.errors == []
