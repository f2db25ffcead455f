// The control surface's page: plain HTML and JavaScript, no build step. Its controls come from
// the effects' descriptors (GET /api/state); every change goes back through the server.
#include <string_view>

namespace sigpu::audio {

std::string_view serve_page() {
  return R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sigpu audio</title>
<style>
body{font:13px system-ui,sans-serif;margin:0;background:#1d2127;color:#dde}
header{display:flex;gap:12px;align-items:center;padding:6px 12px;background:#111418}
header h1{font-size:15px;margin:0}
#error{color:#ff8a80;padding:2px 12px;min-height:16px}
main{display:grid;grid-template-columns:1fr 340px;gap:8px;padding:0 12px}
svg{background:#262b33;width:100%;height:260px;border-radius:4px}
.node rect{fill:#39414d;stroke:#8ab4f8;rx:4}.node.sel rect{stroke:#ffd54f;stroke-width:2}
.node text{fill:#eef;font-size:12px}.edge{stroke:#8a93a0;fill:none}
.bus .bg{fill:#111}.bus .rms{fill:#66bb6a}.bus .peak{fill:#ffd54f}
.card{background:#262b33;border-radius:4px;padding:6px 8px;margin:6px 0}
.card h3{margin:0 0 4px;font-size:13px}.card h3 small{color:#99a}
.row{display:grid;grid-template-columns:110px 1fr 80px;gap:6px;align-items:center;margin:2px 0}
.row input[type=text],.row select{width:100%;background:#1d2127;color:#dde;border:1px solid #555}
button{background:#39414d;color:#dde;border:1px solid #667;border-radius:3px;cursor:pointer}
#meters{display:flex;gap:6px;align-items:flex-end;height:130px}
.meter{width:14px;height:110px;background:#111;position:relative}
.meter .rms{position:absolute;bottom:0;width:100%;background:#66bb6a}
.meter .peak{position:absolute;width:100%;height:2px;background:#ffd54f}
.mlabel{font-size:10px;text-align:center;width:34px}
canvas{background:#262b33;border-radius:4px}
#stats{font-family:monospace}
</style></head><body>
<header><h1>sigpu audio</h1><span id="info"></span>
<label>Load <input type="file" id="load" accept=".json"></label><button id="save">Save</button></header>
<div id="error"></div>
<main><section>
<svg id="graph"></svg>
<div class="card"><h3>Add a node</h3>
<div class="row"><span>type</span><select id="add-type"></select><span></span></div>
<div class="row"><span>id</span><input type="text" id="add-id"><span></span></div>
<div class="row"><span>after</span><select id="add-after"></select><span></span></div>
<button id="add-node">Add</button></div>
<div class="card"><h3>Levels <small>peak and RMS, dBFS</small></h3><div id="meters"></div></div>
<div class="card"><h3>Period time</h3><canvas id="hist" width="640" height="120"></canvas>
<div id="stats"></div></div>
</section><section id="nodes"></section></main>
<script>
'use strict';
const token = new URLSearchParams(location.search).get('token') || '';
const q = token ? '?token=' + encodeURIComponent(token) : '';
let state = null, selected = null;
const $ = id => document.getElementById(id);
function showError(e) { $('error').textContent = e || ''; }
async function api(path, body) {
  const r = await fetch('/api/' + path + q, body === undefined ? {} :
      {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || r.statusText);
  return j;
}
async function load() { state = await api('state'); render(); }
function effect(type) { return state.effects.find(e => e.type === type); }
function refs(v) { return v === undefined ? [] : Array.isArray(v) ? v : [v]; }
function refNode(r) { return r.split(':')[0]; }
async function commit(graph) {
  try { await api('graph', graph); showError(''); } catch (e) { showError(e.message); }
  await load();
}
function clone(x) { return JSON.parse(JSON.stringify(x)); }

function render() {
  const g = state.graph;
  $('info').textContent = `${state.backend}, ${state.period} frames at ${state.sample_rate} Hz, ` +
      `${state.inputs} in, ${state.outputs} out`;
  drawGraph(g);
  const types = $('add-type');
  types.innerHTML = state.effects.map(e => `<option>${e.type}</option>`).join('');
  $('add-after').innerHTML = ['in'].concat(g.nodes.map(n => n.id))
      .map(id => `<option${id === selected ? ' selected' : ''}>${id}</option>`).join('');
  const box = $('nodes');
  box.innerHTML = '';
  for (const n of g.nodes) box.appendChild(card(n));
}

function drawGraph(g) {
  const svg = $('graph'), W = svg.clientWidth || 800, H = 260;
  const cols = {in: -1};
  let maxLevel = 0;
  for (const n of g.nodes) { cols[n.id] = state.levels[n.id]; maxLevel = Math.max(maxLevel, cols[n.id]); }
  cols.out = maxLevel + 1;
  const byCol = {};
  const pos = {};
  for (const id of ['in'].concat(g.nodes.map(n => n.id), ['out'])) {
    const c = cols[id];
    (byCol[c] = byCol[c] || []).push(id);
  }
  const dx = W / (maxLevel + 3);
  for (const c in byCol) byCol[c].forEach((id, i) => {
    pos[id] = {x: (+c + 1.5) * dx, y: (i + 1) * H / (byCol[c].length + 1)};
  });
  let s = '';
  const edge = (a, b) => {
    if (!pos[a] || !pos[b]) return;
    const p = pos[a], r = pos[b];
    s += `<path class="edge" d="M${p.x + 40},${p.y} C${(p.x + r.x) / 2},${p.y} ${(p.x + r.x) / 2},${r.y} ${r.x - 40},${r.y}"/>`;
  };
  for (const n of g.nodes) {
    for (const r of refs(n.input)) edge(refNode(r), n.id);
    for (const r of refs(n.sidechain)) edge(refNode(r), n.id);
  }
  for (const r of refs(g.outputs)) edge(refNode(r), 'out');
  for (const id in pos) {
    const p = pos[id];
    const n = g.nodes.find(n => n.id === id);
    s += `<g class="node${id === selected ? ' sel' : ''}" data-node="${id}" transform="translate(${p.x - 40},${p.y - 14})">` +
         `<rect width="80" height="28"/><text x="6" y="12">${id}</text>` +
         `<text x="6" y="24" fill="#99a">${n ? n.type : ''}</text></g>`;
    // The node's bus meters under it, one bar per output channel (busMeters fills them in).
    const bus = (state.buses || {})[id];
    if (n && bus) bus.rms.forEach((_, c) => {
      s += `<g class="bus" data-node="${id}" data-channel="${c}" transform="translate(${p.x - 40},${p.y + 16 + 6 * c})">` +
           `<rect class="bg" width="80" height="4"/><rect class="rms" height="4" width="0"/>` +
           `<rect class="peak" width="2" height="4" x="0"/></g>`;
    });
  }
  svg.innerHTML = s;
  svg.querySelectorAll('.node').forEach(el => el.onclick = () => {
    selected = el.dataset.node; render();
    const c = document.querySelector(`.card[data-node="${selected}"]`);
    if (c) c.scrollIntoView({block: 'nearest'});
  });
}

// Faders for Hz move logarithmically.
function toSlider(p, v) {
  if (p.unit === 'Hz') return 1000 * Math.log(v / p.lo) / Math.log(p.hi / p.lo);
  return 1000 * (v - p.lo) / (p.hi - p.lo);
}
function fromSlider(p, s) {
  if (p.unit === 'Hz') return p.lo * Math.pow(p.hi / p.lo, s / 1000);
  return p.lo + (p.hi - p.lo) * s / 1000;
}
function fmt(v) { return Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3); }

const pending = {};
function sendParam(node, param, value) {
  const key = node + '/' + param;
  const busy = key in pending;
  pending[key] = value;
  if (busy) return;
  const go = async () => {
    const v = pending[key];
    try { await api('param', {node, param, value: v}); showError(''); setParamInDoc(node, param, v); }
    catch (e) { showError(e.message); }
    if (pending[key] !== v) go(); else delete pending[key];
  };
  go();
}
function setParamInDoc(node, param, v) {
  const n = state.graph.nodes.find(n => n.id === node);
  n.params = n.params || {};
  const m = param.match(/^band\.(\d+)\.(\w+)$/);
  if (m) n.params.bands[+m[1]][m[2]] = v; else n.params[param] = v;
}

function fader(node, name, spec, value) {
  const row = document.createElement('div');
  row.className = 'row';
  row.innerHTML = `<span title="${spec.help}">${name}</span>` +
      `<input type="range" min="0" max="1000" step="1" data-node="${node}" data-param="${name}">` +
      `<span class="val"></span>`;
  const input = row.children[1], label = row.children[2];
  const show = v => label.textContent = fmt(v) + (spec.unit ? ' ' + spec.unit : '');
  input.value = toSlider(spec, value);
  show(value);
  input.oninput = () => {
    const v = fromSlider(spec, +input.value);
    show(v);
    sendParam(node, name, v);
  };
  return row;
}

function fixedField(n, name, spec, value) {
  const row = document.createElement('div');
  row.className = 'row';
  row.innerHTML = `<span title="${spec.help}">${name}</span><span></span><span>${spec.unit}</span>`;
  let input;
  if (spec.type === 'file') {
    input = document.createElement('select');
    const ext = spec.help.includes('.nam') ? '.nam' : '';
    input.innerHTML = state.files.filter(f => ext ? f.endsWith(ext) : !f.endsWith('.nam'))
        .map(f => `<option${f === value ? ' selected' : ''}>${f}</option>`).join('');
  } else {
    input = document.createElement('input');
    input.type = 'text';
    input.value = value === undefined ? '' : JSON.stringify(value);
    input.placeholder = spec.required ? 'required' : JSON.stringify(spec.default);
  }
  input.dataset.node = n.id;
  input.dataset.param = name;
  input.onchange = () => {
    const g = clone(state.graph);
    const m = g.nodes.find(x => x.id === n.id);
    m.params = m.params || {};
    if (spec.type === 'file') m.params[name] = input.value;
    else if (input.value === '') delete m.params[name];
    else { try { m.params[name] = JSON.parse(input.value); } catch (e) { m.params[name] = input.value; } }
    commit(g);
  };
  row.children[1].appendChild(input);
  return row;
}

function card(n) {
  const e = effect(n.type);
  const div = document.createElement('div');
  div.className = 'card';
  div.dataset.node = n.id;
  div.innerHTML = `<h3>${n.id} <small>${n.type}</small> <button class="remove" data-node="${n.id}">remove</button></h3>`;
  const inRow = document.createElement('div');
  inRow.className = 'row';
  inRow.innerHTML = `<span>input</span><input type="text" class="rewire" data-node="${n.id}"><span></span>`;
  const inField = inRow.children[1];
  inField.value = JSON.stringify(n.input);
  inField.onchange = () => {
    const g = clone(state.graph);
    try { g.nodes.find(x => x.id === n.id).input = JSON.parse(inField.value); }
    catch (err) { g.nodes.find(x => x.id === n.id).input = inField.value; }
    commit(g);
  };
  div.appendChild(inRow);
  const params = n.params || {};
  for (const p of e ? e.params : []) {
    if (p.name.startsWith('band.K.')) continue;
    if (p.type === 'number' && p.update !== 'fixed') {
      div.appendChild(fader(n.id, p.name, p, params[p.name] ?? p.default));
    } else if (p.type !== 'list' || params[p.name] !== undefined) {
      if (p.name === 'bands') continue;
      div.appendChild(fixedField(n, p.name, p, params[p.name]));
    }
  }
  (params.bands || []).forEach((b, k) => {
    for (const p of e.params.filter(p => p.name.startsWith('band.K.') && p.type === 'number')) {
      const field = p.name.slice(7);
      div.appendChild(fader(n.id, `band.${k}.${field}`, p, b[field] ?? p.default));
    }
  });
  div.querySelector('.remove').onclick = () => removeNode(n.id);
  return div;
}

function replaceRefs(v, from, to) {
  const one = r => refNode(r) === from ? to + r.slice(from.length) : r;
  return v === undefined ? v : Array.isArray(v) ? v.map(one) : one(v);
}
function removeNode(id) {
  const g = clone(state.graph);
  const n = g.nodes.find(x => x.id === id);
  const src = refs(n.input)[0] || 'in';
  g.nodes = g.nodes.filter(x => x.id !== id);
  for (const m of g.nodes) {
    m.input = replaceRefs(m.input, id, src);
    m.sidechain = replaceRefs(m.sidechain, id, src);
    if (m.sidechain === undefined) delete m.sidechain;
  }
  g.outputs = replaceRefs(g.outputs, id, src);
  if (selected === id) selected = null;
  commit(g);
}
function defaults(e, channels) {
  const p = {};
  for (const s of e.params) {
    if (!s.required) continue;
    if (s.type === 'file') p[s.name] = state.files.find(f => s.help.includes('.nam') ? f.endsWith('.nam') : !f.endsWith('.nam'));
    else if (s.name === 'bands') p.bands = [{type: 'peak', freq: 1000, gain_db: 0, q: 0.7071}];
    else if (s.name === 'map') p.map = [0];
  }
  return p;
}
$('add-node').onclick = () => {
  const g = clone(state.graph);
  const type = $('add-type').value, after = $('add-after').value;
  let id = $('add-id').value.trim();
  if (!id) { let k = 1; while (g.nodes.some(n => n.id === type + k)) ++k; id = type + k; }
  const node = {id, type, input: after, params: defaults(effect(type))};
  for (const m of g.nodes) {
    m.input = replaceRefs(m.input, after, id);
    if (m.sidechain !== undefined) m.sidechain = replaceRefs(m.sidechain, after, id);
  }
  g.outputs = replaceRefs(g.outputs, after, id);
  const at = g.nodes.findIndex(n => n.id === after);
  g.nodes.splice(at + 1, 0, node);
  selected = id;
  commit(g);
};
$('save').onclick = () => {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([JSON.stringify(state.graph, null, 2)], {type: 'application/json'}));
  a.download = 'graph.json';
  a.click();
};
$('load').onchange = async ev => {
  const f = ev.target.files[0];
  if (f) commit(JSON.parse(await f.text()));
};

function meters(l) {
  const box = $('meters');
  const list = [];
  l.in_rms.forEach((r, c) => list.push(['in', c, r, l.in_peak[c]]));
  l.out_rms.forEach((r, c) => list.push(['out', c, r, l.out_peak[c]]));
  if (box.children.length !== list.length) {
    box.innerHTML = list.map(([k, c]) => `<div><div class="meter" id="meter-${k}-${c}"><div class="rms"></div>` +
        `<div class="peak"></div></div><div class="mlabel">${k} ${c + 1}<br><span></span></div></div>`).join('');
  }
  const h = db => Math.max(0, Math.min(100, (db + 60) / 60 * 100));
  list.forEach(([k, c, rms, peak], i) => {
    const m = $(`meter-${k}-${c}`);
    m.dataset.rms = rms; m.dataset.peak = peak;
    m.querySelector('.rms').style.height = h(rms) + '%';
    m.querySelector('.peak').style.bottom = h(peak) + '%';
    box.children[i].querySelector('span').textContent = rms.toFixed(1);
  });
}
// Bus meters: horizontal, -60 to 0 dBFS across the node's width.
function busMeters(buses) {
  const known = state.buses || {};
  state.buses = buses;
  if (Object.keys(buses).some(id => !known[id] || known[id].rms.length !== buses[id].rms.length)) {
    drawGraph(state.graph);
  }
  const w = db => Math.max(0, Math.min(80, (db + 60) / 60 * 80));
  document.querySelectorAll('#graph .bus').forEach(el => {
    const b = buses[el.dataset.node], c = +el.dataset.channel;
    if (!b || c >= b.rms.length) return;
    el.dataset.rms = b.rms[c]; el.dataset.peak = b.peak[c];
    el.querySelector('.rms').setAttribute('width', w(b.rms[c]));
    el.querySelector('.peak').setAttribute('x', Math.max(0, w(b.peak[c]) - 2));
  });
}
function histogram(t) {
  const cv = $('hist'), cx = cv.getContext('2d');
  cx.clearRect(0, 0, cv.width, cv.height);
  const n = t.buckets.length, w = cv.width / n;
  const top = Math.max(1, ...t.buckets.map(b => Math.log10(b + 1)));
  t.buckets.forEach((b, i) => {
    const hgt = Math.log10(b + 1) / top * (cv.height - 14);
    cx.fillStyle = Math.pow(2, i / 4) > t.deadline_us ? '#ef5350' : '#42a5f5';
    cx.fillRect(i * w, cv.height - 12 - hgt, w - 1, hgt);
  });
  const dl = 4 * Math.log2(t.deadline_us) * w;
  cx.fillStyle = '#ffd54f'; cx.fillRect(dl, 0, 1, cv.height - 12);
  cx.fillStyle = '#99a'; cx.font = '10px sans-serif';
  for (const us of [1, 10, 100, 1000, 10000]) cx.fillText(us >= 1000 ? us / 1000 + ' ms' : us + ' µs', 4 * Math.log2(us) * w, cv.height - 2);
  $('stats').textContent = `p99 ${t.p99_us.toFixed(1)} µs  p99.9 ${t.p999_us.toFixed(1)} µs  ` +
      `max ${t.max_us.toFixed(1)} µs  deadline ${t.deadline_us.toFixed(0)} µs  ` +
      `late ${t.late}  xruns ${t.xruns}  periods ${t.periods}`;
}
function connect() {
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws' + q);
  ws.onmessage = ev => {
    const s = JSON.parse(ev.data);
    if (!s.levels) return;
    meters(s.levels);
    busMeters(s.levels.buses || {});
    histogram(s.timing);
    document.body.dataset.seq = s.seq;
  };
  ws.onclose = () => setTimeout(connect, 1000);
}
load().then(connect).catch(e => showError(e.message));
</script></body></html>
)HTML";
}

}  // namespace sigpu::audio
