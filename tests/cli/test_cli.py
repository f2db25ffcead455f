"""The `sigpu` binary used as a user would: real files made by real encoders, relative, absolute
and odd paths, stdin and stdout, overwrite protection, formats by extension, containers, junk
input, exit codes and messages, and memory that does not grow with the input.

Run by CTest (one test per class) as `python3 tests/cli/test_cli.py SIGPU_BINARY [Class]`.
Streams are made once per run in a temporary folder with flac, sox, ffmpeg and x265; a class
whose tools are missing skips.
"""

import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import wave

SIGPU = None  # set from argv
DATA = None  # a temporary folder of streams, made once

EXIT_OK, EXIT_DAMAGED, EXIT_USAGE, EXIT_INPUT, EXIT_UNSUPPORTED, EXIT_OUTPUT = range(6)


def have(*tools):
    return all(shutil.which(t) for t in tools)


def has_command(name):
    """Whether this build has the module (CMake's SIGPU_MODULES may leave some out)."""
    return subprocess.run([SIGPU, name, "--help"], capture_output=True).returncode == 0


def run(args, cwd=None, stdin=None, input_bytes=None, timeout=120):
    """Runs sigpu; returns (exit code, stdout bytes, stderr text)."""
    p = subprocess.run([SIGPU] + args, cwd=cwd, stdin=stdin, input=input_bytes,
                       capture_output=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def peak_rss_mb(args, cwd=None):
    """Runs sigpu in a child and returns (exit code, its peak resident set in MB)."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        if cwd:
            os.chdir(cwd)
        os.execv(SIGPU, [SIGPU] + args)
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024.0


def read(path, n=-1):
    with open(path, "rb") as f:
        return f.read(n)


def sh(cmd, cwd=None):
    subprocess.run(cmd, shell=True, check=True, cwd=cwd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def leftovers(folder):
    """Temporary outputs left behind: none may be, whatever happened."""
    return [n for n in os.listdir(folder) if ".sigpu-" in n]


class Scratch(unittest.TestCase):
    """Each test gets a fresh folder to work in."""

    command = None  # the module a class needs in the build

    def setUp(self):
        if self.command and not has_command(self.command):
            self.skipTest(f"this build has no {self.command} module")
        self.dir = tempfile.mkdtemp(prefix="sigpu-cli-")

    def tearDown(self):
        self.assertEqual(leftovers(self.dir), [], "temporary files left behind")
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def copy(self, name, as_name=None):
        dest = self.path(as_name or name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(os.path.join(DATA, name), dest)
        return dest

    def assert_exit(self, result, code, message=None):
        rc, _, err = result
        self.assertEqual(rc, code, err)
        if message:
            self.assertIn(message, err)


# ---- streams -------------------------------------------------------------------------------

def make_data(folder):
    if have("sox", "flac"):
        sh("sox -n -r 44100 -c 2 -b 16 tone.wav synth 3 pluck C3 pluck E3 vol 0.5", folder)
        sh("flac -s -8 -o song.flac tone.wav", folder)
    if have("ffmpeg", "x265"):
        sh("ffmpeg -loglevel error -f lavfi -i testsrc2=size=64x64:rate=25 -frames:v 4 "
           "-pix_fmt yuv420p -f yuv4mpegpipe - | x265 --log-level none --input - --y4m "
           "--keyint 1 --hash 1 -o intra.hevc", folder)
        sh("ffmpeg -loglevel error -i intra.hevc -c copy intra.mp4", folder)
        sh("ffmpeg -loglevel error -i intra.hevc -c copy intra.mkv", folder)
        sh("ffmpeg -loglevel error -f lavfi -i testsrc2=size=64x64:rate=25 -frames:v 8 "
           "-pix_fmt yuv420p -f yuv4mpegpipe - | x265 --log-level none --input - --y4m "
           "--keyint 4 --hash 1 -o inter.hevc", folder)
    if have("ffmpeg"):
        sh("ffmpeg -loglevel error -f lavfi -i testsrc2=size=64x32:rate=25 -frames:v 3 "
           "-c:v prores_ks -profile:v 2 clip.mov", folder)
    with open(os.path.join(folder, "random.bin"), "wb") as f:
        f.write(os.urandom(100_000))
    open(os.path.join(folder, "empty.bin"), "wb").close()


# ---- the conventions every command shares --------------------------------------------------

@unittest.skipUnless(have("sox", "flac"), "needs sox and flac")
class Flac(Scratch):
    command = "flac"

    def test_relative_path_writes_next_to_the_input(self):
        self.copy("song.flac")
        self.assert_exit(run(["flac", "decode", "song.flac"], cwd=self.dir), EXIT_OK)
        with wave.open(self.path("song.wav")) as w:
            self.assertEqual((w.getnchannels(), w.getframerate(), w.getnframes()),
                             (2, 44100, 3 * 44100))
        self.assert_exit(run(["flac", "decode", "song.flac", "-o", "out.wav"], cwd=self.dir),
                         EXIT_OK)
        self.assertEqual(read(self.path("out.wav")),
                         read(self.path("song.wav")))

    def test_odd_and_absolute_paths(self):
        src = self.copy("song.flac", "a folder/sóng ♫ 1.flac")
        out = self.path("out dir/ünï cödé.wav")
        os.makedirs(os.path.dirname(out))
        self.assert_exit(run(["flac", "decode", src, "-o", out]), EXIT_OK)
        self.assertTrue(os.path.getsize(out) > 44 + 4 * 44100)
        self.assertEqual(leftovers(os.path.dirname(out)), [])

    def test_stdin_and_stdout(self):
        src = self.copy("song.flac")
        self.assert_exit(run(["flac", "decode", "song.flac", "-o", "file.wav"], cwd=self.dir),
                         EXIT_OK)
        with open(src, "rb") as f:
            rc, out, err = run(["flac", "decode", "-", "-o", "-"], stdin=f)
        self.assertEqual(rc, EXIT_OK, err)
        self.assertEqual(out, read(self.path("file.wav")))
        self.assertFalse(os.path.exists(self.path("-")), "a file named '-' was written")
        # stdin needs a named output
        self.assert_exit(run(["flac", "decode", "-"], input_bytes=read(src)),
                         EXIT_USAGE, "-o")

    def test_formats_by_extension(self):
        self.copy("song.flac")
        for name in ("x.raw", "x.npy", "x.wav"):
            self.assert_exit(run(["flac", "decode", "song.flac", "-o", name], cwd=self.dir),
                             EXIT_OK)
        self.assertEqual(os.path.getsize(self.path("x.raw")), 3 * 44100 * 2 * 2)
        self.assertTrue(read(self.path("x.npy"), 6) == b"\x93NUMPY")
        self.assertEqual(read(self.path("x.wav"), 4), b"RIFF")
        self.assert_exit(run(["flac", "decode", "song.flac", "-o", "x.mp3"], cwd=self.dir),
                         EXIT_USAGE, "cannot tell")
        self.assert_exit(run(["flac", "decode", "song.flac", "-o", "y.wav", "--format", "raw"],
                             cwd=self.dir), EXIT_USAGE, "agree")
        self.assert_exit(run(["flac", "decode", "song.flac", "--format", "raw"], cwd=self.dir),
                         EXIT_OK)
        self.assertTrue(os.path.exists(self.path("song.raw")))

    def test_existing_output_needs_force(self):
        self.copy("song.flac")
        with open(self.path("song.wav"), "wb") as f:
            f.write(b"precious")
        self.assert_exit(run(["flac", "decode", "song.flac"], cwd=self.dir), EXIT_USAGE,
                         "exists")
        self.assertEqual(read(self.path("song.wav")), b"precious")
        self.assert_exit(run(["flac", "decode", "song.flac", "--force"], cwd=self.dir), EXIT_OK)
        self.assertEqual(read(self.path("song.wav"), 4), b"RIFF")

    def test_never_writes_over_an_input(self):
        src = self.copy("song.flac")
        before = read(src)
        os.link(src, self.path("hard.wav"))
        os.symlink(src, self.path("soft.wav"))
        for out in ("song.flac", "hard.wav", "soft.wav"):
            self.assert_exit(run(["flac", "decode", "song.flac", "-o", out, "-f", "--format",
                                  "wav"], cwd=self.dir), EXIT_USAGE, "input")
        self.assertEqual(read(src), before)

    def test_junk_inputs(self):
        self.copy("random.bin", "random.flac")
        self.copy("empty.bin", "empty.flac")
        for verb in ("decode", "test", "info"):
            for name in ("random.flac", "empty.flac"):
                self.assert_exit(run(["flac", verb, name], cwd=self.dir), EXIT_INPUT, name)
            self.assert_exit(run(["flac", verb, "missing.flac"], cwd=self.dir), EXIT_INPUT,
                             "missing.flac")
        os.mkdir(self.path("adir"))
        self.assert_exit(run(["flac", "test", "adir"], cwd=self.dir), EXIT_INPUT,
                         "is a directory")
        self.assertFalse(os.path.exists(self.path("random.wav")))
        self.assertFalse(os.path.exists(self.path("empty.wav")))

    def test_no_permission(self):
        if os.geteuid() == 0:
            self.skipTest("root reads every file")
        src = self.copy("song.flac")
        os.chmod(src, 0)
        self.assert_exit(run(["flac", "decode", "song.flac"], cwd=self.dir), EXIT_INPUT,
                         "Permission denied")
        os.chmod(src, 0o644)
        os.chmod(self.dir, 0o555)
        try:
            self.assert_exit(run(["flac", "decode", "song.flac"], cwd=self.dir), EXIT_OUTPUT)
        finally:
            os.chmod(self.dir, 0o755)

    def test_ogg_is_named(self):
        if not have("ffmpeg"):
            self.skipTest("needs ffmpeg")
        self.copy("song.flac")
        sh("ffmpeg -loglevel error -i song.flac -c:a copy song.oga", self.dir)
        for verb in ("decode", "test", "info"):
            self.assert_exit(run(["flac", verb, "song.oga"], cwd=self.dir), EXIT_UNSUPPORTED,
                             "Ogg")

    def test_output_that_cannot_be_written(self):
        self.copy("song.flac")
        self.assert_exit(run(["flac", "decode", "song.flac", "-o", "no/such/dir/x.wav"],
                             cwd=self.dir), EXIT_OUTPUT, "no/such/dir")
        if os.path.exists("/dev/full"):
            self.assert_exit(run(["flac", "decode", "song.flac", "-o", "/dev/full", "--format",
                                  "wav"], cwd=self.dir), EXIT_OUTPUT, "/dev/full")

    def test_truncated_stream_is_damage(self):
        data = read(os.path.join(DATA, "song.flac"))
        with open(self.path("cut.flac"), "wb") as f:
            f.write(data[: len(data) * 2 // 3])
        rc, _, err = run(["flac", "decode", "cut.flac"], cwd=self.dir)
        self.assertEqual(rc, EXIT_DAMAGED, err)
        self.assertTrue(os.path.exists(self.path("cut.wav")))
        rc, out, err = run(["flac", "test", "cut.flac"], cwd=self.dir)
        self.assertEqual(rc, EXIT_DAMAGED, err)
        self.assertIn(b"FAILED", out)

    def test_dev_zero_is_refused_quickly(self):
        start = time.time()
        rc, _, err = run(["flac", "test", "/dev/zero"], timeout=60)
        self.assertEqual(rc, EXIT_INPUT, err)
        self.assertLess(time.time() - start, 30)

    def test_interrupt_leaves_nothing(self):
        src = read(os.path.join(DATA, "song.flac"))
        p = subprocess.Popen([SIGPU, "flac", "decode", "-", "-o", "out.wav"], cwd=self.dir,
                             stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdin.write(src[: len(src) // 2])
        p.stdin.flush()
        time.sleep(1.0)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
        self.assertEqual(p.returncode, -signal.SIGINT)
        self.assertEqual(os.listdir(self.dir), [])

    def test_batch_to_a_folder(self):
        self.copy("song.flac", "in/a.flac")
        self.copy("song.flac", "in/sub/b.flac")
        self.assert_exit(run(["flac", "decode", "in", "-o", "out", "--format", "npy"],
                             cwd=self.dir), EXIT_OK)
        self.assertTrue(os.path.exists(self.path("out/a.npy")))
        self.assertTrue(os.path.exists(self.path("out/sub/b.npy")))
        self.copy("random.bin", "in/c.flac")
        rc, _, err = run(["flac", "decode", "in", "-o", "out2"], cwd=self.dir)
        self.assertEqual(rc, EXIT_INPUT, err)
        self.assertTrue(os.path.exists(self.path("out2/a.wav")), "the good files still decode")
        self.assertFalse(os.path.exists(self.path("out2/c.wav")))


@unittest.skipUnless(have("sox", "flac"), "needs sox and flac")
class FlacMemory(Scratch):
    """Peak memory of decode and test does not grow with the input's length."""

    command = "flac"

    def test_rss_does_not_grow_with_length(self):
        sh("sox -n -r 44100 -c 2 -b 16 short.wav synth 180 pinknoise vol 0.3", self.dir)
        sh("sox -n -r 44100 -c 2 -b 16 long.wav synth 900 pinknoise vol 0.3", self.dir)
        sh("flac -s -0 --delete-input-file short.wav long.wav", self.dir)
        for args in (["flac", "test", "--backend", "cpu-parallel"],
                     ["flac", "decode", "--backend", "cpu-parallel", "-f", "-o", "out.wav"]):
            rc_s, short = peak_rss_mb(args[:2] + ["short.flac"] + args[2:], cwd=self.dir)
            rc_l, long = peak_rss_mb(args[:2] + ["long.flac"] + args[2:], cwd=self.dir)
            self.assertEqual((rc_s, rc_l), (EXIT_OK, EXIT_OK), args)
            # Both are longer than a decoding window; 15 minutes of PCM are 159 MB, 3 are 32 MB:
            # a decoder holding the stream would show the difference.
            self.assertLess(long, short + 40, f"{args}: {short:.0f} MB for 3 min, "
                            f"{long:.0f} MB for 15 min")


@unittest.skipUnless(have("ffmpeg", "x265"), "needs ffmpeg and x265")
class VideoMemory(Scratch):
    """Peak memory of hevc and prores decodes does not grow with the number of pictures."""

    command = "hevc"

    def stream(self, name, frames, codec):
        src = (f"ffmpeg -loglevel error -f lavfi -i testsrc2=size=128x64:rate=25 -frames:v {frames}")
        if codec == "hevc":
            sh(f"{src} -pix_fmt yuv420p -f yuv4mpegpipe - | x265 --log-level none --input - "
               f"--y4m --keyint 1 --preset ultrafast -o {name}", self.dir)
        else:
            sh(f"{src} -c:v prores_ks -profile:v 2 {name}", self.dir)

    def test_rss_does_not_grow_with_length(self):
        for codec, ext in (("hevc", "hevc"), ("prores", "mov")):
            self.stream(f"short.{ext}", 100, codec)
            self.stream(f"long.{ext}", 2000, codec)
            rss = {}
            for n in ("short", "long"):
                rc, rss[n] = peak_rss_mb([codec, "decode", f"{n}.{ext}", "-o", "/dev/null",
                                          "--backend", "cpu"], cwd=self.dir)
                self.assertEqual(rc, EXIT_OK, codec)
            # 2000 pictures decoded are 50 MB (hevc) or 66 MB (prores, 16-bit 4:2:2).
            self.assertLess(rss["long"], rss["short"] + 20,
                            f"{codec}: {rss['short']:.0f} MB for 100 pictures, "
                            f"{rss['long']:.0f} MB for 2000")


@unittest.skipUnless(have("ffmpeg", "x265"), "needs ffmpeg and x265")
class Hevc(Scratch):
    command = "hevc"

    def test_raw_and_containers_decode_the_same(self):
        for name in ("intra.hevc", "intra.mp4", "intra.mkv"):
            self.copy(name)
            self.assert_exit(run(["hevc", "decode", name, "-o", name + ".yuv"], cwd=self.dir),
                             EXIT_OK)
        raw = read(self.path("intra.hevc.yuv"))
        self.assertEqual(len(raw), 4 * 64 * 64 * 3 // 2)
        for name in ("intra.mp4", "intra.mkv"):
            self.assertEqual(read(self.path(name + ".yuv")), raw, name)

    def test_default_output_stdin_stdout(self):
        self.copy("intra.hevc")
        self.assert_exit(run(["hevc", "decode", "intra.hevc"], cwd=self.dir), EXIT_OK)
        y4m = read(self.path("intra.y4m"))
        self.assertTrue(y4m.startswith(b"YUV4MPEG2 W64 H64"))
        with open(self.path("intra.hevc"), "rb") as f:
            rc, out, err = run(["hevc", "decode", "-", "-o", "-"], stdin=f)
        self.assertEqual(rc, EXIT_OK, err)
        self.assertEqual(out, y4m)
        self.assertFalse(os.path.exists(self.path("-")))

    def test_formats_and_overwrite(self):
        self.copy("intra.hevc")
        self.assert_exit(run(["hevc", "decode", "intra.hevc", "-o", "a.npy"], cwd=self.dir),
                         EXIT_OK)
        head = read(self.path("a.npy"), 128)
        self.assertIn(b"'shape': (4, 6144)", head)
        self.assert_exit(run(["hevc", "decode", "intra.hevc", "-o", "a.npy"], cwd=self.dir),
                         EXIT_USAGE, "exists")
        self.assert_exit(run(["hevc", "decode", "intra.hevc", "-o", "intra.hevc", "-f",
                              "--format", "yuv"], cwd=self.dir), EXIT_USAGE, "input")
        self.assert_exit(run(["hevc", "decode", "intra.hevc", "-o", "a.txt"], cwd=self.dir),
                         EXIT_USAGE, "cannot tell")
        self.assertEqual(os.path.getsize(self.path("intra.hevc")),
                         os.path.getsize(os.path.join(DATA, "intra.hevc")))

    def test_junk_and_unsupported(self):
        self.copy("random.bin")
        self.copy("empty.bin")
        self.copy("inter.hevc")
        for name in ("random.bin", "empty.bin"):
            self.assert_exit(run(["hevc", "decode", name, "-o", "x.yuv"], cwd=self.dir),
                             EXIT_INPUT)
        # P and B pictures decode; unfiltered output of them is refused, the I pictures go out.
        self.assert_exit(run(["hevc", "decode", "inter.hevc", "-o", "x.yuv"], cwd=self.dir),
                         EXIT_OK, "8 hashes matched")
        self.assert_exit(run(["hevc", "decode", "inter.hevc", "-o", "u.yuv", "--unfiltered"],
                             cwd=self.dir), EXIT_DAMAGED, "--unfiltered")
        self.assertFalse(os.path.exists(self.path("x.yuv.sigpu")))
        rc, _, err = run(["hevc", "decode", "/dev/zero", "-o", "z.yuv"], cwd=self.dir,
                         timeout=120)
        self.assertEqual(rc, EXIT_INPUT, err)
        self.assertFalse(os.path.exists(self.path("z.yuv")))

    def test_gpu_options(self):
        self.copy("inter.hevc")
        self.assert_exit(run(["hevc", "decode", "inter.hevc", "-o", "c.yuv", "--backend", "cpu",
                              "--cpu-reconstruction"], cwd=self.dir), EXIT_USAGE,
                         "cuda backend only")
        # Without a device the cuda backend is refused before anything is written.
        rc, _, err = run(["hevc", "decode", "inter.hevc", "-o", "g.yuv", "--backend", "cuda"],
                         cwd=self.dir)
        if rc == EXIT_UNSUPPORTED:
            self.assertIn("needs a CUDA device", err)
            self.assertFalse(os.path.exists(self.path("g.yuv")))
        else:
            self.assertEqual(rc, EXIT_OK, err)


@unittest.skipUnless(have("ffmpeg"), "needs ffmpeg")
class Prores(Scratch):
    command = "prores"

    def test_decode_formats(self):
        self.copy("clip.mov")
        self.assert_exit(run(["prores", "decode", "clip.mov"], cwd=self.dir), EXIT_OK)
        self.assertTrue(read(self.path("clip.y4m")).startswith(b"YUV4MPEG2 W64 H32"))
        self.assert_exit(run(["prores", "decode", "clip.mov", "-o", "c.yuv"], cwd=self.dir),
                         EXIT_OK)
        self.assertEqual(os.path.getsize(self.path("c.yuv")), 3 * 64 * 32 * 2 * 2)
        rc, out, err = run(["prores", "decode", "clip.mov", "-o", "-", "--format", "yuv"],
                           cwd=self.dir)
        self.assertEqual(rc, EXIT_OK, err)
        self.assertEqual(out, read(self.path("c.yuv")))
        self.assert_exit(run(["prores", "decode", "clip.mov", "-o", "clip.mov", "-f",
                              "--format", "yuv"], cwd=self.dir), EXIT_USAGE, "input")
        self.assert_exit(run(["prores", "decode", "clip.mov", "-o", "c.yuv"], cwd=self.dir),
                         EXIT_USAGE, "exists")

    def test_junk(self):
        self.copy("random.bin")
        self.copy("empty.bin")
        for name in ("random.bin", "empty.bin"):
            self.assert_exit(run(["prores", "decode", name, "-o", "x.yuv"], cwd=self.dir),
                             EXIT_INPUT)
            self.assert_exit(run(["prores", "info", name], cwd=self.dir), EXIT_INPUT)
        self.assert_exit(run(["prores", "decode", "nothere.mov", "-o", "x.yuv"], cwd=self.dir),
                         EXIT_INPUT, "nothere.mov")


class Audio(Scratch):
    command = "audio"

    def graph(self):
        return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                            "audio", "console.json")

    def test_check_and_render(self):
        self.assert_exit(run(["audio", "check", self.graph()]), EXIT_OK)
        self.copy("random.bin", "bad.json")
        self.assert_exit(run(["audio", "check", "bad.json"], cwd=self.dir), EXIT_INPUT, "bad.json")
        self.assert_exit(run(["audio", "check", "none.json"], cwd=self.dir), EXIT_INPUT)

    @unittest.skipUnless(have("sox"), "needs sox")
    def test_render_overwrite_and_input(self):
        sh("sox -n -r 48000 -c 4 -b 16 in.wav synth 0.5 sine 440", self.dir)
        args = ["audio", "render", self.graph(), "in.wav", "--set", "N=4"]
        self.assert_exit(run(args + ["-o", "out.wav", "--backend", "cpu"], cwd=self.dir), EXIT_OK)
        self.assert_exit(run(args + ["-o", "out.wav", "--backend", "cpu"], cwd=self.dir),
                         EXIT_USAGE, "exists")
        self.assert_exit(run(args + ["-o", "in.wav", "-f", "--backend", "cpu"], cwd=self.dir),
                         EXIT_USAGE, "input")
        with open(self.path("in.wav"), "rb") as f:
            self.assertEqual(f.read(4), b"RIFF")


class Usage(Scratch):
    def test_usage_errors_exit_2(self):
        self.assert_exit(run([]), EXIT_USAGE)
        self.assert_exit(run(["flac", "decode", "--no-such-option"]), EXIT_USAGE)
        self.assert_exit(run(["flac", "decode"]), EXIT_USAGE, "no inputs")

    def test_help_is_complete(self):
        rc, out, _ = run(["--help"])
        self.assertEqual(rc, EXIT_OK)
        self.assertIn(b"Exit codes", out)
        for cmd in (["flac", "decode"], ["hevc", "decode"], ["prores", "decode"]):
            rc, out, _ = run(cmd + ["--help"])
            self.assertEqual(rc, EXIT_OK)
            for opt in (b"--output", b"--format", b"--force"):
                self.assertIn(opt, out, cmd)


if __name__ == "__main__":
    SIGPU = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="sigpu-cli-data-") as DATA:
        make_data(DATA)
        unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)
