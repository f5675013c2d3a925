import io

from herbrand.framework.contracts import Progress
from herbrand.progress import ProgressDisplay

EVENT = Progress(stratum=0, strata=2, iteration=7, delta=1234, total=56789)


def test_silent_during_the_first_second():
    stream = io.StringIO()
    ProgressDisplay(stream, delay=60)(EVENT)
    assert stream.getvalue() == ""


def test_reports_stratum_iteration_and_tuples_once_the_delay_has_passed():
    stream = io.StringIO()
    display = ProgressDisplay(stream, delay=0)
    display(EVENT)
    display(EVENT)  # within the interval: not written again
    assert stream.getvalue().count("\n") == 1
    assert "stratum 1/2  iteration 7  +1,234 tuples  total 56,789" in stream.getvalue()


def test_a_short_run_stays_silent_even_at_its_end():
    stream = io.StringIO()
    display = ProgressDisplay(stream, delay=60)
    display(EVENT)
    display.stage("writing path.csv: 3 tuples")
    display.finish("done: 3 tuples")
    assert stream.getvalue() == ""


def test_a_long_run_reports_its_stages_and_ends_with_the_exact_totals():
    stream = io.StringIO()
    display = ProgressDisplay(stream, delay=0)
    display(EVENT)
    display(Progress(stratum=1, strata=2, iteration=9, delta=2, total=56791))  # throttled away
    display.stage("writing path.csv: 56,791 tuples")
    display.finish("done: 56,791 tuples")
    lines = stream.getvalue().splitlines()
    assert [line.rsplit("  ", 1)[0] for line in lines] == [
        "stratum 1/2  iteration 7  +1,234 tuples  total 56,789",
        "writing path.csv: 56,791 tuples", "done: 56,791 tuples"]


def test_on_a_terminal_the_line_is_redrawn_and_ended_once():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    display = ProgressDisplay(stream, delay=0)
    display(EVENT)
    display.finish("done")
    assert stream.getvalue().count("\n") == 1 and stream.getvalue().endswith("\n")
    assert stream.getvalue().count("\r\x1b[K") == 2
