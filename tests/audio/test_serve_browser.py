#!/usr/bin/env python3
"""`sigpu audio serve` in a real browser: headless Debian chromium driven by chromium-driver
through python3-selenium, against a graph that loops a file and records what it plays.

  test_serve_browser.py SIGPU_BINARY WORK_DIR [SCREENSHOT.png]

Checks: a wrong or missing token is refused (HTTP and WebSocket); the page draws the graph and
its controls; the meters move, those of the graph's outputs and each node's bus (one bar per
output channel, drawn under the node); adding and removing a node while the file loops leaves no
discontinuity above -60 dBFS (the output after the swaps equals the output one loop earlier);
an invalid edit is refused naming the node and the graph stays; a fader move changes the
level the server measures, and the bus meter of the node it belongs to, by what it says, while
the bus before it stays. Exit 77 (skipped) without chromium, its driver or
selenium, or when the binary was built without the server.
"""
import json
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
import wave

SKIP = 77
RATE, LOOP = 48000, 24000  # a 0.5 s loop
LIMIT_DBFS = -60.0
TOKEN = [""]


def skip(why):
    print("skipped:", why)
    sys.exit(SKIP)


def write_loop(path):
    """Half a second of two partials and a little noise-like third, 16-bit mono."""
    frames = bytearray()
    for n in range(LOOP):
        x = 0.3 * math.sin(2 * math.pi * 220 * n / RATE) + 0.15 * math.sin(
            2 * math.pi * 1330 * n / RATE) + 0.05 * math.sin(2 * math.pi * 5170.3 * n / RATE)
        frames += struct.pack("<h", int(round(x * 32767)))
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(bytes(frames))


def read_float_wav(path):
    """libsndfile's float WAV: the data chunk as interleaved float32 (channels, samples)."""
    data = open(path, "rb").read()
    pos, channels, samples = 12, 0, b""
    while pos + 8 <= len(data):
        tag, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        body = data[pos + 8:pos + 8 + size]
        if tag == b"fmt ":
            channels = struct.unpack("<H", body[2:4])[0]
        elif tag == b"data":
            samples = body
        pos += 8 + size + (size & 1)
    values = struct.unpack("<%df" % (len(samples) // 4), samples[:len(samples) // 4 * 4])
    return channels, values


def http(url, body=None):
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def websocket_status(port, token):
    """The HTTP status a WebSocket upgrade with this token gets."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(("GET /ws?token=%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n" % (token, port)).encode())
        return int(s.recv(4096).split(b" ")[1])


def out_rms_db(base):
    status, body = http(base + "api/levels?token=" + TOKEN[0])
    assert status == 200, body
    return json.loads(body)["levels"]["out_rms"][0]


def mean_db(values):
    """dB of the mean power."""
    return 10 * math.log10(sum(10 ** (v / 10) for v in values) / len(values))


def steady_rms_db(base, seconds=0.6, page=None):
    """The output level averaged over a few meter windows; with `page` (a function returning a
    list of dB values read from the page) those averaged over the same windows too."""
    values, shown = [], []
    end = time.time() + seconds
    while time.time() < end:
        values.append(out_rms_db(base))
        if page:
            shown.append(page())
        time.sleep(0.1)
    if not page:
        return mean_db(values)
    return mean_db(values), [mean_db(list(column)) for column in zip(*shown)]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    sigpu, work = sys.argv[1], sys.argv[2]
    screenshot = sys.argv[3] if len(sys.argv) > 3 else None
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select, WebDriverWait
    except ImportError:
        # Debian's python3-selenium is for Debian's python3; another python3 may come first.
        system = "/usr/bin/python3"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system):
            os.execv(system, [system] + sys.argv)
        skip("python3-selenium is not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_bin = shutil.which("chromedriver") or (
        "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    if not chromium or not driver_bin:
        skip("chromium or chromium-driver is not installed")

    os.makedirs(work, exist_ok=True)
    loop, record = os.path.join(work, "loop.wav"), os.path.join(work, "played.wav")
    graph = os.path.join(work, "graph.json")
    write_loop(loop)
    with open(graph, "w") as f:
        json.dump({
            "name": "browser test", "inputs": 1, "outputs": "pan",
            "nodes": [
                {"id": "tone", "type": "eq", "input": "in",
                 "params": {"bands": [{"type": "peak", "freq": 1000, "gain_db": 3, "q": 0.7}]}},
                {"id": "level", "type": "gain", "input": "tone"},
                {"id": "pan", "type": "pan", "input": "level"},
            ]}, f, indent=1)

    launched = time.time()
    proc = subprocess.Popen([sigpu, "audio", "serve", graph, "--loop", loop, "--record", record,
                             "--backend", "cpu", "--period", "256", "--listen", "127.0.0.1",
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    line = proc.stdout.readline()
    if not line.startswith("serving "):
        out = line + proc.stdout.read()
        proc.wait()
        if "without Boost.Beast" in out:
            skip("sigpu was built without the server")
        print(out)
        return 1
    url = line.split()[1]
    base, token = url.split("?token=")
    TOKEN[0] = token
    port = int(base.rstrip("/").rsplit(":", 1)[1])
    driver = None
    try:
        # Every request and the WebSocket need the token.
        assert http(base + "api/state")[0] == 403
        assert http(base + "api/state?token=" + "0" * len(token))[0] == 403
        assert http(base + "?token=wrong")[0] == 403
        assert websocket_status(port, "wrong") == 403
        assert websocket_status(port, token) == 101
        q = "?token=" + token
        # An invalid parameter value is refused naming node and parameter.
        status, body = http(base + "api/param" + q, {"node": "level", "param": "gain_db",
                                                    "value": 1000})
        assert status == 400 and "node 'level' parameter 'gain_db'" in body, body
        # Files an edit names must lie under the graph's folder.
        status, body = http(base + "api/graph" + q, {
            "inputs": 1, "outputs": "conv", "nodes": [
                {"id": "conv", "type": "convolution", "input": "in",
                 "params": {"ir": "../../../../../../etc/passwd"}}]})
        assert status == 400 and "node 'conv'" in body, body

        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,1000",
                  "--disable-dev-shm-usage"):
            options.add_argument(a)
        driver = webdriver.Chrome(service=Service(driver_bin), options=options)
        driver.get(url)
        wait = WebDriverWait(driver, 15)
        fader = wait.until(lambda d: d.find_element(
            By.CSS_SELECTOR, 'input[data-node="level"][data-param="gain_db"]'))
        assert driver.find_elements(By.CSS_SELECTOR, 'g.node[data-node="tone"]'), "graph not drawn"
        assert driver.find_elements(By.CSS_SELECTOR,
                                    'input[data-node="tone"][data-param="band.0.freq"]')

        # The meters move: the page receives status pushes and shows the output's level.
        seq = lambda: int(driver.execute_script("return document.body.dataset.seq || 0"))
        first = seq()
        time.sleep(0.5)
        assert seq() > first + 5, "no meter updates"
        meter = lambda: float(driver.find_element(By.ID, "meter-out-0").get_attribute("data-rms"))
        assert meter() > -40, meter()
        # Each node's bus: a bar per output channel under it, showing the level the server sends.
        bus_css = 'g.bus[data-node="%s"][data-channel="%d"]'
        bus = lambda node, c=0: driver.find_element(By.CSS_SELECTOR, bus_css % (node, c))
        wait.until(lambda d: bus("level").get_attribute("data-rms"))
        assert len(driver.find_elements(By.CSS_SELECTOR, 'g.bus[data-node="pan"]')) == 2
        assert not driver.find_elements(By.CSS_SELECTOR, 'g.bus[data-node="pan"][data-channel="2"]')
        assert float(bus("tone").get_attribute("data-rms")) > -40
        assert float(bus("level").get_attribute("data-peak")) >= float(
            bus("level").get_attribute("data-rms"))
        levels = json.loads(http(base + "api/levels" + "?token=" + token)[1])["levels"]
        assert sorted(levels["buses"]) == ["level", "pan", "tone"], levels["buses"]
        assert len(levels["buses"]["pan"]["rms"]) == 2

        # Add a node after 'level' and remove it again while the file loops.
        time.sleep(1.2)  # past two loops, so the comparison below has a loop before it
        Select(driver.find_element(By.ID, "add-type")).select_by_visible_text("gain")
        driver.find_element(By.ID, "add-id").send_keys("extra")
        Select(driver.find_element(By.ID, "add-after")).select_by_visible_text("level")
        driver.find_element(By.ID, "add-node").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '.card[data-node="extra"]'))
        state = json.loads(http(base + "api/state" + q)[1])
        assert [n["id"] for n in state["graph"]["nodes"]] == ["tone", "level", "extra", "pan"]
        assert state["graph"]["nodes"][3]["input"] == "extra"
        time.sleep(0.8)
        driver.find_element(By.CSS_SELECTOR, 'button.remove[data-node="extra"]').click()
        wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, '.card[data-node="extra"]'))
        swaps_done = time.time() - launched

        # An invalid edit (an unknown source) is refused naming the node; the graph stays.
        rewire = driver.find_element(By.CSS_SELECTOR, 'input.rewire[data-node="pan"]')
        driver.execute_script("arguments[0].value = '\"nowhere\"';"
                              "arguments[0].dispatchEvent(new Event('change'))", rewire)
        wait.until(lambda d: "node 'pan'" in d.find_element(By.ID, "error").text)
        state = json.loads(http(base + "api/state" + q)[1])
        assert state["graph"]["nodes"][2]["input"] == "level", state["graph"]

        if screenshot:
            time.sleep(0.5)
            driver.save_screenshot(screenshot)

        # A fader move: the level the server measures drops by what the fader says.
        time.sleep(0.8)
        fader_at = time.time() - launched
        buses = lambda: [float(bus(n).get_attribute("data-rms")) for n in ("tone", "level")]
        before, (tone_before, level_before) = steady_rms_db(base, page=buses)
        fader = driver.find_element(By.CSS_SELECTOR,
                                    'input[data-node="level"][data-param="gain_db"]')
        driver.execute_script(
            "arguments[0].value = 694; arguments[0].dispatchEvent(new Event('input'))", fader)
        time.sleep(0.3)
        after, (tone_after, level_after) = steady_rms_db(base, page=buses)
        want = -120 + 144 * 0.694  # the fader's position in dB
        assert abs((after - before) - want) < 1.0, (before, after, want)
        # The page's bus meters: the gain node's bus moves by as much, the EQ's before it stays.
        assert abs((level_after - level_before) - want) < 1.0, (level_before, level_after, want)
        assert abs(tone_after - tone_before) < 1.0, (tone_before, tone_after)
        shown = float(driver.find_element(By.ID, "meter-out-0").get_attribute("data-rms"))
        assert abs(shown - after) < 3, (shown, after)
    finally:
        if driver:
            driver.quit()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, proc.stdout.read()

    # The swaps: once the start-up transient is over, every sample equals the one a loop
    # earlier (the input is periodic, every node is linear and settles fast), until the fader.
    channels, y = read_float_wav(record)
    assert channels == 2
    frames = len(y) // channels
    first_bad = None
    for n in range(2 * LOOP, frames):
        for c in range(channels):
            d = abs(y[n * channels + c] - y[(n - LOOP) * channels + c])
            if d > 10 ** (LIMIT_DBFS / 20):
                first_bad = n
                break
        if first_bad is not None:
            break
    # Frames are recorded in real time from after the launch: whatever happened by swaps_done
    # is in frames below swaps_done * RATE.
    assert first_bad is not None, "the fader move should show as a change"
    assert first_bad > swaps_done * RATE, (
        "a discontinuity above %g dBFS at %.3f s, before the fader (%.3f s); swaps done by %.3f s"
        % (LIMIT_DBFS, first_bad / RATE, fader_at, swaps_done))
    print("ok: swaps clean up to %.2f s (fader at %.2f s, swaps done by %.2f s)" %
          (first_bad / RATE, fader_at, swaps_done))
    return 0


if __name__ == "__main__":
    sys.exit(main())
