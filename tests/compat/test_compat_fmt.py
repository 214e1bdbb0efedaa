"""``mlsysim.fmt`` after migration: the book's whole-number rule for a plain ``fmt_int``."""

import math

import pytest

from mlsys.book.rewrite import rewrite_imports
from mlsys.core.errors import MlsysError


def test_plain_fmt_int_rounds_as_the_book_prints_it():
    """The book's fmt_int is fmt(round(x), precision=0): 45.49 prints "45" (the
    fault-tolerance chapter's checkpoint interval), 16,384.4 prints "16,384"."""
    from mlsys.compat.fmt import fmt_int

    assert str(fmt_int(45.49)) == "45"
    assert str(fmt_int(16384.4)) == "16,384"
    assert str(fmt_int(16384.4, commas=False)) == "16384"


@pytest.mark.parametrize("bad", [math.nan, math.inf, "45 GB", "forty-five", "nan", "inf", ""])
def test_plain_fmt_int_still_refuses_what_is_not_a_number(bad):
    from mlsys.compat.fmt import fmt_int

    with pytest.raises(MlsysError, match="value="):
        fmt_int(bad)


def test_fmt_int_reads_the_text_of_a_plain_number_as_the_book_does():
    """The training chapter's carbon-footprint cell prints the exponent of
    f"{4.2e22:.1e}" == "4.2e+22" with fmt_int(text.split("e+")[1]), i.e. fmt_int("22")."""
    from mlsys.compat.fmt import fmt_int

    exponent = f"{4.2e22:.1e}".split("e+")[1]
    assert exponent == "22"
    assert str(fmt_int(exponent, commas=False)) == "22"
    assert str(fmt_int(" 4.5e1 ")) == "45"  # 4.5 x 10 = 45
    assert str(fmt_int("-2.5")) == "-3"  # halves away from zero, as for the float -2.5
    # 2**53 + 1 = 9,007,199,254,740,993: integer text keeps every digit (a float gives ...992)
    assert str(fmt_int(str(2**53 + 1))) == "9,007,199,254,740,993"


def test_fmt_int_reads_no_unit_for_a_plain_number_as_the_book_does():
    """The book's fmt_int converts only a Quantity (``if isinstance(quantity,
    Quantity): quantity.to(unit)``); the data-selection chapter's random-access table
    passes -2 there. HDD: 150 MB/s sequential over 80 IOPS x 4 KB = 0.32 MB/s random is
    a 468.75x penalty, printed "469"."""
    from mlsys.compat.fmt import fmt_int
    from mlsys.core.units import Q_

    penalty = 150 / (80 * 4 / 1000)
    assert penalty == 468.75
    assert str(fmt_int(penalty, -2, commas=False)) == "469"
    assert str(fmt_int(2039.4, "GB/s")) == "2,039"  # a number is already in its unit
    # a Quantity is still converted, and a unit that is not one is still refused
    assert str(fmt_int(Q_(2039, "GB/s"), "TB/s")) == "2"
    with pytest.raises(MlsysError, match="unit="):
        fmt_int(Q_(2039, "GB/s"), -2)


def test_mlsys_own_fmt_int_keeps_refusing_a_fraction():
    """Only the migrated book import takes the book's rule; mlsys.formatting's plain
    call still refuses to hide a fraction."""
    from mlsys.formatting import fmt_int

    with pytest.raises(MlsysError):
        fmt_int(45.49)


def test_migrated_chapter_code_runs_the_books_fmt_int():
    code = rewrite_imports("from mlsysim.fmt import fmt_int, fmt\nx = fmt_int(45.49)\n")
    assert "mlsys.compat.fmt" in code
    namespace: dict = {}
    exec(code, namespace)  # the rewritten chapter line, as a kernel runs it
    assert str(namespace["x"]) == "45"


def test_every_other_name_is_mlsys_formatting():
    import mlsys.compat.fmt as book
    import mlsys.formatting as formatting

    for name in formatting.__all__:
        if name != "fmt_int":
            assert getattr(book, name) is getattr(formatting, name), name
