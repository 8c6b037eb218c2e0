"""Folder names made from user names are safe, bounded and never shared by two names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from smevals.store.layout import ID_RE, object_parent, slug
from smevals.store.read import Store
from tests.helpers.store import write_run

SAFE = re.compile(r"^[a-z0-9_][a-z0-9._-]{0,63}$")


@pytest.mark.parametrize("name, expected", [
    ("haiku", "haiku"),
    ("gpt-4o-mini", "gpt-4o-mini"),
    ("v1.2_final", "v1.2_final"),
    ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet-20241022"),
    ("Haiku", "haiku-15e21d2a"),
    ("HAIKU", "haiku-42f3bbad"),
    ("..", "x-5ec1f7e7"),
    ("../../etc/passwd", "etc-passwd-3754d6cb"),
    ("a/b", "a-b-c14cddc0"),
    ("a\\b", "a-b-c62016d0"),
    ("", "x-e3b0c442"),
    ("con", "con-1143da2b"),
    ("llama3:8b", "llama3-8b-0c947764"),
    ("model-deadbeef", "model-deadbeef-9acb8ed8"),
    ("Café au lait", "caf-au-lait-793e7643"),
])
def test_slug_examples_are_pinned(name: str, expected: str):
    assert slug(name) == expected
    assert SAFE.match(expected)


def test_names_differing_only_in_case_or_punctuation_never_share_a_folder():
    names = ["model", "Model", "MODEL", "mo-del", "mo_del", "mo del", "mo/del", "mo.del",
             "mo..del", "model.", ".model", slug("Model")]
    assert len({slug(n) for n in names}) == len(names)
    # also on a case-insensitive filesystem: every slug is lower case
    assert len({slug(n).lower() for n in names}) == len(names)


def test_a_safe_name_cannot_take_the_folder_of_a_hashed_one():
    hashed = slug("Model")
    assert hashed != "model" and slug(hashed) != hashed


def test_very_long_names_are_capped_and_stay_distinct():
    long_a, long_b = "x" * 500 + "a", "x" * 500 + "b"
    assert len(slug(long_a)) <= 64 and len(slug("y" * 64)) == 64
    assert slug(long_a) != slug(long_b)
    assert len(slug("y" * 65)) <= 64


@given(st.text(max_size=120))
def test_every_slug_is_one_safe_path_part(name: str):
    got = slug(name)
    assert SAFE.match(got) and ".." not in got and not got.endswith(".")
    assert got == name or got.startswith(got.rsplit("-", 1)[0])


@given(st.lists(st.text(max_size=12), min_size=2, max_size=8, unique=True))
def test_distinct_names_get_distinct_slugs(names: list[str]):
    assert len({slug(n) for n in names}) == len(names)


def test_objects_land_in_slugged_folders_inside_the_store(tmp_path: Path):
    root = tmp_path / "st"
    written = write_run(root, task="../../escape", config="A/B", model="Llama 3:8B")
    assert written.path.resolve().is_relative_to(root.resolve())
    parts = written.rel.split("/")
    assert parts[0] == "runs" and len(parts) == 5 and ID_RE.match(parts[4])
    assert parts[1:4] == [slug("../../escape"), slug("A/B"), slug("Llama 3:8B")]
    assert [o.id for o in Store(root).runs()] == [written.id]
    assert object_parent("run", ["../../escape", "A/B", "Llama 3:8B"]) == "/".join(parts[:4])


def test_two_names_that_would_share_a_folder_are_refused_and_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from smevals.store import layout
    from smevals.store.verify import verify_store
    from smevals.store.write import StoreError

    real = layout.slug
    monkeypatch.setattr(layout, "slug", lambda n: real("t1") if n == "t2" else real(n))
    root = tmp_path / "st"
    first = write_run(root, 0, task="t1")
    with pytest.raises(StoreError, match=r"already holds runs of \['t1', 'c', 'm'\], and "
                                         r"\['t2', 'c', 'm'\] would share it"):
        write_run(root, 1, task="t2")
    monkeypatch.setattr(layout, "slug", real)
    other = write_run(root, 1, task="t2")
    monkeypatch.setattr(layout, "slug", lambda n: real("t1") if n == "t2" else real(n))
    other.path.rename(first.path.parent / other.id)
    _count, problems = verify_store(root)
    assert [(p.path, p.message) for p in problems] == [
        (f"runs/t1/c/m/{other.id}", "its names ['t2', 'c', 'm'] share the folder with "
                                    "['t1', 'c', 'm'] (a name collision)")]
