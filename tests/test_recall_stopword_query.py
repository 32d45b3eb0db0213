"""A query whose every word is left out (stopwords, one-letter words) says so, rather than
"nothing in memory matches", which read as if memory had been searched."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def test_a_query_of_stopwords_says_no_word_is_searched_for(isolated_env: dict[str, str],
                                                           vault_dir: Path) -> None:
    env = {**isolated_env, "ECHO_VAULT": str(vault_dir)}
    assert run_cli(["init"], env=env).returncode == 0
    said = run_cli(["recall", "the and of"], env=env)
    assert said.returncode == 0 and "no word of 'the and of' is searched for" in said.stdout
    data = json.loads(run_cli(["recall", "the and of", "--json"], env=env).stdout)
    assert data["primary"] == [] and "no word of the query is searched for" in data["message"]
    other = run_cli(["recall", "zzzqqq"], env=env)
    assert "nothing in memory matches 'zzzqqq'" in other.stdout
