#!/usr/bin/env python3
"""Entry of the report pages, run by `ncclshim report|compare` (tools/inspect/page_commands.cc)
and by `phynet --html` with the first Python 3 that has matplotlib. Installed with its modules in
build/ncclshim_report/.

  report_main.py report REPORT.json -o PAGE.html [--title TEXT] [--comms COMMS.json]
  report_main.py compare A.json B.json [MORE.json ...] [-o PAGE.html] [--fail-below RATIO] [--rows N]
  report_main.py compare --capture CAPTURE.json --capture-source TRACE REPORT.json [-o PAGE.html]

Exit status: 0 done, 1 compare: a ratio below --fail-below, 2 bad input (one line on stderr that
names the file; never a traceback), 3 matplotlib is missing (no page written).
"""
import argparse
import os
import sys
import tempfile
import warnings

sys.dont_write_bytecode = True  # no __pycache__ in the source tree when run from tools/report
from report_data import ReportError, add_comms, load_run


def fail(message, status=2):
    print(f"ncclshim {COMMAND}: {message}", file=sys.stderr)
    return status


COMMAND = "report"


def pyplot():
    warnings.filterwarnings("ignore")  # e.g. an empty legend: the page says what is missing instead
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, selectable
        matplotlib.rcParams["svg.hashsalt"] = "ncclshim"  # the same input gives the same page
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        return None


def write_page(path, text):
    """Writes through a temporary file in the same folder, so a failed run leaves no half page."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(prefix=".ncclshim-page-", suffix=".html", dir=folder)
    except OSError as error:
        raise ReportError(f"{path}: cannot write: {error.strerror or error}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as a plain open() would have made it, not mkstemp's 0600
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def run_report(args):
    run = load_run(args.input[0])
    if args.comms:
        add_comms(run, args.comms, args.comms_source)
    plt = pyplot()
    if plt is None:
        return fail("matplotlib is not installed for " + sys.executable +
                    " (Debian: apt-get install python3-matplotlib); no page written", 3)
    from report_page import build_page
    write_page(args.output, build_page(plt, run, args.title))
    print(f"ncclshim report: wrote {args.output}", file=sys.stderr)
    return 0


def run_capture_compare(args):
    from report_capture import build_capture_page, compare_capture, load_capture, print_capture_text
    capture = load_capture(args.capture, args.capture_source or args.capture)
    if len(args.input) != 1:
        return fail("compare TRACE REPORT.json: give one replay report after the trace")
    result = compare_capture(capture, load_run(args.input[0]))
    print_capture_text(result, sys.stdout, args.rows)
    if args.output:
        write_page(args.output, build_capture_page(result, args.title))
        print(f"ncclshim compare: wrote {args.output}", file=sys.stderr)
    return 0


def run_compare(args):
    if args.capture:
        return run_capture_compare(args)
    from report_compare import compare_runs, failures, print_text
    runs = [load_run(path) for path in args.input]
    result = compare_runs(runs)
    print_text(result, sys.stdout, args.rows)
    fails = failures(result, args.fail_below) if args.fail_below is not None else []
    if args.output:
        plt = pyplot()
        if plt is None:
            return fail("matplotlib is not installed for " + sys.executable +
                        " (Debian: apt-get install python3-matplotlib); no page written", 3)
        from compare_page import build_compare_page
        write_page(args.output, build_compare_page(plt, result, fails, args.fail_below, args.title))
        print(f"ncclshim compare: wrote {args.output}", file=sys.stderr)
    sys.stdout.flush()
    for line in fails:
        print(f"ncclshim compare: below --fail-below: {line}", file=sys.stderr)
    return 1 if fails else 0


def main():
    global COMMAND
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["report", "compare"])
    parser.add_argument("input", nargs="+")
    parser.add_argument("-o", "--output", default="")
    parser.add_argument("--title", default="")
    parser.add_argument("--fail-below", type=float, default=None)
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--comms", default="", help="communicator members (phynet --html, report --input)")
    parser.add_argument("--comms-source", default="", help="what --comms was read from, for messages")
    parser.add_argument("--capture", default="", help="compare: the capture's figures (ncclshim compare TRACE ...)")
    parser.add_argument("--capture-source", default="", help="the trace --capture was made from, for messages")
    args = parser.parse_args()
    COMMAND = args.command
    try:
        if args.command == "report":
            if len(args.input) != 1 or not args.output:
                return fail("usage: report REPORT.json -o PAGE.html")
            return run_report(args)
        if len(args.input) < 2 and not args.capture:
            return fail("give at least two reports to compare")
        return run_compare(args)
    except ReportError as error:
        return fail(str(error))
    except BrokenPipeError:
        return 0
    except OSError as error:
        return fail(f"{error.filename or ''}: {error.strerror or error}")
    except Exception as error:  # a bug here must still not show a traceback to the user
        if os.environ.get("NCCLSHIM_REPORT_DEBUG", "").lower() in ("1", "true", "yes", "on"):
            raise
        return fail(f"internal error ({type(error).__name__}: {error}); please report it with the input "
                    "(NCCLSHIM_REPORT_DEBUG=1 shows where)")


if __name__ == "__main__":
    sys.exit(main())
