"""Every CLI failure is one line, ``mlsys <cmd>: error: <what> (<file>)``, and a non-zero
exit; a command with nothing to check fails instead of passing on nothing."""

from __future__ import annotations

import errno
import json
import os
import pathlib
from pathlib import Path

import pytest

from mlsys.cli import file_error
from mlsys.cli import main as cli_main


def _run(argv, capsys):
    try:
        status = cli_main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    out = capsys.readouterr()
    return status, out.out, out.err


def _one_error_line(err, command):
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    assert lines[0].startswith(f"mlsys {command}: error: "), err
    return lines[0]


@pytest.fixture
def book(tmp_path):
    folder = tmp_path / "book"
    folder.mkdir()
    (folder / "ch.qmd").write_text(
        "# A chapter\n\n```{python}\nx = 1\n```\n\nIt is `{python} x`.\n"
    )
    return folder


# numbers ---------------------------------------------------------------------------
def test_numbers_out_in_a_missing_folder_fails_before_running_the_book(book, capsys, monkeypatch):
    import mlsys.book.numbers_cli as numbers_cli

    def must_not_run(*args, **kwargs):
        raise AssertionError("the book ran before --out was checked")

    monkeypatch.setattr(numbers_cli, "collect_numbers", must_not_run)
    status, out, err = _run(["numbers", book, "--out", "/no/such/dir/m.json"], capsys)
    assert status == 2 and out == ""
    line = _one_error_line(err, "numbers")
    assert "/no/such/dir/m.json" in line and "no folder /no/such/dir" in line


def test_numbers_out_a_directory(book, tmp_path, capsys):
    status, _, err = _run(["numbers", book, "--out", tmp_path], capsys)
    assert status == 2
    assert "not a directory" in _one_error_line(err, "numbers")


@pytest.mark.parametrize(
    "text", ["[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000]
)
def test_numbers_diff_on_deeply_nested_json(book, tmp_path, capsys, text):
    nested = tmp_path / "nested.json"
    nested.write_text(text)
    status, _, err = _run(["numbers", book, "--diff", nested], capsys)
    assert status == 2
    line = _one_error_line(err, "numbers")
    assert str(nested) in line and "nested too deeply" in line


def test_numbers_on_an_empty_folder_fails(tmp_path, capsys):
    status, out, err = _run(["numbers", tmp_path], capsys)
    assert status == 2 and out == ""  # no empty manifest on stdout
    assert "nothing to check" in _one_error_line(err, "numbers")


@pytest.mark.parametrize("timeout", ["nan", "inf", "0", "-1"])
def test_numbers_timeout_must_be_a_positive_finite_number(book, capsys, timeout):
    status, _, err = _run(["numbers", book, "--timeout", timeout], capsys)
    assert status == 2
    _one_error_line(err, "numbers")


# check -----------------------------------------------------------------------------
def test_check_a_folder_without_qmd_fails(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("no chapters here")
    status, _, err = _run(["check", tmp_path], capsys)
    assert status == 2
    line = _one_error_line(err, "check")
    assert str(tmp_path) in line and "nothing to check" in line


def test_check_a_file_that_is_not_qmd_fails(tmp_path, capsys):
    other = tmp_path / "passwd"
    other.write_text("root:x:0:0:root:/root:/bin/bash\n")
    status, _, err = _run(["check", other], capsys)
    assert status == 2
    assert "a .qmd file" in _one_error_line(err, "check")


@pytest.mark.skipif(not Path("/etc/passwd").is_file(), reason="no /etc/passwd here")
def test_check_etc_passwd_fails(capsys):
    status, _, err = _run(["check", "/etc/passwd"], capsys)
    assert status == 2
    assert "PATH='/etc/passwd'" in _one_error_line(err, "check")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_check_dev_zero_is_not_a_regular_file_not_missing(capsys):
    status, _, err = _run(["check", "/dev/zero"], capsys)
    assert status == 2
    line = _one_error_line(err, "check")
    assert "no such file" not in line
    assert "not a device" in line and "/dev/zero" in line


def test_check_a_missing_path(tmp_path, capsys):
    status, _, err = _run(["check", tmp_path / "gone.qmd"], capsys)
    assert status == 2
    assert "no such file or directory" in _one_error_line(err, "check")


def test_check_a_book_still_passes(book, capsys):
    status, _, err = _run(["check", book], capsys)
    assert status == 0, err


# migrate ---------------------------------------------------------------------------
@pytest.fixture
def old_chapter(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    chapter = folder / "ch.qmd"
    chapter.write_text("```{python}\nfrom mlsysim import fmt\n```\n")
    return chapter


def test_migrate_a_read_only_folder(old_chapter, capsys, monkeypatch):
    if os.geteuid() != 0:
        old_chapter.chmod(0o444)
    else:  # root writes through permission bits: let the write fail as the OS would

        def refuse(self, *args, **kwargs):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))

        monkeypatch.setattr(pathlib.Path, "write_text", refuse)
    try:
        status, _, err = _run(["migrate", old_chapter.parent], capsys)
    finally:
        old_chapter.chmod(0o644)
    assert status == 1
    line = _one_error_line(err, "migrate")
    assert "permission denied" in line and str(old_chapter) in line


def test_migrate_a_binary_qmd_names_the_file(tmp_path, capsys):
    binary = tmp_path / "ch.qmd"
    binary.write_bytes(b"\xff\xfe\x00\x81 not text")
    status, _, err = _run(["migrate", tmp_path], capsys)
    assert status == 1
    line = _one_error_line(err, "migrate")
    assert str(binary) in line and "not a UTF-8 text file" in line


# the one-line message itself ----------------------------------------------------------
def test_file_error_names_the_file_of_a_decode_error(tmp_path):
    binary = tmp_path / "x.qmd"
    binary.write_bytes(b"ok\xff")
    with pytest.raises(UnicodeDecodeError) as info:
        binary.read_text(encoding="utf-8")
    assert file_error(info.value) == (
        f"not a UTF-8 text file (byte 0xff at offset 2 cannot be decoded) ({binary})"
    )


def test_file_error_of_an_os_error():
    error = PermissionError(errno.EACCES, "Permission denied", "/book/ch.qmd")
    assert file_error(error) == "permission denied (/book/ch.qmd)"


def test_file_error_of_a_recursion_error(tmp_path):
    nested = tmp_path / "deep.json"
    nested.write_text("[" * 100_000)
    with pytest.raises(RecursionError) as info, nested.open() as handle:
        json.load(handle)
    assert file_error(info.value) == f"nested too deeply to read ({nested})"


# devices and pipes, refused once for every command -----------------------------------
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
@pytest.mark.parametrize("command", ["migrate", "check", "numbers"])
def test_every_command_refuses_a_device(command, capsys):
    status, _, err = _run([command, "/dev/zero"], capsys)
    assert status == 2
    line = _one_error_line(err, command)
    assert "PATH='/dev/zero'" in line and "not a device" in line


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_not_read(tmp_path, capsys):
    fifo = tmp_path / "ch.qmd"
    os.mkfifo(fifo)
    # reading it would block forever: the command must refuse it without opening it
    status, _, err = _run(["migrate", fifo], capsys)
    assert status == 2
    assert "pipe" in _one_error_line(err, "migrate")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_inside_a_book_is_skipped_by_check(book, capsys):
    os.mkfifo(book / "stuck.qmd")
    status, _, err = _run(["check", book], capsys)
    assert status == 0, err  # the chapter is checked; the pipe is not opened


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_numbers_diff_against_a_device_is_refused_not_read(book, capsys):
    # reading /dev/zero to its end would never finish
    status, _, err = _run(["numbers", book, "--diff", "/dev/zero"], capsys)
    assert status == 2
    assert "--diff='/dev/zero'" in _one_error_line(err, "numbers")
