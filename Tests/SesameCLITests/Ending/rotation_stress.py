"""`sesame token` ended at random moments under strict refresh-token rotation: nothing is lost.

Run by EndingTests with a signed-in store (files, no session bus: the command refreshes by
itself) against `identity-emulator --refresh-token-reuse revoke-family`, where a refresh token
works once and a second use revokes the whole sign-in — as a provider with reuse detection does.
Every `sesame token` there refreshes (access tokens live less than the five minutes before expiry
at which Sesame renews them), so every run spends the stored refresh token.

    rotation_stress.py SESAME BASE MODE RUNS

MODE `signals`: each run starts two `sesame token` at once and ends each with SIGTERM or SIGINT
at a random moment of a refresh; then one more, left alone, must print a token.
MODE `disk-full` (run under `unshare --mount`: the store's folder becomes a 2 MiB tmpfs): each
run starts one `sesame token` and fills that disk at a random moment of its refresh; then, the
disk emptied again, one more must print a token. The statuses seen are printed as a summary.
"""
import collections
import os
import random
import signal
import subprocess
import sys
import time

sesame, base, mode, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
environment = dict(os.environ)
data = os.path.join(environment["XDG_DATA_HOME"], "sesame")
COMMAND = [sesame, "token", "--account-type", "myGraphService", "--emulator", base]
# Whatever happens, a run that hangs is a failure, not a wait for ever.
LIMIT = 120


def token(check=True):
    """A `sesame token` left alone: it must print a token (the account was not lost)."""
    result = subprocess.run(COMMAND, env=environment, capture_output=True, text=True, timeout=LIMIT)
    if check and (result.returncode != 0 or not result.stdout.strip()):
        sys.exit(f"LOST: `sesame token` after the run exited {result.returncode}: {result.stderr.strip()}")
    return result


def shell_status(returncode):
    """The status a shell shows: 128 + the signal for one that ended by a signal."""
    return 128 - returncode if returncode < 0 else returncode


def refresh_time():
    """How long a whole `sesame token` takes here (a refresh each time): the window the random
    moments are drawn from."""
    took = []
    for _ in range(3):
        began = time.monotonic()
        token()
        took.append(time.monotonic() - began)
    return max(took)


def signals():
    window = refresh_time()
    seen = collections.Counter()
    said = collections.Counter()
    for run in range(runs):
        programs = [subprocess.Popen(COMMAND, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                    for _ in range(2)]
        began = time.monotonic()
        schedule = sorted(((random.uniform(0, window), program) for program in programs), key=lambda pair: pair[0])
        for moment, program in schedule:
            time.sleep(max(0.0, moment - (time.monotonic() - began)))  # real time on purpose: signals at random moments of a real run
            program.send_signal(random.choice([signal.SIGTERM, signal.SIGINT]))
        for program in programs:
            _, stderr = program.communicate(timeout=LIMIT)
            status = shell_status(program.returncode)
            seen[status] += 1
            if status not in (0, 130, 143):
                sys.exit(f"run {run}: `sesame token` ended with {status}: {stderr.strip()}")
            # Ended before its `main` could handle a signal (the runtime still loading): silent,
            # and nothing done. Past that, it says why it stopped.
            if status in (130, 143) and stderr.strip() and "sesame: stopped (SIG" not in stderr:
                sys.exit(f"run {run}: ended by a signal without saying so: {stderr.strip()!r}")
            if status in (130, 143):
                said[bool(stderr.strip())] += 1
        token()
    print(f"signals: {runs} runs of two, statuses {dict(sorted(seen.items()))} ({said[True]} said why, {said[False]} ended "
          "before main), the account gave a token after each", flush=True)


def fill(path):
    """Writes zeros to `path` until the disk is full."""
    with open(path, "wb") as filler:
        block = b"\0" * 65536
        try:
            while True:
                filler.write(block)
                filler.flush()
        except OSError:
            pass


def disk_full():
    window = refresh_time()
    filler = os.path.join(data, "filler")
    seen = collections.Counter()
    rescued = 0
    for run in range(runs):
        program = subprocess.Popen(COMMAND, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(random.uniform(0, window))  # real time on purpose: the disk fills at a random moment of a real run
        fill(filler)
        stdout, stderr = program.communicate(timeout=LIMIT)
        seen[program.returncode] += 1
        if program.returncode not in (0, 5):
            sys.exit(f"run {run}: `sesame token` on a full disk ended with {program.returncode}: {stderr.strip()}")
        if program.returncode == 5 and "no room left on the disk" not in stderr:
            sys.exit(f"run {run}: a full disk without its sentence: {stderr.strip()!r}")
        runtime = os.path.join(environment["XDG_RUNTIME_DIR"], "sesame")
        rescued += any(name.endswith(".json") for name in os.listdir(runtime)) if os.path.isdir(runtime) else 0
        # Still full: the stored sign-in is intact, and the command says so again.
        still = token(check=False)
        if still.returncode not in (0, 5):
            sys.exit(f"run {run}: on a full disk `sesame token` ended with {still.returncode}: {still.stderr.strip()}")
        os.remove(filler)
        token()
    print(f"disk-full: {runs} runs, statuses {dict(sorted(seen.items()))}, rotated tokens kept aside {rescued}, "
          "the account gave a token after each", flush=True)


if mode == "disk-full":
    # The store's folder on a disk of its own, 2 MiB, with what is in it now.
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    saved = data + ".saved"
    os.rename(data, saved)
    os.makedirs(data, mode=0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", data], check=True)
    subprocess.run(["cp", "-a", saved + "/.", data], check=True)
    disk_full()
else:
    signals()
