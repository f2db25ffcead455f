#!/usr/bin/env python3
"""The `sigpu` command line against libFLAC's `flac` on one long file, as users run them: whole
processes, input from the page cache, PCM to /dev/null, MD5 checked. Prints each command's
min/median/max time over three runs, PCM MB/s, the ratio to `flac -d`, peak memory, and a host
memory copy of the PCM as the bound a process that writes its PCM once cannot beat.

    bench/cli_flac.py SIGPU FLAC FILE.flac [BACKEND...]     (default backends: cuda cpu-parallel)
"""
import os
import subprocess
import sys
import time

sigpu, flac, path = sys.argv[1:4]
backends = sys.argv[4:] or ["cuda", "cpu-parallel"]

info = subprocess.run([sigpu, "flac", "info", path], capture_output=True, text=True).stdout
fields = {line[:20].strip(): line[20:].strip() for line in info.splitlines()
          if line.startswith("  ")}
samples = int(fields["total samples"].split()[0])
channels = int(fields["channels"])
bits = int(fields["bits per sample"].split()[0])
pcm = samples * channels * ((bits + 7) // 8)

runs = [("libFLAC flac -d (1 core)", [flac, "-s", "-d", "-c", path]),
        ("libFLAC flac -t (1 core)", [flac, "-s", "-t", path])]
for b in backends:
    runs.append((f"sigpu flac decode {b}",
                 [sigpu, "flac", "decode", path, "-o", "/dev/null", "--format", "wav", "-q",
                  "--backend", b]))
    runs.append((f"sigpu flac test {b}", [sigpu, "flac", "test", path, "--backend", b]))
if "cuda" in backends:
    runs.append(("sigpu flac decode cuda, whole file (--devices 0)",
                 [sigpu, "flac", "decode", path, "-o", "/dev/null", "--format", "wav", "-q",
                  "--backend", "cuda", "--devices", "0"]))


def one(cmd):
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execv(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


block = bytearray(pcm)
start = time.perf_counter()
copy = bytes(block)
bound = time.perf_counter() - start
del copy, block

print(f"{os.path.basename(path)}: {os.path.getsize(path) / 1e6:.0f} MB of FLAC, "
      f"{pcm / 1e6:.0f} MB of PCM; host copy of the PCM {pcm / bound / 1e6:.0f} MB/s")
print(f"{'command':50s} {'min s':>7s} {'med s':>7s} {'max s':>7s} {'PCM MB/s':>9s} "
      f"{'x flac -d':>9s} {'% copy':>7s} {'RSS MB':>7s} rc")
base = None
for name, cmd in runs:
    r = [one(cmd) for _ in range(3)]
    t = sorted(x[0] for x in r)
    base = base or t[1]
    print(f"{name:50s} {t[0]:7.3f} {t[1]:7.3f} {t[2]:7.3f} {pcm / t[1] / 1e6:9.0f} "
          f"{base / t[1]:9.1f} {100 * bound / t[1]:6.1f}% {max(x[1] for x in r):7.0f} "
          f"{max(x[2] for x in r)}")
