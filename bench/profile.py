"""Where a figure's time goes: `perf record` on the release app while it does what the figure
measures, then the report's heaviest entries (with their callers' libraries).

    python bench/profile.py RELEASE_DIR PROGRAMS_DIR FIGURE OUT_DIR

FIGURE is `search` (search as you type, then 2,000 rows loaded by scrolling), `sign-in` (launch
to the authorize page, five launches) or `redirect` (a keyboard sign-in, interception to rows).
Runs inside scripts/test-session.sh, like bench.py, whose pieces it uses. Writes OUT_DIR/FIGURE.data
and OUT_DIR/FIGURE.txt (`perf report --sort dso,symbol`, and `--sort dso` for the libraries).
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

release, programs = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
which, out = sys.argv[3], Path(sys.argv[4]).resolve()
sys.argv = [sys.argv[0], str(release), str(programs), str(out / "unused.json")]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402 — reads sys.argv above

out.mkdir(parents=True, exist_ok=True)
data = out / f"{which}.data"


def record(pid):
    return subprocess.Popen(["perf", "record", "-F", "499", "--call-graph", "dwarf,16384", "-o", str(data), "-p", str(pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def finish(perf):
    perf.send_signal(signal.SIGINT)
    perf.wait(timeout=60)


def main():
    emulator = bench.Emulator("--users", "100000", "--state-dir", str(bench.scratch / "emulator"))
    try:
        if which == "search":
            sys.path.insert(0, str(bench.ROOT / "Tests/SesameAppEndToEndTests/EndToEnd"))
            from sesame_e2e import Widgets
            app = bench.App(emulator, "profile-search")
            try:
                mark = app.sign_in_alex()
                app.wait(lambda e: e.get("event") == "list-rendered" and int(e.get("rows", 0)) > 0, mark)
                ui = Widgets.of_process(str(app.trace))
                perf = record(app.process.pid)
                time.sleep(1)
                for prefix in bench.PREFIXES:
                    mark = len(app.events())
                    ui.type("Search the directory", prefix)
                    app.wait(lambda e: e.get("event") == "list-rendered" and e.get("view") == "directory", mark)
                mark = len(app.events())
                ui.type("Search the directory", "")
                app.wait(lambda e: e.get("event") == "list-rendered" and e.get("view") == "directory", mark)
                rows = 0
                while rows < 2000:
                    mark = len(app.events())
                    ui.scroll_to_end("People")
                    rows = int(app.wait(lambda e: e.get("event") == "list-rendered", mark, timeout=30)["rows"])
                finish(perf)
            finally:
                app.stop()
        elif which == "redirect":
            app = bench.App(emulator, "profile-redirect")
            try:
                app.wait(lambda e: e.get("event") == "page-loaded")
                perf = record(app.process.pid)
                mark = app.sign_in_alex()
                app.wait(lambda e: e.get("event") == "list-rendered" and int(e.get("rows", 0)) > 0, mark)
                time.sleep(0.5)
                finish(perf)
            finally:
                app.stop()
        elif which == "sign-in":
            env = bench.isolated_env("profile-sign-in")
            trace = bench.scratch / "profile-sign-in.jsonl"
            perf = subprocess.Popen(["perf", "record", "-F", "1999", "-g", "-o", str(data), "--", bench.sesame_program("sesame"),
                                     f"--emulator={emulator.base}", f"--trace-events={trace}", "--sample=directory"],
                                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            bench.wait_for_line(trace, lambda e: e.get("event") == "page-loaded")
            # perf passes the signal on to the app, then writes its data.
            perf.send_signal(signal.SIGTERM)
            perf.wait(timeout=60)
        else:
            raise SystemExit(f"no such figure to profile: {which}")
    finally:
        emulator.stop()
    report = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "dso,symbol", "--stdio", "-g", "none"],
                            capture_output=True, text=True).stdout
    libraries = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "dso", "--stdio", "-g", "none"],
                               capture_output=True, text=True).stdout
    lines = [line for line in report.splitlines() if line.strip() and not line.startswith("#")][:60]
    library_lines = [line for line in libraries.splitlines() if line.strip() and not line.startswith("#")][:25]
    text = "\n".join(["by library:", *library_lines, "", "by symbol:", *lines]) + "\n"
    (out / f"{which}.txt").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
