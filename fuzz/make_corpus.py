#!/usr/bin/env python3
"""Writes seed corpora for the FLAC fuzz targets: tiny files made with the `flac` CLI.

    fuzz/make_corpus.py OUTDIR      -> OUTDIR/fuzz_flac/*, OUTDIR/fuzz_flac_frames/*

Mono to multichannel, 8 to 32 bits, every subframe type (constant, verbatim, fixed, LPC),
stereo decorrelation, wasted bits, short last frames, metadata and an ID3v2 prefix. Inputs for
fuzz_flac_frames carry the control bytes that fuzz_flac_frames.cpp documents.
"""
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

RATES = [8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000, 176400, 192000,
         1, 7350, 65535, 655350]

# name, channels, bits, rate, samples, signal, extra flac options
CASES = [
    ("mono8_sine", 1, 8, 8000, 300, "sine", ["-b", "192", "-5"]),
    ("stereo16_mix", 2, 16, 44100, 400, "mix", ["-b", "192", "-8"]),
    ("stereo16_fast", 2, 16, 44100, 400, "mix", ["-b", "192", "-0"]),
    ("stereo24_lpc", 2, 24, 96000, 300, "sine", ["-b", "256", "-8"]),
    ("mono16_silence", 1, 16, 48000, 300, "silence", ["-b", "192"]),
    ("stereo16_noise", 2, 16, 44100, 300, "noise", ["-b", "192", "-5"]),
    ("ch3_16", 3, 16, 48000, 300, "mix", ["-b", "192", "-5"]),
    ("ch8_8", 8, 8, 22050, 200, "mix", ["-b", "192", "-3"]),
    ("mono16_wasted", 1, 16, 44100, 300, "wasted", ["-b", "192", "-8"]),
    ("mono12", 1, 12, 16000, 300, "sine", ["-b", "192", "-8"]),
    ("mono20", 1, 20, 32000, 300, "mix", ["-b", "192", "-8"]),
    ("mono32", 1, 32, 48000, 300, "mix", ["-b", "192", "-8"]),
    ("stereo16_short_last", 2, 16, 44100, 300, "mix", ["-b", "4096", "-5"]),
    ("stereo16_exhaustive", 2, 16, 44100, 300, "mix",
     ["-b", "192", "-l", "32", "-p", "-e", "-r", "0,8"]),
]


def signal(kind, channels, bits, samples, rng):
    top = (1 << (bits - 1)) - 1
    out = []
    for i in range(samples):
        for c in range(channels):
            s = math.sin(2 * math.pi * (220 * (c + 1)) * i / 8000.0)
            if kind == "sine":
                v = int(s * top * 0.8)
            elif kind == "noise":
                v = rng.randint(-top - 1, top)
            elif kind == "silence":
                v = 0
            elif kind == "wasted":
                v = (int(s * (top >> 4) * 0.8)) << 4
            else:  # mix: tone plus a little noise, channels correlated
                v = int(s * top * 0.6) + rng.randint(-(top >> 6) - 1, top >> 6)
            out.append(max(-top - 1, min(top, v)))
    return out


def pack(values, bits):
    width = (bits + 7) // 8
    b = bytearray()
    for v in values:
        b += (v & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
    return bytes(b)


def wav_extensible(values, channels, bits, rate):
    """WAVE_FORMAT_EXTENSIBLE with `bits` valid bits in a 16- or 24-bit container: the way
    to hand the flac CLI sample sizes that are not a whole number of bytes."""
    container = 16 if bits <= 16 else 24
    data = pack([v << (container - bits) for v in values], container)
    align = channels * container // 8
    guid_pcm = b"\x01\x00\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
    fmt = struct.pack("<HHIIHHHHI", 0xFFFE, channels, rate, rate * align, align, container, 22,
                      bits, 0) + guid_pcm
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def encode(values, channels, bits, rate, opts, extra, tmp):
    dst = os.path.join(tmp, "out.flac")
    if bits % 8 == 0:
        src = os.path.join(tmp, "in.raw")
        with open(src, "wb") as f:
            f.write(pack(values, bits))
        fmt = ["--force-raw-format", "--endian=little", "--sign=signed",
               f"--channels={channels}", f"--bps={bits}", f"--sample-rate={rate}"]
    else:
        src = os.path.join(tmp, "in.wav")
        with open(src, "wb") as f:
            f.write(wav_extensible(values, channels, bits, rate))
        fmt = []
    pad = [] if any(e.startswith("--padding") for e in extra) else ["--no-padding"]
    cmd = ["flac", "--silent", "--force", "--lax", *pad, *fmt, *opts, *extra, "-o", dst, src]
    subprocess.run(cmd, check=True)
    with open(dst, "rb") as f:
        return f.read()


def crc8(b):
    c = 0
    for x in b:
        c ^= x
        for _ in range(8):
            c = ((c << 1) ^ 0x07) & 0xFF if c & 0x80 else (c << 1) & 0xFF
    return c


def crc16(b):
    c = 0
    for x in b:
        c ^= x << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x8005) & 0xFFFF if c & 0x8000 else (c << 1) & 0xFFFF
    return c


def audio_offset(data):
    pos = 4
    while True:
        last, length = data[pos] & 0x80, int.from_bytes(data[pos + 1:pos + 4], "big")
        pos += 4 + length
        if last:
            return pos


def header_len(b, i):
    if i + 5 > len(b):
        return 0
    first, n = b[i + 4], 1
    if first >= 0x80:
        if first == 0xFF or first & 0xC0 == 0x80:
            return 0
        while first & (0x80 >> n):
            n += 1
    bs, sr = b[i + 2] >> 4, b[i + 2] & 15
    return 4 + n + {6: 1, 7: 2}.get(bs, 0) + {12: 1, 13: 2, 14: 2}.get(sr, 0) + 1


def split_frames(frames):
    """Start offsets of the frames: sync code with a valid header CRC-8."""
    starts = []
    for i in range(len(frames) - 6):
        if frames[i] == 0xFF and frames[i + 1] & 0xFE == 0xF8:
            h = header_len(frames, i)
            if h and i + h <= len(frames) and crc8(frames[i:i + h - 1]) == frames[i + h - 1]:
                starts.append(i)
    starts.append(len(frames))
    # Keep only boundaries whose frame checks with CRC-16 (drops false syncs inside frames).
    good, i = [], 0
    while i < len(starts) - 1:
        for j in range(i + 1, len(starts)):
            if crc16(frames[starts[i]:starts[j]]) == 0:
                good.append((starts[i], starts[j]))
                i = j
                break
        else:
            break
    return good


def overrun_comment(data):
    """The file with its VORBIS_COMMENT's vendor length set past the block's end."""
    out, pos = bytearray(data), 4
    while pos < len(out):
        kind, length = out[pos] & 0x7F, int.from_bytes(out[pos + 1:pos + 4], "big")
        if kind == 4:
            out[pos + 4:pos + 8] = (length + 1000).to_bytes(4, "little")
            return bytes(out)
        if out[pos] & 0x80:
            break
        pos += 4 + length
    raise SystemExit("make_corpus: the tagged seed has no VORBIS_COMMENT")


def main():
    out = sys.argv[1]
    whole, frames_dir = os.path.join(out, "fuzz_flac"), os.path.join(out, "fuzz_flac_frames")
    os.makedirs(whole, exist_ok=True)
    os.makedirs(frames_dir, exist_ok=True)
    rng = random.Random(9639)
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, ch, bits, rate, n, kind, opts in CASES:
            data = encode(signal(kind, ch, bits, n, rng), ch, bits, rate, opts, [], tmp)
            open(os.path.join(whole, name + ".flac"), "wb").write(data)
            count += 1
            frames = data[audio_offset(data):]
            rate_index = RATES.index(rate) if rate in RATES else 6
            control = bytes([(ch - 1), (bits - 4), rate_index | 0x40]) + struct.pack("<H", n)
            open(os.path.join(frames_dir, name + ".raw"), "wb").write(control + frames)
            chunks = b"".join(struct.pack("<H", e - s - 2) + frames[s:e - 2]
                              for s, e in split_frames(frames))
            framed = bytes([control[0] | 0x08]) + control[1:] + chunks
            open(os.path.join(frames_dir, name + ".framed"), "wb").write(framed)
            count += 2
        # Metadata-heavy file and an ID3v2-prefixed one, for the container parser.
        tagged = encode(signal("mix", 2, 16, 300, rng), 2, 16, 44100, ["-b", "192"],
                        ["-T", "TITLE=seed", "-T", "ARTIST=sigpu", "-S", "2", "-S", "100",
                         "--padding=64"], tmp)
        open(os.path.join(whole, "tagged.flac"), "wb").write(tagged)
        id3 = b"ID3\x04\x00\x00\x00\x00\x00\x0a" + b"\x00" * 10
        open(os.path.join(whole, "id3.flac"), "wb").write(id3 + tagged)
        # Frames alone, without marker or metadata.
        open(os.path.join(whole, "frames_only.flac"), "wb").write(tagged[audio_offset(tagged):])
        # The shapes libFLAC recovers from: junk before the marker, junk before the first
        # frame of a stream without one, and a VORBIS_COMMENT whose vendor length overruns it.
        junk = bytes(rng.randrange(256) for _ in range(300))
        open(os.path.join(whole, "junk_marker.flac"), "wb").write(junk + tagged)
        open(os.path.join(whole, "junk_frames.flac"), "wb").write(
            junk + tagged[audio_offset(tagged):])
        open(os.path.join(whole, "bad_comment.flac"), "wb").write(overrun_comment(tagged))
        count += 6
    print(f"make_corpus: {count} seeds in {out}")


if __name__ == "__main__":
    main()
