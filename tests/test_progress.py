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
