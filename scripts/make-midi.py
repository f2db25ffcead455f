#!/usr/bin/env python3
"""Generates a seeded, music-like Standard MIDI File for the sigpu benchmark corpus.

Pure Python 3, no packages. One song per file, SMF format 1: a conductor track (tempo, time
signature, key) plus 7 instrument tracks -- drums (channel 10), bass, pad, chords, lead,
arpeggio and a counter line -- with song sections (intro, verse, pre-chorus, chorus, bridge,
solo, outro), chord progressions in a random key and mode, drum fills, velocity and timing
humanisation, pan and reverb settings. Each seed gives a different song (tempo, key, mode,
instruments, progressions, melody); the same seed always gives the same bytes.

  scripts/make-midi.py --seed 3 --seconds 360 -o song3.mid

Rendered with fluidsynth and the FluidR3 GM soundfont, then loudness-processed, it encodes
with `flac -8` at about 55-65 % of PCM, like commercial pop (see scripts/make-bench-corpus).
"""

import argparse
import random
import struct
import sys

PPQ = 480  # ticks per quarter note
BAR = 4 * PPQ  # 4/4 throughout
S16 = PPQ // 4  # one sixteenth

MAJOR = [0, 2, 4, 5, 7, 9, 11]
MINOR = [0, 2, 3, 5, 7, 8, 10]

# Progressions as scale degrees (0-based) -- each is 4 chords, one per bar (or two per bar).
PROG_MAJOR = [
    [0, 4, 5, 3],  # I V vi IV
    [5, 3, 0, 4],  # vi IV I V
    [0, 5, 3, 4],  # I vi IV V
    [1, 4, 0, 5],  # ii V I vi
    [0, 3, 4, 3],  # I IV V IV
    [3, 0, 4, 5],  # IV I V vi
    [0, 2, 3, 4],  # I iii IV V
]
PROG_MINOR = [
    [0, 5, 2, 6],  # i VI III VII
    [0, 3, 4, 0],  # i iv v i
    [0, 6, 5, 6],  # i VII VI VII
    [5, 6, 0, 0],  # VI VII i i
    [0, 3, 6, 2],  # i iv VII III
    [0, 5, 3, 4],  # i VI iv v
]

# General MIDI programs per role (0-based).
BASS = [33, 34, 35, 38, 39, 32]
PAD = [89, 88, 48, 50, 91, 94, 49]
CHORDS = [0, 4, 5, 25, 27, 29, 30, 16, 1]
LEAD = [80, 81, 65, 56, 73, 66, 62, 71, 85, 11]
ARP = [46, 11, 8, 82, 98, 12, 24, 108]
COUNTER = [48, 61, 52, 60, 49, 42, 57]

# GM drum keys
KICK, SNARE, CLAP, CHH, PHH, OHH, CRASH, RIDE = 36, 38, 39, 42, 44, 46, 49, 51
TOM_LO, TOM_MID, TOM_HI, TAMB, SHAKER = 45, 47, 50, 54, 70


def vlq(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


class Track:
    def __init__(self, name, channel):
        self.name = name
        self.ch = channel
        self.events = []  # (tick, order, bytes); order: 0 meta/cc, 1 note-off, 2 note-on

    def meta(self, tick, kind, data):
        self.events.append((tick, 0, bytes([0xFF, kind]) + vlq(len(data)) + data))

    def cc(self, tick, ctrl, val):
        self.events.append((tick, 0, bytes([0xB0 | self.ch, ctrl, max(0, min(127, val))])))

    def program(self, tick, prog):
        self.events.append((tick, 0, bytes([0xC0 | self.ch, prog])))

    def pitch_bend(self, tick, val):  # val in -8192..8191
        v = max(0, min(16383, val + 8192))
        self.events.append((tick, 0, bytes([0xE0 | self.ch, v & 0x7F, v >> 7])))

    def note(self, tick, dur, key, vel):
        if not 0 <= key <= 127 or dur <= 0:
            return
        tick = max(0, tick)
        vel = max(1, min(127, int(vel)))
        self.events.append((tick, 2, bytes([0x90 | self.ch, key, vel])))
        self.events.append((tick + dur, 1, bytes([0x80 | self.ch, key, 0])))

    def encode(self):
        body = bytearray()
        body += vlq(0) + bytes([0xFF, 0x03]) + vlq(len(self.name)) + self.name.encode()
        last = 0
        for tick, _, data in sorted(self.events, key=lambda e: (e[0], e[1])):
            body += vlq(tick - last) + data
            last = tick
        body += vlq(0) + bytes([0xFF, 0x2F, 0x00])
        return b"MTrk" + struct.pack(">I", len(body)) + bytes(body)


class Song:
    def __init__(self, seed, seconds):
        self.r = random.Random(seed)
        r = self.r
        self.seed = seed
        self.tempo = r.choice([84, 90, 96, 100, 104, 108, 112, 116, 120, 124, 128, 132, 140])
        self.minor = r.random() < 0.45
        self.scale = MINOR if self.minor else MAJOR
        self.root = r.randrange(12)  # pitch class of the tonic
        self.swing = r.choice([0, 0, 0, 0.12, 0.2])  # fraction of a sixteenth
        bar_seconds = 4 * 60.0 / self.tempo
        self.bars = max(8, int(round(seconds / bar_seconds)))
        progs = PROG_MINOR if self.minor else PROG_MAJOR
        self.progs = {
            name: r.choice(progs) for name in ("intro", "verse", "pre", "chorus", "bridge", "solo", "outro")
        }
        self.progs["outro"] = self.progs["chorus"]
        self.progs["intro"] = self.progs["verse"] if r.random() < 0.5 else self.progs["chorus"]
        self.chords_per_bar = r.choice([1, 1, 1, 2])
        self.sections = self.form()
        self.programs = {
            "bass": r.choice(BASS), "pad": r.choice(PAD), "chords": r.choice(CHORDS),
            "lead": r.choice(LEAD), "arp": r.choice(ARP), "counter": r.choice(COUNTER),
        }
        self.kit = r.choice([0, 0, 8, 16, 24, 25, 32])  # GM2 kit numbers via program change
        self.drum_style = r.choice(["rock", "four", "half", "funk", "shuffle"])
        self.motifs = {}  # section name -> melody motif (list of (offset16, len16, degree))

    def form(self):
        """List of (name, bars) filling self.bars."""
        r = self.r
        plan = [("intro", 4)]
        cycle = [("verse", 8), ("pre", 4), ("chorus", 8), ("verse", 8), ("pre", 4), ("chorus", 8),
                 ("bridge", 8), ("solo", 8), ("chorus", 8), ("chorus", 8)]
        if r.random() < 0.4:
            cycle = [("verse", 16), ("chorus", 8), ("verse", 8), ("chorus", 8), ("solo", 16),
                     ("bridge", 8), ("chorus", 16)]
        i = 0
        total = 4
        outro = 4
        while total < self.bars - outro:
            name, n = cycle[i % len(cycle)]
            n = min(n, self.bars - outro - total)
            plan.append((name, n))
            total += n
            i += 1
        plan.append(("outro", self.bars - total))
        return plan

    # --- harmony ---------------------------------------------------------------------------
    def degree_pitch(self, degree, octave):
        """MIDI key of a scale degree (may exceed 0..6) in a given octave (C4 = octave 5)."""
        o, d = divmod(degree, 7)
        return 12 * (octave + o) + self.root + self.scale[d]

    def chord(self, degree, sevenths=False):
        """Scale degrees of the chord on `degree`."""
        ds = [degree, degree + 2, degree + 4]
        if sevenths:
            ds.append(degree + 6)
        return ds

    def chord_at(self, section, bar_in_section, half):
        prog = self.progs[section]
        if self.chords_per_bar == 2:
            idx = (bar_in_section * 2 + half) % len(prog)
        else:
            idx = bar_in_section % len(prog)
        return prog[idx]

    # --- helpers ---------------------------------------------------------------------------
    def t(self, tick, sixteenth_index=None):
        """Humanised tick: swing on off-sixteenths, small jitter."""
        if sixteenth_index is not None and sixteenth_index % 2 == 1:
            tick += int(self.swing * S16)
        return max(0, tick + self.r.randint(-6, 6))

    def vel(self, base, spread=10):
        return base + self.r.randint(-spread, spread)

    # --- generation ------------------------------------------------------------------------
    def build(self):
        r = self.r
        cond = Track("conductor", 0)
        us = int(60_000_000 / self.tempo)
        cond.meta(0, 0x51, us.to_bytes(3, "big"))
        cond.meta(0, 0x58, bytes([4, 2, 24, 8]))
        sf = [0, -5, 2, -3, 4, -1, 6, 1, -4, 3, -2, 5][self.root]  # sharps/flats of major key
        cond.meta(0, 0x59, bytes([(sf - 3 if self.minor else sf) & 0xFF, 1 if self.minor else 0]))

        drums = Track("drums", 9)
        bass = Track("bass", 0)
        pad = Track("pad", 1)
        chords = Track("chords", 2)
        lead = Track("lead", 3)
        arp = Track("arpeggio", 4)
        counter = Track("counter", 5)
        tracks = [drums, bass, pad, chords, lead, arp, counter]
        setup = {
            # (program, volume, pan, reverb send): sends kept moderate, as in a pop mix; the
            # wetter defaults make flac -8 ratios rise by several percent
            drums: (self.kit, 100, 64, 15), bass: (self.programs["bass"], 105, 64, 5),
            pad: (self.programs["pad"], 70, r.randint(30, 50), 40),
            chords: (self.programs["chords"], 85, r.randint(74, 96), 25),
            lead: (self.programs["lead"], 100, r.randint(56, 72), 35),
            arp: (self.programs["arp"], 68, r.randint(88, 110), 35),
            counter: (self.programs["counter"], 72, r.randint(20, 44), 40),
        }
        for tr, (prog, vol, pan, rev) in setup.items():
            tr.program(0, prog)
            tr.cc(0, 7, vol)
            tr.cc(0, 10, pan)
            tr.cc(0, 91, rev)
            tr.cc(0, 93, r.randint(0, 20))  # chorus send

        bar0 = 0
        for si, (name, nbars) in enumerate(self.sections):
            last_section = si == len(self.sections) - 1
            for b in range(nbars):
                tick = (bar0 + b) * BAR
                final_bar = b == nbars - 1
                energy = {"intro": 0.5, "verse": 0.7, "pre": 0.8, "chorus": 1.0, "bridge": 0.65,
                          "solo": 0.95, "outro": 0.6}[name]
                if last_section:
                    energy *= max(0.3, 1.0 - b / max(1, nbars))
                halves = [self.chord_at(name, b, h) for h in (0, 1)]
                self.drum_bar(drums, tick, name, b, final_bar, energy, first=(b == 0))
                self.bass_bar(bass, tick, halves, energy)
                self.pad_bar(pad, tick, halves, energy, name)
                if name != "intro" or b >= 2:
                    self.chords_bar(chords, tick, halves, energy, name)
                if name in ("verse", "chorus", "solo", "outro", "pre"):
                    self.lead_bar(lead, tick, name, b, halves, energy)
                if name in ("chorus", "pre", "bridge", "solo", "intro") or r.random() < 0.3:
                    self.arp_bar(arp, tick, halves, energy)
                if name in ("chorus", "bridge", "solo", "outro"):
                    self.counter_bar(counter, tick, halves, energy)
            bar0 += nbars
        end = bar0 * BAR + 2 * BAR  # let the reverb ring out
        for tr in [cond] + tracks:
            tr.meta(end, 0x01, b"end")  # text event pins every track to the same length
        return [cond] + tracks

    def drum_bar(self, tr, tick, section, b, final_bar, energy, first):
        r = self.r
        base = int(70 + 45 * energy)
        style = self.drum_style
        if first and section != "intro":
            tr.note(tick, PPQ * 2, CRASH, self.vel(base + 5))
        if section == "intro" and b < 2:
            for i in range(0, 16, 4):
                tr.note(self.t(tick + i * S16), S16, CHH, self.vel(base - 30))
            return
        hat = RIDE if section in ("bridge", "solo") and r.random() < 0.7 else CHH
        for i in range(16):
            at = tick + i * S16
            # kick
            k = False
            if style == "four":
                k = i % 4 == 0
            elif style == "half":
                k = i in (0, 10) or (i == 7 and r.random() < 0.3)
            elif style == "funk":
                k = i in (0, 3, 6, 10) or (i == 13 and r.random() < 0.5)
            elif style == "shuffle":
                k = i in (0, 6, 8) or (i == 14 and r.random() < 0.3)
            else:
                k = i in (0, 8) or (i in (6, 10) and r.random() < 0.45)
            if k:
                tr.note(self.t(at, i), S16, KICK, self.vel(base + 8, 6))
            # snare / clap on 2 and 4 (on 3 for half-time)
            if (style == "half" and i == 8) or (style != "half" and i in (4, 12)):
                tr.note(self.t(at, i), S16, SNARE, self.vel(base + 5, 6))
                if energy > 0.9 and r.random() < 0.5:
                    tr.note(self.t(at, i), S16, CLAP, self.vel(base - 10))
            elif style == "funk" and i in (7, 9, 15) and r.random() < 0.35:
                tr.note(self.t(at, i), S16, SNARE, self.vel(base - 35))  # ghost notes
            # hats
            if energy >= 0.9 or style == "funk":
                hit = True
            else:
                hit = i % 2 == 0
            if hit:
                accent = 12 if i % 4 == 0 else (0 if i % 2 == 0 else -12)
                key = OHH if (i == 14 and r.random() < 0.4) else hat
                tr.note(self.t(at, i), S16, key, self.vel(base - 25 + accent, 8))
            if energy > 0.9 and i % 4 == 2 and r.random() < 0.5:
                tr.note(self.t(at, i), S16, r.choice([TAMB, SHAKER]), self.vel(base - 35))
        if final_bar:  # fill over the last beat(s)
            n = r.choice([4, 6, 8])
            toms = [TOM_HI, TOM_HI, TOM_MID, TOM_MID, TOM_LO, TOM_LO, SNARE, SNARE]
            for j in range(n):
                i = 16 - n + j
                tr.note(self.t(tick + i * S16), S16, r.choice(toms), self.vel(base, 12))

    def bass_bar(self, tr, tick, halves, energy):
        r = self.r
        pattern = r.choice([
            [(0, 4), (4, 4), (8, 4), (12, 4)],
            [(0, 3), (3, 3), (6, 2), (8, 3), (11, 3), (14, 2)],
            [(0, 2), (2, 2), (4, 2), (6, 2), (8, 2), (10, 2), (12, 2), (14, 2)],
            [(0, 6), (6, 2), (8, 6), (14, 2)],
        ]) if energy > 0.6 else [(0, 8), (8, 8)]
        for start, length in pattern:
            degree = halves[0 if start < 8 else 1]
            key = self.degree_pitch(degree, 3)
            if key < 28:
                key += 12
            if start % 4 != 0 and r.random() < 0.25:
                key += r.choice([12, 7, -5 if key > 40 else 7])
            tr.note(self.t(tick + start * S16, start), length * S16 - 20, key, self.vel(int(85 + 25 * energy), 8))

    def pad_bar(self, tr, tick, halves, energy, section):
        if section == "chorus" and energy > 0.9 and self.r.random() < 0.5:
            return  # pads drop out at times in the chorus
        span = BAR if halves[0] == halves[1] else BAR // 2
        for h, degree in enumerate(halves if span == BAR // 2 else halves[:1]):
            for d in self.chord(degree, sevenths=self.r.random() < 0.3):
                tr.note(tick + h * span, span - 10, self.degree_pitch(d, 5), self.vel(int(50 + 30 * energy), 4))

    def chords_bar(self, tr, tick, halves, energy, section):
        r = self.r
        rhythm = r.choice([
            [0, 4, 8, 12], [0, 3, 6, 8, 11, 14], [0, 6, 10], [2, 6, 10, 14], [0, 8], [0, 2, 4, 6, 8, 10, 12, 14],
        ]) if section != "intro" else [0, 8]
        for start in rhythm:
            degree = halves[0 if start < 8 else 1]
            notes = [self.degree_pitch(d, 4) for d in self.chord(degree, sevenths=r.random() < 0.25)]
            # voice-lead: keep the chord in the C4-ish register
            notes = [n + 12 if n < 55 else n for n in notes]
            strum = 0
            for n in notes:
                tr.note(self.t(tick + start * S16, start) + strum, 2 * S16 + r.randint(0, S16), n,
                        self.vel(int(60 + 35 * energy), 8))
                strum += r.randint(4, 14)

    def lead_bar(self, tr, tick, section, b, halves, energy):
        r = self.r
        key = section if section != "outro" else "chorus"
        if key not in self.motifs:
            # A two-bar motif: (start16, len16, degree offset from the chord root)
            mr = random.Random(r.random())
            motif = []
            pos = 0
            while pos < 32:
                length = mr.choice([2, 2, 2, 4, 4, 3, 6, 8, 1])
                if mr.random() < 0.2:
                    pos += length  # rest
                    continue
                motif.append((pos, min(length, 32 - pos), mr.choice([0, 2, 4, 1, 3, 5, 7, -1, -3])))
                pos += length
            self.motifs[key] = motif
        motif = self.motifs[key]
        half_bar = (b % 2) * 16
        solo = section == "solo"
        for start, length, deg in motif:
            if not half_bar <= start < half_bar + 16:
                continue
            s = start - half_bar
            degree = halves[0 if s < 8 else 1] + deg
            if solo and r.random() < 0.4:
                degree += r.choice([-2, -1, 1, 2, 4])
            note = self.degree_pitch(degree, 5 if not solo else 6)
            at = self.t(tick + s * S16, s)
            dur = length * S16 - 15
            if solo and length >= 4 and r.random() < 0.5:  # split into faster notes
                for j in range(length // 2):
                    tr.note(at + j * 2 * S16, 2 * S16 - 10, self.degree_pitch(degree + r.choice([0, 1, 2, -1]), 6),
                            self.vel(int(80 + 30 * energy)))
                continue
            tr.note(at, dur, note, self.vel(int(80 + 30 * energy)))
            if length >= 6 and r.random() < 0.3:  # a little vibrato via pitch bend
                for j in range(1, 6):
                    tr.pitch_bend(at + j * dur // 6, (300 if j % 2 else -300))
                tr.pitch_bend(at + dur, 0)

    def arp_bar(self, tr, tick, halves, energy):
        r = self.r
        step = r.choice([1, 2, 2])
        shape = r.choice(["up", "down", "updown"])
        for i in range(0, 16, step):
            degree = halves[0 if i < 8 else 1]
            tones = [self.degree_pitch(d, 6) for d in self.chord(degree)] + [self.degree_pitch(degree + 7, 6)]
            if shape == "down":
                tones = tones[::-1]
            elif shape == "updown":
                tones = tones + tones[-2:0:-1]
            n = tones[(i // step) % len(tones)]
            tr.note(self.t(tick + i * S16, i), step * S16 - 10, n, self.vel(int(55 + 30 * energy), 8))

    def counter_bar(self, tr, tick, halves, energy):
        r = self.r
        for h in (0, 1):
            degree = halves[h] + r.choice([2, 4, 4, 6])
            tr.note(tick + h * 8 * S16, 8 * S16 - 20, self.degree_pitch(degree, 5), self.vel(int(60 + 30 * energy), 6))

    def describe(self):
        names = "C C# D D# E F F# G G# A A# B".split()
        return (f"seed {self.seed}: {self.tempo} bpm, {names[self.root]} {'minor' if self.minor else 'major'}, "
                f"{self.bars} bars, drums {self.drum_style}, programs {self.programs}")


def write_midi(path, tracks):
    data = b"MThd" + struct.pack(">IHHH", 6, 1, len(tracks), PPQ)
    for tr in tracks:
        data += tr.encode()
    with open(path, "wb") as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=360.0, help="song length (default 360)")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args()
    song = Song(a.seed, a.seconds)
    write_midi(a.output, song.build())
    if not a.quiet:
        print(song.describe(), file=sys.stderr)


if __name__ == "__main__":
    main()
