#!/usr/bin/env python3
"""Writes a seeded, pop-like Standard MIDI File (format 1) for rendering with fluidsynth.

Tracks: tempo/meta, drums (channel 10), bass, chords (pads or piano), melody, and an
arpeggio; the instruments, key, tempo and chord progression follow from the seed, and the
song changes section every 8 bars so long renders (the benchmark's 1-hour corpus) do not
loop exactly.

    scripts/make-midi.py --seconds 20 --seed 3 -o song.mid
"""
import argparse
import random
import struct

PPQ = 480  # ticks per quarter note


def vlq(n):
    """MIDI variable-length quantity."""
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


class Track:
    def __init__(self):
        self.events = []  # (tick, order, bytes): note-offs sort before note-ons at one tick

    def note(self, tick, length, channel, key, velocity):
        key = max(0, min(127, key))
        velocity = max(1, min(127, velocity))
        self.events.append((tick, 1, bytes([0x90 | channel, key, velocity])))
        self.events.append((tick + max(1, length), 0, bytes([0x80 | channel, key, 0])))

    def program(self, tick, channel, program):
        self.events.append((tick, -1, bytes([0xC0 | channel, program])))

    def control(self, tick, channel, controller, value):
        self.events.append((tick, -1, bytes([0xB0 | channel, controller, value])))

    def meta(self, tick, kind, data):
        self.events.append((tick, -2, bytes([0xFF, kind]) + vlq(len(data)) + data))

    def encode(self):
        body = bytearray()
        last = 0
        for tick, _, data in sorted(self.events, key=lambda e: (e[0], e[1])):
            body += vlq(tick - last) + data
            last = tick
        body += vlq(0) + b"\xff\x2f\x00"  # end of track
        return b"MTrk" + struct.pack(">I", len(body)) + bytes(body)


MAJOR = [0, 2, 4, 5, 7, 9, 11]
MINOR = [0, 2, 3, 5, 7, 8, 10]
PROGRESSIONS = [[0, 4, 5, 3], [0, 5, 3, 4], [5, 3, 0, 4], [0, 3, 4, 4], [0, 5, 1, 4], [3, 4, 0, 0]]


def song(seconds, seed):
    rng = random.Random(seed)
    bpm = rng.choice([84, 96, 104, 112, 120, 128, 136])
    beat = PPQ
    bar = 4 * beat
    bars = max(1, int(seconds * bpm / 60 / 4 + 0.999))
    root = 48 + rng.randrange(12)
    scale = rng.choice([MAJOR, MINOR])

    def degree(d, octave=0):
        return root + 12 * (octave + d // 7) + scale[d % 7]

    meta, drums, bass, chords, melody, arp = (Track() for _ in range(6))
    meta.meta(0, 0x51, struct.pack(">I", 60_000_000 // bpm)[1:])  # tempo
    meta.meta(0, 0x58, bytes([4, 2, 24, 8]))  # 4/4
    meta.meta(0, 0x03, b"sigpu test song seed %d" % seed)
    bass.program(0, 0, rng.choice([32, 33, 34, 38]))
    chords.program(0, 1, rng.choice([0, 4, 48, 50, 89, 19]))
    melody.program(0, 2, rng.choice([73, 80, 81, 56, 65, 11, 24]))
    arp.program(0, 3, rng.choice([46, 8, 12, 5, 98]))
    for ch, vol, pan in ((0, 110, 64), (1, 80, 40), (2, 100, 80), (3, 70, 100), (9, 110, 64)):
        track = {0: bass, 1: chords, 2: melody, 3: arp, 9: drums}[ch]
        track.control(0, ch, 7, vol)
        track.control(0, ch, 10, pan)
        track.control(0, ch, 91, rng.randrange(20, 70))  # reverb

    progression = rng.choice(PROGRESSIONS)
    melody_degree = 7
    for b in range(bars):
        t0 = b * bar
        if b % 8 == 0 and b:  # new section: new progression, maybe a new groove
            progression = rng.choice(PROGRESSIONS)
        chord = progression[b % len(progression)]
        busy = (b // 8) % 3
        # drums: kick, snare, hats, an occasional crash and fill
        for s in range(16):
            t = t0 + s * beat // 4
            if s % 4 == 0 and (s != 8 or busy):
                drums.note(t, beat // 4, 9, 36, 110 + rng.randrange(-8, 8))
            if s in (4, 12):
                drums.note(t, beat // 4, 9, 38, 100 + rng.randrange(-10, 10))
            if s % 2 == 0 or busy == 2:
                drums.note(t, beat // 8, 9, 42 if s % 8 else 46, 60 + rng.randrange(30))
        if b % 8 == 0:
            drums.note(t0, beat, 9, 49, 100)
        if b % 8 == 7:
            for s in range(8, 16):
                drums.note(t0 + s * beat // 4, beat // 4, 9, rng.choice([45, 47, 48, 50]), 90)
        # bass: root on the beats, fifths and passing notes on the off-beats
        for s in range(8):
            if rng.random() < 0.8 or s == 0:
                d = chord + (4 if s % 4 == 3 else 0) + (rng.choice([0, 7]) if s % 2 else 0)
                bass.note(t0 + s * beat // 2, beat // 2 - 20, 0, degree(d, -1), 95 + rng.randrange(-10, 10))
        # chords: a held triad or a rhythmic pattern
        triad = [degree(chord), degree(chord + 2), degree(chord + 4)]
        if busy == 1:
            for s in (0, 3, 6):
                for k in triad:
                    chords.note(t0 + s * beat // 2, beat - 40, 1, k, 70)
        else:
            for k in triad:
                chords.note(t0, bar - 30, 1, k, 64)
        # arpeggio in sixteenths over the chord
        if busy != 0:
            for s in range(16):
                arp.note(t0 + s * beat // 4, beat // 4 - 10, 3, triad[s % 3] + 12, 50 + rng.randrange(20))
        # melody: a random walk on the scale, leaning toward chord tones, with rests
        t = t0
        while t < t0 + bar:
            length = rng.choice([beat // 2, beat // 2, beat, beat, beat * 3 // 2, beat // 4])
            length = min(length, t0 + bar - t)
            if rng.random() < 0.85:
                melody_degree += rng.choice([-2, -1, -1, 0, 1, 1, 2, 3, -3])
                melody_degree = max(3, min(14, melody_degree))
                if rng.random() < 0.4:
                    melody_degree += (chord - melody_degree) % 2
                melody.note(t, length - 10, 2, degree(melody_degree, 1), 85 + rng.randrange(-15, 15))
            t += length
    tracks = [meta, drums, bass, chords, melody, arp]
    header = b"MThd" + struct.pack(">IHHH", 6, 1, len(tracks), PPQ)
    return header + b"".join(t.encode() for t in tracks)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20.0, help="length of the song (default 20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    with open(args.output, "wb") as f:
        f.write(song(args.seconds, args.seed))


if __name__ == "__main__":
    main()
