"""``bench/serve.py``'s sample sizes: each hammer of a row is at least ``--requests`` long
(the quiet re-measure's 10-session row had been 30 requests, once), and no session gets
more inputs in one hammer than its inbox holds (a full inbox would hold the request until
a turn takes one, and the hammer would time the turns instead of the requests)."""

from __future__ import annotations

from pathlib import Path

from terrarium.channels.spec import DEFAULT_CAPACITY
from tests.script_loader import load_script
from tests.serve_helpers import ROOT

bench = load_script(ROOT / "bench" / "serve.py", "bench_serve_sample")


def test_every_hammer_is_long_enough_and_fits_the_inboxes() -> None:
    assert bench.INBOX_ROOM <= DEFAULT_CAPACITY
    for sessions, per in ((1, 3), (10, 3), (100, 3), (1000, 1)):
        n = bench.hammered(sessions, per, 300)
        assert per <= n <= bench.INBOX_ROOM
        assert sessions * n >= 300 or n == bench.INBOX_ROOM
    assert [bench.hammered(s, 3, 300) for s in (1, 10, 100)] == [60, 30, 3]
    assert bench.hammered(1000, 1, 300) == 1


def test_the_bench_writes_each_double_texting_policy(tmp_path: Path) -> None:
    """``--double-texting enqueue,merge:0.02``: the enqueue team is the team from before
    the option (no key written, so an older checkout runs it); the merge team says so."""
    from terrarium.config import load_team

    plain = load_team(bench.write_team(tmp_path / "a", "enqueue"))
    assert "double_texting" not in (tmp_path / "a" / "echo" / "config.yaml").read_text()
    merging = load_team(bench.write_team(tmp_path / "b", "merge:0.02"))
    assert plain.creatures["echo"].config.double_texting == "enqueue"
    cfg = merging.creatures["echo"].config
    assert (cfg.double_texting, cfg.double_texting_wait) == ("merge", 0.02)


def test_an_older_checkout_is_seen_to_lack_the_option(tmp_path: Path) -> None:
    """``--code`` on a checkout from before ``double_texting`` runs enqueue's table only (a
    merge team would be refused there, and the bench stopped with a traceback)."""
    config = tmp_path / "terrarium" / "config"
    config.mkdir(parents=True)
    (config / "creature.py").write_text("class CreatureConfig: ...\n")
    assert not bench.knows_double_texting(tmp_path)
    assert bench.knows_double_texting(ROOT)
