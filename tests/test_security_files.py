"""Files iosched writes carry the umask's mode (issue 49.8: every one was 0600, so results in a shared project
folder were unreadable to the group), and are never written through a symlink."""

import os
import stat
from pathlib import Path

import pytest

from iosched.cli import main
from iosched.files import atomic_path, write_text


@pytest.fixture(params=[0o022, 0o002, 0o077])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _modes(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): stat.S_IMODE(p.stat().st_mode) for p in folder.rglob("*") if p.is_file()}


def test_write_text_and_atomic_path_give_the_umasks_mode(tmp_path, umask):
    write_text(tmp_path / "a.txt", "x")
    with atomic_path(tmp_path / "b.bin") as tmp:
        tmp.write_bytes(b"y")
    assert _modes(tmp_path) == {"a.txt": 0o666 & ~umask, "b.bin": 0o666 & ~umask}


def test_solve_bench_and_report_write_with_the_umasks_mode(tmp_path, umask, capsys):
    pytest.importorskip("pyarrow")
    assert main(["solve", "window", "paper:example", "--method", "naive", "-o", str(tmp_path / "r.json")]) == 0
    assert main(["generate", "window", "--seed", "1", "-o", str(tmp_path / "g.json")]) == 0
    suite = tmp_path / "s.toml"
    suite.write_text('problem = "window"\n[instances]\nnames = ["paper:example"]\n[[methods]]\nname = "naive"\n')
    assert main(["bench", str(suite), "--out", str(tmp_path / "out"), "--workers", "1", "--quiet"]) == 0
    assert main(["report", str(tmp_path / "out")]) == 0
    assert main(["report", str(tmp_path / "out"), "--format", "parquet"]) == 0
    capsys.readouterr()
    modes = _modes(tmp_path)
    written = {k for k in modes if not k.endswith((".toml", ".lock"))}
    assert {"r.json", "g.json", "out/suite.json", "out/plots/gaps.png", "out/results.parquet"} <= written
    assert any(k.startswith("out/results/") for k in written)
    assert {k: modes[k] for k in written} == {k: 0o666 & ~umask for k in written}


def test_a_symlink_in_place_of_the_output_is_replaced_not_written_through(tmp_path):
    precious = tmp_path / "precious"
    precious.write_text("keep me")
    out = tmp_path / "out.json"
    out.symlink_to(precious)
    assert main(["solve", "window", "paper:example", "--method", "naive", "-o", str(out)]) == 0
    assert precious.read_text() == "keep me" and not out.is_symlink() and out.read_text().startswith("{")
