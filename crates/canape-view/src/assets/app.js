// Canapé viewer page: a small WebGL2 renderer, the panels, and the WebSocket protocol
// (see crates/canape-view/src/protocol.rs and scene_view.rs for the messages and frames).
'use strict';

const $ = (id) => document.getElementById(id);
const canvas = $('canvas');
const gl = canvas.getContext('webgl2', { antialias: true, preserveDrawingBuffer: true });

// ---------- small matrix helpers (column-major 4x4) ----------
const M = {
  mul(a, b) {
    const o = new Float32Array(16);
    for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
      let s = 0;
      for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
      o[c * 4 + r] = s;
    }
    return o;
  },
  perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2), o = new Float32Array(16);
    o[0] = f / aspect; o[5] = f; o[10] = (far + near) / (near - far); o[11] = -1;
    o[14] = 2 * far * near / (near - far);
    return o;
  },
  lookAt(e, t, u) {
    let z = norm(sub(e, t)), x = norm(cross(u, z)), y = cross(z, x);
    return new Float32Array([x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0,
      -dot(x, e), -dot(y, e), -dot(z, e), 1]);
  },
  apply(m, p) {
    const v = [0, 0, 0, 0];
    for (let r = 0; r < 4; r++) v[r] = m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r] * p[3];
    return v;
  },
};
function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
function add(a, b) { return [a[0] + b[0], a[1] + b[1], a[2] + b[2]]; }
function scale(a, s) { return [a[0] * s, a[1] * s, a[2] * s]; }
function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
function norm(a) { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; }

// ---------- state ----------
const S = {
  ws: null, topology: null, sources: [], drawables: [], flags: {}, status: null,
  frames: 0, time: 0, seq: 0, selected: null, dirty: true, grabbing: false,
  bounds: [[0, 0, 0], [1, 1, 1]], messages: [], hello: null,
};
const cam = { target: [0, 0, 0], dist: 10, yaw: 0.6, pitch: 0.35, fov: 45 * Math.PI / 180, fitted: false };

// ---------- GL programs ----------
function compile(vs, fs) {
  const p = gl.createProgram();
  for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
    const s = gl.createShader(type);
    gl.shaderSource(s, src); gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
    gl.attachShader(p, s);
  }
  gl.bindAttribLocation(p, 0, 'pos'); gl.bindAttribLocation(p, 1, 'nrm'); gl.bindAttribLocation(p, 2, 'col');
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
  const u = {};
  for (let i = 0; i < gl.getProgramParameter(p, gl.ACTIVE_UNIFORMS); i++) {
    const n = gl.getActiveUniform(p, i).name; u[n] = gl.getUniformLocation(p, n);
  }
  return { p, u };
}
const meshProg = compile(`#version 300 es
in vec3 pos; in vec3 nrm; in vec3 col;
uniform mat4 mvp;
out vec3 vN; out vec3 vC; out vec3 vP;
void main() { gl_Position = mvp * vec4(pos, 1.0); vN = nrm; vC = col; vP = pos; }`,
`#version 300 es
precision highp float;
in vec3 vN; in vec3 vC; in vec3 vP;
uniform vec3 eye;
out vec4 o;
void main() {
  float d = 1.0;
  if (length(vN) > 1e-20) d = abs(dot(normalize(vN), normalize(eye - vP)));
  o = vec4(vC * (0.28 + 0.72 * d), 1.0);
}`);
// flat colour; points are squares of psize pixels, or, with a world radius (spheres), discs of
// that radius seen in perspective (pscale: pixels per unit at distance 1), lit as spheres
const flatProg = compile(`#version 300 es
in vec3 pos;
uniform mat4 mvp; uniform float psize; uniform float wradius; uniform float pscale;
void main() {
  gl_Position = mvp * vec4(pos, 1.0);
  gl_PointSize = wradius > 0.0 ? max(psize, 2.0 * wradius * pscale / gl_Position.w) : psize;
}`,
`#version 300 es
precision highp float;
uniform vec3 col; uniform float wradius;
out vec4 o;
void main() {
  if (wradius > 0.0) {
    vec2 q = 2.0 * gl_PointCoord - 1.0;
    float r2 = dot(q, q);
    if (r2 > 1.0) discard;
    o = vec4(col * (0.35 + 0.65 * sqrt(1.0 - r2)), 1.0);
    return;
  }
  o = vec4(col, 1.0);
}`);

function buffer(target, data, usage) {
  const b = gl.createBuffer();
  gl.bindBuffer(target, b); gl.bufferData(target, data, usage || gl.STATIC_DRAW);
  return b;
}

// ---------- colour map (SOFA's "Blue to Red") ----------
function colormap(t) {
  t = Math.min(1, Math.max(0, t));
  const h = (1 - t) * 240 / 60, i = Math.floor(h), f = h - i;
  const tab = [[1, f, 0], [1 - f, 1, 0], [0, 1, f], [0, 1 - f, 1], [f, 0, 1]];
  return tab[Math.min(i, 4)];
}

// ---------- topology ----------
function setTopology(t) {
  for (const d of S.drawables) d.free && d.free();
  S.topology = t;
  S.flags = Object.assign({}, t.flags, S.userFlags || {});
  S.sources = t.sources.map((s) => ({ name: s.name, grabbable: s.grabbable, n: 0, pos: null, scalars: null, buf: null }));
  S.drawables = t.drawables.map((d) => makeDrawable(d));
  renderFlags();
  S.dirty = true;
}

function makeDrawable(d) {
  const r = Object.assign({}, d);
  if (d.kind === 'surface') {
    r.idx = new Uint32Array(d.tris);
    r.ibuf = buffer(gl.ELEMENT_ARRAY_BUFFER, r.idx);
    const edges = [];
    for (let k = 0; k < r.idx.length; k += 3) {
      const a = r.idx[k], b = r.idx[k + 1], c = r.idx[k + 2];
      edges.push(a, b, b, c, c, a);
    }
    r.eidx = new Uint32Array(edges);
    r.ebuf = buffer(gl.ELEMENT_ARRAY_BUFFER, r.eidx);
    r.nbuf = gl.createBuffer(); r.cbuf = gl.createBuffer();
  } else if (d.kind === 'lines') {
    r.idx = new Uint32Array(d.lines);
    r.ibuf = buffer(gl.ELEMENT_ARRAY_BUFFER, r.idx);
  } else if (d.kind === 'points' && d.points) {
    r.idx = new Uint32Array(d.points);
    r.ibuf = buffer(gl.ELEMENT_ARRAY_BUFFER, r.idx);
  } else if (d.kind === 'box') {
    const [a, b] = [d.min, d.max];
    const c = [];
    for (let i = 0; i < 8; i++) c.push([i & 1 ? b[0] : a[0], i & 2 ? b[1] : a[1], i & 4 ? b[2] : a[2]]);
    const e = [0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7, 0, 4, 1, 5, 2, 6, 3, 7];
    r.vbuf = buffer(gl.ARRAY_BUFFER, new Float32Array(e.flatMap((i) => c[i])));
    r.count = e.length;
  }
  return r;
}

// ---------- frames ----------
function onFrame(buf) {
  const dv = new DataView(buf);
  if (dv.getUint32(0, true) !== 0x31504e43) return; // "CNP1"
  S.seq = dv.getUint32(4, true);
  S.time = dv.getFloat64(8, true);
  const ns = dv.getUint32(16, true);
  let o = 20;
  for (let s = 0; s < ns; s++) {
    const n = dv.getUint32(o, true); o += 4;
    const pos = new Float32Array(buf.slice(o, o + 12 * n)); o += 12 * n;
    const m = dv.getUint32(o, true); o += 4;
    const sc = m ? new Float32Array(buf.slice(o, o + 4 * m)) : null; o += 4 * m;
    const src = S.sources[s];
    if (!src) continue;
    src.n = n; src.pos = pos; src.scalars = sc;
    if (!src.buf) src.buf = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, src.buf);
    gl.bufferData(gl.ARRAY_BUFFER, pos, gl.DYNAMIC_DRAW);
  }
  for (const d of S.drawables) if (d.kind === 'surface') updateSurface(d);
  S.frames++;
  if (!cam.fitted && S.sources.some((s) => s.pos)) { fit(); cam.fitted = true; }
  $('time').textContent = S.time.toFixed(4);
  S.dirty = true;
}

function updateSurface(d) {
  const src = S.sources[d.source];
  if (!src || !src.pos) return;
  const p = src.pos, n = new Float32Array(p.length), idx = d.idx;
  for (let k = 0; k < idx.length; k += 3) {
    const a = 3 * idx[k], b = 3 * idx[k + 1], c = 3 * idx[k + 2];
    if (c + 2 >= p.length || a + 2 >= p.length || b + 2 >= p.length) continue;
    const e1 = [p[b] - p[a], p[b + 1] - p[a + 1], p[b + 2] - p[a + 2]];
    const e2 = [p[c] - p[a], p[c + 1] - p[a + 1], p[c + 2] - p[a + 2]];
    const f = cross(e1, e2);
    for (const v of [a, b, c]) { n[v] += f[0]; n[v + 1] += f[1]; n[v + 2] += f[2]; }
  }
  gl.bindBuffer(gl.ARRAY_BUFFER, d.nbuf); gl.bufferData(gl.ARRAY_BUFFER, n, gl.DYNAMIC_DRAW);
  const col = new Float32Array(p.length);
  const sc = d.colored ? src.scalars : null;
  if (sc) {
    let lo = Infinity, hi = -Infinity;
    for (const v of sc) { if (v < lo) lo = v; if (v > hi) hi = v; }
    if (d.scalar_floor > 0 && Math.max(Math.abs(lo), Math.abs(hi)) <= d.scalar_floor) {
      // round-off of a body at rest: one colour, and the legend says so
      for (let i = 0; i < sc.length; i++) col.set(colormap(0), 3 * i);
      d.range = { lo, hi, rest: true };
    } else {
      const span = hi > lo ? hi - lo : 1;
      for (let i = 0; i < sc.length; i++) col.set(colormap((sc[i] - lo) / span), 3 * i);
      d.range = { lo, hi, rest: false };
    }
  } else {
    for (let i = 0; i < p.length; i += 3) col.set(d.color, i);
    d.range = null;
  }
  gl.bindBuffer(gl.ARRAY_BUFFER, d.cbuf); gl.bufferData(gl.ARRAY_BUFFER, col, gl.DYNAMIC_DRAW);
}

// ---------- camera ----------
function eye() {
  const cp = Math.cos(cam.pitch);
  return add(cam.target, scale([Math.sin(cam.yaw) * cp, Math.sin(cam.pitch), Math.cos(cam.yaw) * cp], cam.dist));
}
function matrices() {
  const w = canvas.width, h = canvas.height;
  const e = eye();
  const view = M.lookAt(e, cam.target, [0, 1, 0]);
  const proj = M.perspective(cam.fov, w / Math.max(h, 1), cam.dist * 0.01, cam.dist * 100);
  return { e, vp: M.mul(proj, view), view, proj };
}
function currentBounds() {
  let lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (const s of S.sources) if (s.pos) for (let i = 0; i < s.pos.length; i += 3)
    for (let k = 0; k < 3; k++) { const v = s.pos[i + k]; if (Number.isFinite(v)) { lo[k] = Math.min(lo[k], v); hi[k] = Math.max(hi[k], v); } }
  // boxes drawn (BoxROI and the like) are part of the scene's framing
  for (const d of S.drawables) if (d.kind === 'box' && S.flags[d.flag] && d.min && d.max)
    for (let k = 0; k < 3; k++) { lo[k] = Math.min(lo[k], d.min[k]); hi[k] = Math.max(hi[k], d.max[k]); }
  if (lo[0] > hi[0]) return S.bounds;
  return [lo, hi];
}
function fit() {
  const [lo, hi] = currentBounds();
  cam.target = scale(add(lo, hi), 0.5);
  const r = Math.max(1e-6, 0.5 * Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]));
  cam.dist = r / Math.sin(cam.fov / 2) * 1.05;
  S.dirty = true;
}
// ray through a client point: world origin and unit direction
function ray(cx, cy) {
  const rect = canvas.getBoundingClientRect();
  const x = ((cx - rect.left) / rect.width) * 2 - 1, y = 1 - ((cy - rect.top) / rect.height) * 2;
  const { e } = matrices();
  const f = norm(sub(cam.target, e)), r = norm(cross(f, [0, 1, 0])), u = cross(r, f);
  const t = Math.tan(cam.fov / 2), aspect = rect.width / Math.max(rect.height, 1);
  const dir = norm(add(f, add(scale(r, x * t * aspect), scale(u, y * t))));
  return { origin: e, dir };
}
// client coordinates of a vertex (test and debug hook)
function project(source, i) {
  const s = S.sources[source];
  if (!s || !s.pos) return null;
  const { vp } = matrices();
  const c = M.apply(vp, [s.pos[3 * i], s.pos[3 * i + 1], s.pos[3 * i + 2], 1]);
  const rect = canvas.getBoundingClientRect();
  return [rect.left + (c[0] / c[3] + 1) / 2 * rect.width, rect.top + (1 - c[1] / c[3]) / 2 * rect.height];
}

// ---------- drawing ----------
function resize() {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(canvas.clientWidth * dpr)), h = Math.max(1, Math.round(canvas.clientHeight * dpr));
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; S.dirty = true; }
}
function draw() {
  resize();
  gl.viewport(0, 0, canvas.width, canvas.height);
  gl.clearColor(0.11, 0.12, 0.14, 1);
  gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  gl.enable(gl.DEPTH_TEST);
  const { e, vp } = matrices();
  const wire = S.flags.wireframe;
  let legend = null;
  for (const d of S.drawables) {
    if (!S.flags[d.flag]) continue;
    if (d.kind === 'box') {
      gl.useProgram(flatProg.p);
      gl.uniformMatrix4fv(flatProg.u.mvp, false, vp); gl.uniform3fv(flatProg.u.col, d.color);
      gl.bindBuffer(gl.ARRAY_BUFFER, d.vbuf); gl.enableVertexAttribArray(0);
      gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
      gl.drawArrays(gl.LINES, 0, d.count);
      continue;
    }
    const src = S.sources[d.source];
    if (!src || !src.buf || !src.n) continue;
    if (d.kind === 'surface' && !wire) {
      gl.useProgram(meshProg.p);
      gl.uniformMatrix4fv(meshProg.u.mvp, false, vp); gl.uniform3fv(meshProg.u.eye, e);
      gl.bindBuffer(gl.ARRAY_BUFFER, src.buf); gl.enableVertexAttribArray(0); gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
      gl.bindBuffer(gl.ARRAY_BUFFER, d.nbuf); gl.enableVertexAttribArray(1); gl.vertexAttribPointer(1, 3, gl.FLOAT, false, 0, 0);
      gl.bindBuffer(gl.ARRAY_BUFFER, d.cbuf); gl.enableVertexAttribArray(2); gl.vertexAttribPointer(2, 3, gl.FLOAT, false, 0, 0);
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, d.ibuf);
      gl.enable(gl.POLYGON_OFFSET_FILL); gl.polygonOffset(1, 1);
      gl.drawElements(gl.TRIANGLES, d.idx.length, gl.UNSIGNED_INT, 0);
      gl.disable(gl.POLYGON_OFFSET_FILL);
      gl.disableVertexAttribArray(1); gl.disableVertexAttribArray(2);
      if (d.range) { legend = d.range; S.floor = d.scalar_floor; }
      continue;
    }
    gl.useProgram(flatProg.p);
    gl.uniformMatrix4fv(flatProg.u.mvp, false, vp);
    gl.bindBuffer(gl.ARRAY_BUFFER, src.buf); gl.enableVertexAttribArray(0); gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
    if (d.kind === 'surface') {
      gl.uniform3fv(flatProg.u.col, d.color);
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, d.ebuf);
      gl.drawElements(gl.LINES, d.eidx.length, gl.UNSIGNED_INT, 0);
    } else if (d.kind === 'lines') {
      gl.uniform3fv(flatProg.u.col, d.color);
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, d.ibuf);
      gl.drawElements(gl.LINES, d.idx.length, gl.UNSIGNED_INT, 0);
    } else if (d.kind === 'pairs') {
      // consecutive vertices of the source, two by two (contact normals)
      gl.uniform3fv(flatProg.u.col, d.color);
      gl.drawArrays(gl.LINES, 0, src.n - (src.n % 2));
    } else if (d.kind === 'points') {
      gl.uniform3fv(flatProg.u.col, d.color); gl.uniform1f(flatProg.u.psize, d.size * (window.devicePixelRatio || 1));
      gl.uniform1f(flatProg.u.wradius, d.radius || 0);
      gl.uniform1f(flatProg.u.pscale, canvas.height / (2 * Math.tan(cam.fov / 2)));
      if (d.idx) {
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, d.ibuf);
        gl.drawElements(gl.POINTS, d.idx.length, gl.UNSIGNED_INT, 0);
      } else {
        gl.drawArrays(gl.POINTS, 0, src.n);
      }
      gl.uniform1f(flatProg.u.wradius, 0); // lines and boxes drawn next are not discs
    }
  }
  // the mouse spring
  const g = S.status && S.status.grab;
  if (g) {
    gl.useProgram(flatProg.p);
    gl.uniformMatrix4fv(flatProg.u.mvp, false, vp); gl.uniform3fv(flatProg.u.col, [1, 1, 0.2]);
    gl.bindBuffer(gl.ARRAY_BUFFER, S.grabBuf || (S.grabBuf = gl.createBuffer()));
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([...g.point, ...g.target]), gl.DYNAMIC_DRAW);
    gl.enableVertexAttribArray(0); gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
    gl.disable(gl.DEPTH_TEST);
    gl.uniform1f(flatProg.u.psize, 8);
    gl.drawArrays(gl.LINES, 0, 2); gl.drawArrays(gl.POINTS, 1, 1);
    gl.enable(gl.DEPTH_TEST);
  }
  const lg = $('legend');
  if (legend) {
    lg.hidden = false;
    if (legend.rest) {
      lg.replaceChildren(text('div', 'von Mises stress: none'),
        text('div', `at rest (below ${fmt(S.floor || 0)}: round-off)`, 'default'));
    } else {
      lg.replaceChildren(text('div', 'von Mises stress'), el('div', 'bar'),
        text('div', `${fmt(legend.lo)} … ${fmt(legend.hi)}`));
    }
    lg.dataset.rest = legend.rest ? '1' : '0';
  } else lg.hidden = true;
  S.drawn = (S.drawn || 0) + 1;
}
function loop() {
  if (S.dirty) { S.dirty = false; draw(); }
  requestAnimationFrame(loop);
}

// ---------- screenshot ----------
function screenshot() {
  draw(); // the drawing buffer is read in the same task as it is drawn
  return canvas.toDataURL('image/png');
}
function saveScreenshot() {
  const a = document.createElement('a');
  a.href = screenshot();
  a.download = `canape-${(S.time || 0).toFixed(3)}s.png`;
  document.body.append(a); a.click(); a.remove();
}

// ---------- plot of one Data number over time ----------
function watch(component, data) {
  S.plot = { component, data, label: '', samples: [] };
  send({ type: 'watch', component, data, index: Math.max(0, parseInt($('plot-index').value, 10) || 0) });
  $('plot-hint').hidden = true; $('plot-ctl').hidden = false; $('plot').hidden = false;
}
function unwatch() {
  S.plot = null; send({ type: 'unwatch' });
  $('plot-hint').hidden = false; $('plot-ctl').hidden = true; $('plot').hidden = true;
}
function onWatch(w, time) {
  const p = S.plot;
  if (!p || !w) return;
  const last = p.samples[p.samples.length - 1];
  if (w.label !== p.label || (last && time < last[0])) { p.samples = []; p.label = w.label; }
  if (w.value !== null && (!last || time > last[0])) p.samples.push([time, w.value]);
  if (p.samples.length > 4000) p.samples.splice(0, p.samples.length - 4000);
  $('plot-label').textContent = w.label + (w.value === null ? ' (gone)' : '');
  drawPlot();
}
function drawPlot() {
  const c = $('plot'), g = c.getContext('2d'), p = S.plot;
  const w = c.width, h = c.height;
  g.fillStyle = '#16181c'; g.fillRect(0, 0, w, h);
  if (!p || !p.samples.length) return;
  let t0 = p.samples[0][0], t1 = p.samples[p.samples.length - 1][0], lo = Infinity, hi = -Infinity;
  for (const [, v] of p.samples) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (hi - lo < 1e-300) { lo -= 0.5; hi += 0.5; }
  if (t1 <= t0) t1 = t0 + 1;
  const X = (t) => 40 + (t - t0) / (t1 - t0) * (w - 48), Y = (v) => h - 14 - (v - lo) / (hi - lo) * (h - 24);
  g.strokeStyle = '#444'; g.beginPath(); g.moveTo(40, 4); g.lineTo(40, h - 14); g.lineTo(w - 4, h - 14); g.stroke();
  g.fillStyle = '#aaa'; g.font = '10px sans-serif';
  g.fillText(fmt(hi), 2, 12); g.fillText(fmt(lo), 2, h - 16); g.fillText(`${t0.toFixed(2)} s`, 40, h - 2);
  g.fillText(`${t1.toFixed(2)} s`, w - 44, h - 2);
  g.strokeStyle = '#6fb3ff'; g.beginPath();
  p.samples.forEach(([t, v], i) => (i ? g.lineTo(X(t), Y(v)) : g.moveTo(X(t), Y(v))));
  g.stroke();
}

// ---------- DOM helpers ----------
function el(tag, cls) { const e = document.createElement(tag); if (cls) e.className = cls; return e; }
function text(tag, t, cls) { const e = el(tag, cls); e.textContent = t; return e; }
function fmt(v) { return Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(3) : v.toPrecision(4); }

function send(obj) {
  if (S.ws && S.ws.readyState === WebSocket.OPEN) S.ws.send(JSON.stringify(obj));
}
function message(msg, cls) {
  const d = text('div', msg, cls);
  const box = $('messages');
  box.prepend(d);
  while (box.childNodes.length > 60) box.removeChild(box.lastChild);
  S.messages.push({ msg, cls });
}

// ---------- panels ----------
function showDiagnostics(list) {
  const errors = list.filter((d) => /^error/.test(d)).length;
  const warnings = list.filter((d) => /^warning/.test(d)).length;
  S.diagCount = { errors, warnings };
  const b = $('diag');
  if (!errors && !warnings) { b.hidden = true; return; }
  const part = (n, w) => `${n} ${w}${n === 1 ? '' : 's'}`;
  b.textContent = [errors ? part(errors, 'error') : '', warnings ? part(warnings, 'warning') : '']
    .filter(Boolean).join(' · ') + (errors ? ' while loading' : '');
  b.className = 'diag ' + (errors ? 'bad' : 'warn');
  b.hidden = false;
}

function renderTree(t) {
  const box = $('tree');
  box.replaceChildren();
  if (!t) return;
  const rec = (n) => {
    const li = el('li');
    const name = text('span', n.name + (n.active ? '' : ' (inactive)'), 'node');
    name.dataset.node = n.id;
    name.addEventListener('click', () => selectNode(n.id, name));
    li.append(name);
    const ul = el('ul');
    for (const c of n.components) {
      const ci = el('li', 'comp');
      ci.dataset.component = c.id;
      ci.append(text('span', c.class, 'cls'), document.createTextNode(' ' + c.name));
      ci.title = c.role;
      ci.addEventListener('click', () => selectComponent(c.id, ci));
      ul.append(ci);
    }
    for (const ch of n.children) ul.append(rec(ch));
    li.append(ul);
    return li;
  };
  const ul = el('ul'); ul.append(rec(t)); box.append(ul);
}
function highlight(elm) {
  for (const e of document.querySelectorAll('#tree .sel')) e.classList.remove('sel');
  if (elm) elm.classList.add('sel');
}
function selectComponent(id, elm) { S.selected = { component: id }; highlight(elm); send({ type: 'select', component: id }); }
function selectNode(id, elm) { S.selected = { node: id }; highlight(elm); send({ type: 'select_node', node: id }); }

function renderData(d, isNode) {
  $('data-title').textContent = isNode ? `Node ${d.path}` : `${d.class} ${d.name}`;
  const box = $('data');
  box.replaceChildren();
  if (!isNode) box.append(text('p', `${d.path}  ${d.line ? '(' + d.line + ')' : ''}`, 'hint'));
  const tab = el('table');
  const cg = el('colgroup');
  cg.append(el('col', 'name'), el('col', 'value'));
  tab.append(cg);
  for (const f of d.fields) {
    const tr = el('tr');
    const name = text('td', f.name, 'name');
    name.title = `${f.help}\n(${f.kind}, default: ${f.default === '' ? '—' : f.default})`;
    const val = el('td', f.set ? 'set' : '');
    const target = isNode ? { target: 'node', id: d.node } : { target: 'component', id: d.component };
    const refused = S.refused && S.refused.target === target.target && S.refused.id === target.id
      && S.refused.data === f.name ? S.refused : null;
    if (f.editable) {
      const inp = el('input');
      inp.value = f.value; inp.dataset.data = f.name;
      if (refused) inp.classList.add('refused');
      inp.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter') {
          S.refused = null;
          if (isNode) send({ type: 'set_node_data', node: d.node, data: f.name, value: inp.value });
          else send({ type: 'set_data', component: d.component, data: f.name, value: inp.value });
        }
        ev.stopPropagation();
      });
      val.append(inp);
    } else {
      val.textContent = f.value + (f.link ? `  ← ${f.link}` : '');
    }
    if (!isNode && /^(real|int|bool|vec)/i.test(f.kind)) {
      const pb = text('button', '⌁', 'plot');
      pb.title = 'Plot this Data over time'; pb.dataset.plot = f.name;
      pb.addEventListener('click', () => watch(d.component, f.name));
      val.append(pb);
    }
    if (refused) val.append(text('div', refused.message, 'refused'));
    if (f.set) val.append(text('div', `default: ${f.default === '' ? '—' : f.default}`, 'default'));
    tr.append(name, val);
    tab.append(tr);
  }
  box.append(tab);
}

function renderFlags() {
  const box = $('flags');
  box.replaceChildren();
  const names = { visual: 'visual models', behavior: 'behaviour models', forcefields: 'force fields',
    collision: 'collision models', mappings: 'mappings', wireframe: 'wireframe', contacts: 'contacts' };
  for (const k of Object.keys(names)) {
    const l = el('label'), c = el('input');
    c.type = 'checkbox'; c.checked = !!S.flags[k]; c.dataset.flag = k;
    c.addEventListener('change', () => setFlag(k, c.checked));
    l.append(c, document.createTextNode(' ' + names[k]));
    box.append(l);
  }
}
function setFlag(k, on) {
  S.flags[k] = on; S.userFlags = Object.assign(S.userFlags || {}, { [k]: on });
  const c = document.querySelector(`#flags input[data-flag="${k}"]`);
  if (c) c.checked = on;
  S.dirty = true;
}

function renderStatus(st) {
  S.status = st;
  if (st.watch) onWatch(st.watch, st.time);
  $('play').textContent = st.playing ? 'Pause' : 'Animate';
  $('play').classList.toggle('on', st.playing);
  if (document.activeElement !== $('dt')) $('dt').value = st.dt;
  $('realtime').checked = st.realtime;
  $('time').textContent = st.time.toFixed(4);
  const r = st.rates || {};
  $('rate').textContent = r.steps_per_s !== undefined
    ? `${r.steps_per_s.toFixed(1)} steps/s · ×${r.rt_factor.toFixed(2)} real time` : '';
  const tab = $('timing');
  tab.replaceChildren();
  if (r.phases) {
    const rows = [['step', r.ms_per_step], ...r.phases];
    for (const [k, v] of rows) {
      const tr = el('tr'); tr.append(text('td', k), text('td', v.toFixed(3), 'v')); tab.append(tr);
    }
  }
  if (st.iterations && st.iterations.length) {
    const tr = el('tr'); tr.append(text('td', 'iterations'), text('td', st.iterations.join(' '), 'v')); tab.append(tr);
  }
  S.dirty = true;
}

// ---------- connection ----------
function connect() {
  // the server's token, when it listens beyond loopback, goes with the WebSocket too
  const token = new URLSearchParams(location.search).get('token');
  const ws = new WebSocket(`ws://${location.host}/ws` + (token ? `?token=${encodeURIComponent(token)}` : ''));
  ws.binaryType = 'arraybuffer';
  S.ws = ws;
  ws.onopen = () => { $('conn').textContent = 'connected'; $('conn').className = 'conn ok'; };
  ws.onclose = () => {
    $('conn').textContent = 'disconnected (retrying)'; $('conn').className = 'conn bad';
    setTimeout(connect, 1000);
  };
  ws.onmessage = (ev) => {
    if (ev.data instanceof ArrayBuffer) { onFrame(ev.data); return; }
    const m = JSON.parse(ev.data);
    switch (m.type) {
      case 'hello':
        S.hello = m; $('scene-name').textContent = m.scene.split(/[\\/]/).pop(); $('scene-name').title = m.scene;
        renderTree(m.tree);
        if (m.bounds) S.bounds = m.bounds;
        for (const d of m.diagnostics) message(d, /error/.test(d) ? 'error' : '');
        showDiagnostics(m.diagnostics);
        break;
      case 'topology': setTopology(m); break;
      case 'status': renderStatus(m); break;
      case 'data': renderData(m, false); break;
      case 'node_data': renderData(m, true); break;
      case 'data_changed':
        if (S.selected && S.selected.component === m.component) send({ type: 'select', component: m.component });
        break;
      case 'notice': message(m.message, ''); break;
      case 'refused': S.refused = { target: m.target, id: m.id, data: m.data, message: m.message }; break;
      case 'error': message(m.message, 'error'); break;
    }
  };
}

// ---------- input ----------
let drag = null;
canvas.addEventListener('contextmenu', (ev) => ev.preventDefault());
canvas.addEventListener('mousedown', (ev) => {
  canvas.focus();
  if (ev.button === 0 && ev.shiftKey) {
    const r = ray(ev.clientX, ev.clientY);
    send({ type: 'grab', origin: r.origin, dir: r.dir });
    drag = { mode: 'grab' };
  } else {
    drag = { mode: ev.button === 2 || ev.ctrlKey ? 'pan' : 'orbit', x: ev.clientX, y: ev.clientY };
  }
  ev.preventDefault();
});
window.addEventListener('mousemove', (ev) => {
  if (!drag) return;
  if (drag.mode === 'grab') {
    const r = ray(ev.clientX, ev.clientY);
    send({ type: 'drag', origin: r.origin, dir: r.dir });
    return;
  }
  const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
  drag.x = ev.clientX; drag.y = ev.clientY;
  if (drag.mode === 'orbit') {
    cam.yaw -= dx * 0.008;
    cam.pitch = Math.max(-1.55, Math.min(1.55, cam.pitch + dy * 0.008));
  } else {
    const e = eye(), f = norm(sub(cam.target, e)), r = norm(cross(f, [0, 1, 0])), u = cross(r, f);
    const k = cam.dist * 2 * Math.tan(cam.fov / 2) / Math.max(canvas.clientHeight, 1);
    cam.target = add(cam.target, add(scale(r, -dx * k), scale(u, dy * k)));
  }
  S.dirty = true;
});
window.addEventListener('mouseup', () => {
  if (drag && drag.mode === 'grab') send({ type: 'release' });
  drag = null;
});
canvas.addEventListener('wheel', (ev) => {
  cam.dist *= Math.exp(ev.deltaY * 0.001);
  S.dirty = true; ev.preventDefault();
}, { passive: false });

function togglePlay() { send({ type: S.status && S.status.playing ? 'pause' : 'play' }); }
function toggleHelp(on) { $('help').hidden = on === undefined ? !$('help').hidden : !on; }
// Ctrl + a key goes to the scene's controllers, as in runSofa
const sceneKey = (ev, down) => {
  if (!ev.ctrlKey || ev.key.length !== 1 || ev.target instanceof HTMLInputElement) return false;
  send({ type: 'key', key: ev.key, down });
  ev.preventDefault();
  return true;
};
window.addEventListener('keyup', (ev) => { sceneKey(ev, false); });
window.addEventListener('keydown', (ev) => {
  if (ev.target instanceof HTMLInputElement) return;
  if (sceneKey(ev, true)) return;
  const k = ev.key;
  if (k === ' ') { togglePlay(); ev.preventDefault(); }
  else if (k === 'n') send({ type: 'step' });
  else if (k === 'r') send({ type: 'reset' });
  else if (k === 'f') fit();
  else if (k === 'p') saveScreenshot();
  else if (k === 'w') setFlag('wireframe', !S.flags.wireframe);
  else if (k === 'h' || k === '?') toggleHelp();
  else if (k === 'Escape') toggleHelp(false);
});
$('play').addEventListener('click', togglePlay);
$('step').addEventListener('click', () => send({ type: 'step' }));
$('reset').addEventListener('click', () => send({ type: 'reset' }));
$('fit').addEventListener('click', fit);
$('shot').addEventListener('click', saveScreenshot);
$('diag').addEventListener('click', () => $('messages').scrollIntoView({ block: 'nearest' }));
$('plot-stop').addEventListener('click', unwatch);
$('plot-index').addEventListener('change', () => { if (S.plot) watch(S.plot.component, S.plot.data); });
$('help-btn').addEventListener('click', () => toggleHelp());
$('help').addEventListener('click', () => toggleHelp(false));
$('dt').addEventListener('change', () => {
  const v = parseFloat($('dt').value);
  if (v > 0) send({ type: 'set_dt', dt: v });
});
$('realtime').addEventListener('change', () => send({ type: 'set_realtime', on: $('realtime').checked }));
$('stiffness').addEventListener('change', () => {
  const v = parseFloat($('stiffness').value);
  if (v >= 0) send({ type: 'set_grab_stiffness', stiffness: v });
});
canvas.tabIndex = 0;

// test and debug hooks (read-only views of the page's state)
window.canape = {
  get frames() { return S.frames; },
  get drawn() { return S.drawn || 0; },
  get time() { return S.time; },
  get status() { return S.status; },
  get topology() { return S.topology; },
  get messages() { return S.messages.slice(); },
  get flags() { return Object.assign({}, S.flags); },
  sources() { return S.sources.map((s) => ({ name: s.name, n: s.n, grabbable: s.grabbable })); },
  position(source, i) { const s = S.sources[source]; return s && s.pos ? [s.pos[3 * i], s.pos[3 * i + 1], s.pos[3 * i + 2]] : null; },
  project,
  fit,
  screenshot,
  bounds: currentBounds,
  get diagCount() { return S.diagCount; },
  get plot() { return S.plot ? { label: S.plot.label, samples: S.plot.samples.slice() } : null; },
  get legend() { const l = $('legend'); return l.hidden ? null : l.textContent; },
};

connect();
requestAnimationFrame(loop);
