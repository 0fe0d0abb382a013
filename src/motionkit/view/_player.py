"""The offline page's player: a small WebGL2 script of our own (no library, nothing loaded).

It reads the scene description (JSON, ``#motionkit-scene``) and one zlib-compressed binary
block (base64, ``#motionkit-data``) holding typed arrays: per actor one Float32 array of link
poses per shown frame (x y z qw qx qy qz), geometries (vertices, normals, faces), paths,
terrain. It places sticks, link axes and shapes from the link poses each frame, and offers
play/pause, a step slider, speed and an orbit camera (drag: turn; shift or right drag: pan;
wheel: zoom). Names reach the page only as text (``textContent``), never as markup or code.
"""

PLAYER_JS = r"""
"use strict";
(async () => {
const $ = (id) => document.getElementById(id);
const say = (text) => { $("mk-status").textContent = text; };
let meta, blob;
try {
  meta = JSON.parse($("motionkit-scene").textContent);
  const text = atob($("motionkit-data").textContent.trim());
  const packed = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) packed[i] = text.charCodeAt(i);
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("deflate"));
  blob = await new Response(stream).arrayBuffer();
} catch (error) { say("cannot read the scene: " + error); return; }
const KINDS = {f: Float32Array, d: Float64Array, u: Uint32Array, i: Int32Array};
const arr = (ref) => new KINDS[ref[0]](blob, ref[1], ref[2]);
const canvas = $("mk-canvas");
const gl = canvas.getContext("webgl2", {antialias: true});
if (!gl) { say("this page needs WebGL2"); return; }

const VS = `#version 300 es
in vec3 aPos; in vec3 aNormal; uniform mat4 uModel, uViewProj; out vec3 vNormal;
void main() { vNormal = mat3(uModel) * aNormal; gl_Position = uViewProj * uModel * vec4(aPos, 1.0); }`;
const FS = `#version 300 es
precision highp float; in vec3 vNormal; uniform vec3 uColor; uniform float uLit; out vec4 outColor;
void main() {
  vec3 n = normalize(vNormal); if (!gl_FrontFacing) n = -n;
  float d = 0.62 * max(dot(n, normalize(vec3(0.4, -0.6, 0.8))), 0.0)
          + 0.25 * max(dot(n, normalize(vec3(-0.6, 0.5, 0.4))), 0.0);
  vec3 c = uLit > 0.5 ? uColor * (0.38 + d) : uColor;
  outColor = vec4(min(c, vec3(1.0)), 1.0);
}`;
function shader(kind, source) {
  const s = gl.createShader(kind); gl.shaderSource(s, source); gl.compileShader(s);
  if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
  return s;
}
const program = gl.createProgram();
gl.attachShader(program, shader(gl.VERTEX_SHADER, VS));
gl.attachShader(program, shader(gl.FRAGMENT_SHADER, FS));
gl.bindAttribLocation(program, 0, "aPos"); gl.bindAttribLocation(program, 1, "aNormal");
gl.linkProgram(program); gl.useProgram(program);
const U = {};
for (const name of ["uModel", "uViewProj", "uColor", "uLit"]) U[name] = gl.getUniformLocation(program, name);
const IDENTITY = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);

function geometry(vertices, normals, faces, mode) {
  const vao = gl.createVertexArray(); gl.bindVertexArray(vao);
  const put = (data, slot) => {
    gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
    gl.enableVertexAttribArray(slot); gl.vertexAttribPointer(slot, 3, gl.FLOAT, false, 0, 0);
  };
  put(vertices, 0);
  if (normals) put(normals, 1); else { gl.disableVertexAttribArray(1); gl.vertexAttrib3f(1, 0, 0, 1); }
  let count = vertices.length / 3;
  if (faces) {
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, gl.createBuffer());
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, faces, gl.STATIC_DRAW); count = faces.length;
  }
  gl.bindVertexArray(null);
  return {vao, count, indexed: !!faces, mode: mode === undefined ? gl.TRIANGLES : mode};
}
function draw(geo, model, color, lit) {
  gl.bindVertexArray(geo.vao);
  gl.uniformMatrix4fv(U.uModel, false, model); gl.uniform3fv(U.uColor, color);
  gl.uniform1f(U.uLit, lit ? 1 : 0);
  if (geo.indexed) gl.drawElements(geo.mode, geo.count, gl.UNSIGNED_INT, 0);
  else gl.drawArrays(geo.mode, 0, geo.count);
}
function cylinder(sides) {  // radius 1, z from 0 to 1, closed
  const v = [], n = [], f = [];
  for (let k = 0; k < sides; k++) {
    const a = 2 * Math.PI * k / sides, c = Math.cos(a), s = Math.sin(a);
    v.push(c, s, 0, c, s, 1); n.push(c, s, 0, c, s, 0);
  }
  for (let k = 0; k < sides; k++) {
    const a = 2 * k, b = 2 * ((k + 1) % sides); f.push(a, b, a + 1, a + 1, b, b + 1);
  }
  for (const z of [0, 1]) {
    const centre = v.length / 3; v.push(0, 0, z); n.push(0, 0, z ? 1 : -1);
    for (let k = 0; k < sides; k++) {
      const a = 2 * Math.PI * k / sides; v.push(Math.cos(a), Math.sin(a), z); n.push(0, 0, z ? 1 : -1);
    }
    for (let k = 0; k < sides; k++) f.push(centre, centre + 1 + k, centre + 1 + (k + 1) % sides);
  }
  return geometry(new Float32Array(v), new Float32Array(n), new Uint32Array(f));
}
const ROD = cylinder(10);

function rotation(q, o) {  // columns of the rotation of w x y z quaternion q[o..o+3]
  const w = q[o], x = q[o + 1], y = q[o + 2], z = q[o + 3];
  return [[1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)],
          [2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)],
          [2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)]];
}
const times3 = (r, v) => [0, 1, 2].map((i) => r[0][i] * v[0] + r[1][i] * v[1] + r[2][i] * v[2]);
function matrix(cx, cy, cz, p) {  // columns x, y, z and position p as a column-major 4x4
  return new Float32Array([cx[0], cx[1], cx[2], 0, cy[0], cy[1], cy[2], 0,
                           cz[0], cz[1], cz[2], 0, p[0], p[1], p[2], 1]);
}
const scaled = (v, s) => [v[0] * s, v[1] * s, v[2] * s];
const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const unit = (v) => { const l = Math.hypot(v[0], v[1], v[2]) || 1; return scaled(v, 1 / l); };
function rod(a, b, radius) {  // a cylinder from point a to point b
  const d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]], z = unit(d);
  const u = unit(cross(z, Math.abs(z[2]) < 0.9 ? [0, 0, 1] : [1, 0, 0])), v = cross(z, u);
  return matrix(scaled(u, radius), scaled(v, radius), d, a);
}
const RGB = [[0.85, 0.1, 0.1], [0.1, 0.7, 0.1], [0.1, 0.2, 0.9]];
function axes(poses, o, length, radius) {  // three rods along a pose's axes
  const r = rotation(poses, o + 3), p = [poses[o], poses[o + 1], poses[o + 2]];
  for (let k = 0; k < 3; k++) {
    const a = r[k], b = r[(k + 1) % 3], c = r[(k + 2) % 3];
    draw(ROD, matrix(scaled(b, radius), scaled(c, radius), scaled(a, length), p), RGB[k], true);
  }
}

const geometries = meta.geometries.map((g) => geometry(arr(g.vertices), arr(g.normals), arr(g.faces)));
const statics = [];  // [geometry, colour, lit]
if (meta.terrain) statics.push([geometries[meta.terrain.geometry], meta.terrain.color, true]);
if (meta.grid) statics.push([geometry(arr(meta.grid.lines), null, null, gl.LINES), meta.grid.color, false]);
const actors = meta.actors.map((a) => ({
  ...a, poses: arr(a.poses), frameOf: arr(a.frame_of),
  path: a.path ? geometry(arr(a.path), null, null, gl.LINES) : null,
  along: a.along ? arr(a.along) : null,
  shapes: a.shapes.map((s) => ({...s, offsets: arr(s.offsets)})),
}));
const times = arr(meta.times), last = times.length - 1;

function drawActor(actor, step) {
  const L = actor.links, base = actor.frameOf[step] * L * 7, P = actor.poses;
  const at = (link) => [P[base + 7 * link], P[base + 7 * link + 1], P[base + 7 * link + 2]];
  if (actor.path) draw(actor.path, IDENTITY, actor.color, false);
  if (actor.along) {
    for (let o = 0; o < actor.along.length; o += 7) axes(actor.along, o, actor.size / 2, actor.size / 30);
  }
  for (let link = 0; link < L; link++) {
    axes(P, base + 7 * link, actor.size, actor.size / 12);
    const parent = actor.parents[link];
    if (parent >= 0) draw(ROD, rod(at(parent), at(link), actor.stick / 2), actor.color, true);
  }
  for (const shape of actor.shapes) {
    const geo = geometries[shape.geometry];
    shape.links.forEach((link, k) => {
      const o = base + 7 * link, r = rotation(P, o + 3), off = shape.offsets, q = 7 * k;
      const ro = rotation(off, q + 3), t = times3(r, [off[q], off[q + 1], off[q + 2]]);
      const cols = ro.map((c) => times3(r, c));
      const p = [P[o] + t[0], P[o + 1] + t[1], P[o + 2] + t[2]];
      draw(geo, matrix(cols[0], cols[1], cols[2], p), shape.color, true);
    });
  }
}

const cam = (() => {
  const p = meta.camera.position, t = meta.camera.target;
  const d = [p[0] - t[0], p[1] - t[1], p[2] - t[2]], dist = Math.hypot(d[0], d[1], d[2]);
  return {target: t.slice(), dist, yaw: Math.atan2(d[1], d[0]), pitch: Math.asin(d[2] / dist)};
})();
function viewProj() {
  const cp = Math.cos(cam.pitch), e = [cam.target[0] + cam.dist * cp * Math.cos(cam.yaw),
    cam.target[1] + cam.dist * cp * Math.sin(cam.yaw), cam.target[2] + cam.dist * Math.sin(cam.pitch)];
  const f = unit([cam.target[0] - e[0], cam.target[1] - e[1], cam.target[2] - e[2]]);
  const s = unit(cross(f, [0, 0, 1])), u = cross(s, f);
  const near = cam.dist / 200, far = cam.dist * 200, aspect = canvas.width / Math.max(canvas.height, 1);
  const k = 1 / Math.tan(25 * Math.PI / 180);
  const a = (far + near) / (near - far), b = 2 * far * near / (near - far);
  const dot = (x, y) => x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
  const V = [s, u, scaled(f, -1)], tr = V.map((row) => -dot(row, e));
  const P = [k / aspect, k, a];  // rows of the projection applied to view rows
  const m = new Float32Array(16);
  for (let c = 0; c < 4; c++) {
    const col = c < 3 ? [V[0][c], V[1][c], V[2][c]] : tr;
    m[4 * c] = P[0] * col[0]; m[4 * c + 1] = P[1] * col[1];
    m[4 * c + 2] = a * col[2] + (c === 3 ? b : 0); m[4 * c + 3] = -col[2];
  }
  return m;
}
canvas.addEventListener("contextmenu", (event) => event.preventDefault());
canvas.addEventListener("pointerdown", (event) => {
  canvas.setPointerCapture(event.pointerId);
  const pan = event.shiftKey || event.button !== 0;
  let x = event.clientX, y = event.clientY;
  const move = (e) => {
    const dx = e.clientX - x, dy = e.clientY - y; x = e.clientX; y = e.clientY;
    if (pan) {
      const k = cam.dist * 0.0015, cy = Math.cos(cam.yaw), sy = Math.sin(cam.yaw);
      cam.target[0] += k * (sy * dx - cy * Math.sin(cam.pitch) * dy);
      cam.target[1] += k * (-cy * dx - sy * Math.sin(cam.pitch) * dy);
      cam.target[2] += k * Math.cos(cam.pitch) * dy;
    } else {
      cam.yaw -= dx * 0.006; cam.pitch = Math.max(-1.5, Math.min(1.5, cam.pitch + dy * 0.006));
    }
    dirty = true;
  };
  const up = () => {
    canvas.removeEventListener("pointermove", move); canvas.removeEventListener("pointerup", up);
  };
  canvas.addEventListener("pointermove", move); canvas.addEventListener("pointerup", up);
});
canvas.addEventListener("wheel", (event) => {
  event.preventDefault(); cam.dist *= Math.exp(event.deltaY * 0.001); dirty = true;
}, {passive: false});

const slider = $("mk-step"), play = $("mk-play"), speed = $("mk-speed"), clock = $("mk-clock");
slider.max = String(Math.max(last, 1));
let step = 0, now = times[0], playing = !!meta.start_playing, dirty = true, before = null;
function show(next) {
  step = Math.max(0, Math.min(last, next)); slider.value = String(step);
  clock.textContent = `t = ${times[step].toFixed(3)} s (step ${step + 1} of ${times.length})`;
  dirty = true;
}
function setPlaying(on) {
  playing = on; before = null;
  play.textContent = on ? "❚❚" : "▶"; play.setAttribute("aria-pressed", String(on));
}
slider.addEventListener("input", () => { show(Number(slider.value)); now = times[step]; });
play.addEventListener("click", () => setPlaying(!playing));
function frame(ms) {
  if (playing && last > 0) {
    if (before !== null) {
      now += (ms - before) / 1000 * Number(speed.value);
      if (now > times[last]) now = times[0];
      let lo = 0, hi = last;  // the last step at or before now
      while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (times[mid] <= now) lo = mid; else hi = mid - 1; }
      if (lo !== step) show(lo);
    }
    before = ms;
  }
  const w = Math.round(canvas.clientWidth * devicePixelRatio);
  const h = Math.round(canvas.clientHeight * devicePixelRatio);
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; dirty = true; }
  if (dirty) {
    dirty = false;
    gl.viewport(0, 0, canvas.width, canvas.height); gl.enable(gl.DEPTH_TEST);
    gl.clearColor(1, 1, 1, 1); gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.uniformMatrix4fv(U.uViewProj, false, viewProj());
    for (const [geo, color, lit] of statics) draw(geo, IDENTITY, color, lit);
    actors.forEach((actor) => drawActor(actor, step));
    document.body.dataset.step = String(step);
  }
  requestAnimationFrame(frame);
}
window.motionkitView = {
  step: () => step, playing: () => playing,
  pose: (index, link) => {  // the link pose drawn now: x y z qw qx qy qz
    const a = actors[index], o = (a.frameOf[step] * a.links + link) * 7;
    return Array.from(a.poses.subarray(o, o + 7));
  },
};
setPlaying(playing); show(0); say("");
document.body.dataset.ready = "1";
requestAnimationFrame(frame);
})();
"""
