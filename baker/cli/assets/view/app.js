// Kiln view: the colliders of one archive (coloured by kind) beside the
// source's render meshes (grey), an object list, live queries through the
// baker's own query code (POST /api/query, the `baker query` protocol) and
// live reload (GET /api/version, polled).
//
// For tests and scripts the page reports its state in the DOM:
// body[data-state] is "loading", "ready" or "error"; body[data-generation]
// the archive generation shown; #hit[data-object] the object the last
// click hit; #errors collects script errors. URL parameters:
// camera=px,py,pz,tx,ty,tz sets the view; select=NAME selects an object;
// click=X,Y clicks that pixel once the level is shown; pieces=1 shows the
// convex pieces (for physics engines) of the objects that have them, each
// piece in its own colour, in place of their colliders.

import * as THREE from 'three';
import { OrbitControls } from '/vendor/OrbitControls.js';

const errors = document.getElementById('errors');
const report = (msg) => { errors.textContent += msg + '\n'; document.body.dataset.errors = (+(document.body.dataset.errors || 0) + 1); };
window.addEventListener('error', (e) => report('error: ' + e.message));
window.addEventListener('unhandledrejection', (e) => report('rejection: ' + (e.reason && e.reason.message || e.reason)));
const consoleError = console.error.bind(console);
console.error = (...args) => { report('console.error: ' + args.join(' ')); consoleError(...args); };

export const KIND_COLOURS = {
  cuboid: 0xff7a1a, sphere: 0x2f8cff, capsule: 0x22cc66, polytope: 0xb040ff, bsp: 0xffd21a, trimesh: 0x19d3c5,
};
const KIND_LABELS = { cuboid: 'box', sphere: 'sphere', capsule: 'capsule', polytope: 'polytope', bsp: 'concave solid', trimesh: 'triangle mesh' };

const params = new URLSearchParams(location.search);
const view = document.getElementById('view');
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(1);
view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x1d1f24);
const camera = new THREE.PerspectiveCamera(50, 1, 0.05, 10000);
const controls = new OrbitControls(camera, renderer.domElement);
scene.add(new THREE.HemisphereLight(0xffffff, 0x404050, 1.6));
const sun = new THREE.DirectionalLight(0xffffff, 1.4);
sun.position.set(0.4, 1, 0.3);
scene.add(sun);

const colliders = new THREE.Group();
const renders = new THREE.Group();
const marks = new THREE.Group();
const pieces = new THREE.Group();
scene.add(renders, colliders, pieces, marks);

const state = { generation: -1, level: null, shown: {}, selected: -1, meshes: [] };
// for scripts and tests (e.g. the camera, which a reload keeps)
window.kilnView = { camera, controls, state, click };
for (const k of Object.keys(KIND_COLOURS)) state.shown[k] = true;
state.shown.render = true;
state.shown.pieces = params.get('pieces') === '1';

function resize() {
  const w = view.clientWidth, h = view.clientHeight;
  renderer.setSize(w, h, false);
  camera.aspect = w / Math.max(h, 1);
  camera.updateProjectionMatrix();
}
window.addEventListener('resize', () => { resize(); redraw(); });

function frame(lo, hi) {
  const c = new THREE.Vector3().addVectors(lo, hi).multiplyScalar(0.5);
  const r = Math.max(new THREE.Vector3().subVectors(hi, lo).length() * 0.5, 0.5);
  camera.position.copy(c).add(new THREE.Vector3(0.9, 0.7, 1.1).normalize().multiplyScalar(r * 2.2));
  camera.near = r / 200; camera.far = r * 50;
  camera.updateProjectionMatrix();
  controls.target.copy(c);
  controls.update();
}

function geometry(buf, g) {
  const pos = new Float32Array(buf, g.positions, g.vertices * 3);
  const idx = new Uint32Array(buf, g.indices, g.triangles * 3);
  const geo = new THREE.BufferGeometry();
  geo.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  geo.setIndex(new THREE.BufferAttribute(idx, 1));
  geo.computeVertexNormals();
  geo.computeBoundingSphere();
  return geo;
}

function clear(group) {
  for (const m of group.children) { m.geometry && m.geometry.dispose(); m.material && m.material.dispose(); }
  group.clear();
}

async function load() {
  const level = await (await fetch('/api/level')).json();
  const buf = await (await fetch('/api/geometry?generation=' + level.generation)).arrayBuffer();
  if (buf.byteLength !== level.geometry_bytes) throw new Error('geometry is from another generation');
  clear(colliders); clear(renders); clear(pieces);
  state.meshes = [];
  state.decomposed = new Set();
  for (const o of level.objects) {
    // triggers are ghosts; movers are drawn as they were baked
    const mat = new THREE.MeshLambertMaterial({ color: KIND_COLOURS[o.kind] || 0xffffff, transparent: true, opacity: o.trigger ? 0.2 : 0.6, wireframe: !!o.trigger, flatShading: true, side: THREE.DoubleSide, depthWrite: false });
    const mesh = new THREE.Mesh(geometry(buf, o.geometry), mat);
    mesh.userData = { object: o.index, kind: o.kind };
    mesh.renderOrder = 1;
    colliders.add(mesh);
    state.meshes[o.index] = mesh;
    // each piece its own hue (golden-angle steps apart)
    (o.pieces || []).forEach((g, k) => {
      const colour = new THREE.Color().setHSL((k * 0.618034) % 1, 0.75, 0.55);
      const pm = new THREE.Mesh(geometry(buf, g), new THREE.MeshLambertMaterial({ color: colour, flatShading: true, side: THREE.DoubleSide }));
      pm.userData = { object: o.index, kind: 'piece' };
      pieces.add(pm);
      state.decomposed.add(o.index);
    });
  }
  document.body.dataset.pieces = pieces.children.length;
  for (const r of level.render) {
    const mat = new THREE.MeshLambertMaterial({ color: 0x8a8d94, flatShading: true, side: THREE.DoubleSide, polygonOffset: true, polygonOffsetFactor: 1, polygonOffsetUnits: 1 });
    renders.add(new THREE.Mesh(geometry(buf, r.geometry), mat));
  }
  const first = state.level === null;
  state.level = level;
  state.generation = level.generation;
  if (first) {
    const cam = (params.get('camera') || '').split(',').map(Number);
    if (cam.length === 6 && cam.every(Number.isFinite)) {
      camera.position.set(cam[0], cam[1], cam[2]);
      controls.target.set(cam[3], cam[4], cam[5]);
      controls.update();
    } else if (level.bounds) {
      frame(new THREE.Vector3(...level.bounds[0]), new THREE.Vector3(...level.bounds[1]));
    }
  }
  list(level);
  strays(level).catch((e) => report('strays: ' + e.message));
  applyVisibility();
  const keep = state.selected >= 0 && state.selected < level.objects.length ? state.selected : -1;
  state.selected = -1;
  if (keep >= 0) select(keep, false);
  document.getElementById('title').textContent = level.archive;
  document.getElementById('summary').textContent =
    `${level.objects.length} objects, ${level.bytes} bytes` + (level.source ? `\nsource: ${level.source}` : '\nno source given (--source)');
  document.body.dataset.generation = level.generation;
  document.body.dataset.objects = level.objects.length;
  banner(level.error);
  redraw();
}

function banner(msg) {
  const b = document.getElementById('banner');
  b.textContent = msg ? 'Reload failed, still showing the last good level:\n' + msg : '';
  b.classList.toggle('shown', !!msg);
}

function kinds() {
  const div = document.getElementById('kinds');
  div.innerHTML = '';
  const add = (key, label, colour) => {
    const l = document.createElement('label');
    const c = document.createElement('input');
    c.type = 'checkbox'; c.checked = state.shown[key]; c.dataset.kind = key;
    c.onchange = () => { state.shown[key] = c.checked; applyVisibility(); };
    const s = document.createElement('span');
    s.className = 'swatch'; s.style.background = colour;
    l.append(c, s, label);
    div.append(l);
  };
  for (const [k, col] of Object.entries(KIND_COLOURS)) add(k, KIND_LABELS[k], '#' + col.toString(16).padStart(6, '0'));
  add('render', 'render meshes', '#8a8d94');
  add('pieces', 'convex pieces (in place of their colliders)', 'linear-gradient(90deg, #e04040, #40c040, #4060e0)');
}

function applyVisibility() {
  const decomposed = state.decomposed || new Set();
  for (const m of colliders.children) {
    m.visible = state.shown[m.userData.kind] !== false && !(state.shown.pieces && decomposed.has(m.userData.object));
  }
  renders.visible = state.shown.render;
  pieces.visible = state.shown.pieces;
  redraw();
}

function list(level) {
  const tbody = document.getElementById('objects');
  tbody.innerHTML = '';
  for (const o of level.objects) {
    const tr = document.createElement('tr');
    tr.dataset.index = o.index;
    const role = [o.motion && o.motion !== 'static' ? o.motion : '', o.trigger ? 'trigger' : ''].filter(Boolean).join(' ');
    const name = role ? o.name + ' (' + role + ')' : o.name;
    for (const v of [name, KIND_LABELS[o.kind] || o.kind, level.source ? '…' : '-', o.triangles, o.bytes]) {
      const td = document.createElement('td'); td.textContent = v; tr.append(td);
    }
    tr.title = o.rule;
    tr.onclick = () => select(o.index, true);
    tbody.append(tr);
  }
}

// the "strays" column: each object's largest distance from its render
// mesh, asked for one object after another while this level is shown
async function strays(level) {
  if (!level.source) return;
  for (const o of level.objects) {
    if (state.level !== level) return;
    const res = await fetch(`/api/fidelity?generation=${level.generation}&object=${o.index}`);
    const f = await res.json();
    const td = document.querySelector(`#objects tr[data-index="${o.index}"] td:nth-child(3)`);
    if (!td || state.level !== level) return;
    const ok = res.ok && f.faces;
    td.textContent = ok ? f.max.toFixed(3) + ' m' : '-';
    td.title = ok ? `mean ${f.mean.toFixed(4)} m per triangle` : (f.reason || f.error);
    td.dataset.max = ok ? f.max : '';
  }
  document.getElementById('objects').dataset.strays = 'done';
}

async function select(i, zoom) {
  const level = state.level;
  const o = level.objects[i];
  if (!o) return;
  if (state.selected >= 0 && state.meshes[state.selected]) uncolour(state.meshes[state.selected]);
  state.selected = i;
  for (const tr of document.querySelectorAll('#objects tr')) tr.classList.toggle('selected', +tr.dataset.index === i);
  document.getElementById('detail').textContent =
    `${o.name}\nkind: ${KIND_LABELS[o.kind] || o.kind}\nlayers: ${o.layers.join(', ') || '-'}\ntriangles: ${o.triangles}, bytes: ${o.bytes}\nrule: ${o.rule}`;
  if (zoom) frame(new THREE.Vector3(...o.bounds[0]), new THREE.Vector3(...o.bounds[1]));
  const legend = document.getElementById('legend');
  legend.classList.remove('shown');
  if (!level.source) return;
  const res = await fetch(`/api/fidelity?generation=${level.generation}&object=${i}`);
  if (state.selected !== i || state.level !== level) return;
  const f = await res.json();
  if (!res.ok || !f.faces) {
    document.getElementById('detail').textContent += `\nheat map: ${f.reason || f.error}`;
    return;
  }
  colour(state.meshes[i], f.faces, f.max);
  document.getElementById('legend-hi').textContent = f.max.toPrecision(3) + ' m';
  legend.classList.add('shown');
  document.getElementById('detail').textContent +=
    `\nstrays from the render mesh: up to ${f.max.toPrecision(3)} m, ${f.mean.toPrecision(3)} m on average per triangle`;
}

// blue (0) → red (max): the heat map of a collider's distance to its render mesh
function heat(t) {
  const stops = [[0.13, 0.25, 1], [0.13, 0.82, 1], [0.13, 1, 0.38], [1, 0.88, 0.13], [1, 0.19, 0.13]];
  const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1);
  const k = Math.min(Math.floor(x), stops.length - 2), f = x - k;
  return stops[k].map((a, j) => a + (stops[k + 1][j] - a) * f);
}

// each collider triangle coloured by how far it strays from the render
// mesh (per face, so the geometry is unshared while selected)
function colour(mesh, faces, max) {
  const g = mesh.geometry.toNonIndexed();
  const c = new Float32Array(faces.length * 9);
  for (let f = 0; f < faces.length; f++) {
    const rgb = heat(max > 0 ? faces[f] / max : 0);
    for (let k = 0; k < 3; k++) c.set(rgb, (f * 3 + k) * 3);
  }
  g.setAttribute('color', new THREE.BufferAttribute(c, 3));
  g.computeVertexNormals();
  mesh.userData.shared = mesh.geometry;
  mesh.geometry = g;
  mesh.material.vertexColors = true;
  mesh.material.color.set(0xffffff);
  mesh.material.opacity = 0.9;
  mesh.material.needsUpdate = true;
  redraw();
}

function uncolour(mesh) {
  if (mesh.userData.shared) {
    mesh.geometry.dispose();
    mesh.geometry = mesh.userData.shared;
    delete mesh.userData.shared;
  }
  mesh.material.vertexColors = false;
  mesh.material.color.set(KIND_COLOURS[mesh.userData.kind] || 0xffffff);
  mesh.material.opacity = 0.6;
  mesh.material.needsUpdate = true;
  redraw();
}

async function query(q) {
  const res = await fetch('/api/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(q) });
  return res.json();
}

function dot(p, colour, r) {
  const m = new THREE.Mesh(new THREE.SphereGeometry(r, 12, 8), new THREE.MeshBasicMaterial({ color: colour, depthTest: false }));
  m.position.set(...p);
  m.renderOrder = 3;
  marks.add(m);
}

function arrow(p, n, colour, len) {
  const a = new THREE.ArrowHelper(new THREE.Vector3(...n).normalize(), new THREE.Vector3(...p), len, colour);
  a.renderOrder = 3;
  marks.add(a);
}

// a click at pixel (x, y) of the view: a ray from the camera, then in probe
// modes a sphere or capsule dropped where it hit, resting on the surface
export async function click(x, y) {
  const rect = renderer.domElement.getBoundingClientRect();
  const ndc = new THREE.Vector2((x / rect.width) * 2 - 1, -(y / rect.height) * 2 + 1);
  const ray = new THREE.Raycaster();
  ray.setFromCamera(ndc, camera);
  const o = ray.ray.origin, d = ray.ray.direction;
  const answer = await query({ ray: { origin: [o.x, o.y, o.z], dir: [d.x, d.y, d.z] } });
  clear(marks);
  redraw();
  const out = document.getElementById('hit');
  const scale = camera.position.distanceTo(controls.target) / 60;
  if (answer.error) { out.textContent = 'error: ' + answer.error; return answer; }
  if (!answer.hit) { out.textContent = 'no hit'; out.dataset.object = ''; return answer; }
  const h = answer.hit;
  dot(h.point, 0xffffff, scale * 0.5);
  arrow(h.point, h.normal, 0xffffff, scale * 6);
  out.dataset.object = h.object;
  let text = `ray hit ${h.object} (object ${h.object_index}, feature ${h.feature ?? "none"})\nt ${h.t.toFixed(3)}  point [${h.point.map((v) => v.toFixed(3))}]\nnormal [${h.normal.map((v) => v.toFixed(3))}]`;
  const mode = document.querySelector('input[name=mode]:checked').value;
  if (mode !== 'ray') {
    const r = Math.max(+document.getElementById('radius').value || 0.5, 0.01);
    const n = new THREE.Vector3(...h.normal).normalize();
    const c = new THREE.Vector3(...h.point).addScaledVector(n, r * 0.9);
    let q, probe;
    if (mode === 'sphere') {
      q = { sphere: { center: [c.x, c.y, c.z], radius: r } };
      probe = new THREE.Mesh(new THREE.SphereGeometry(r, 24, 16), new THREE.MeshBasicMaterial({ color: 0xffffff, wireframe: true }));
      probe.position.copy(c);
    } else {
      const a = c.clone().addScaledVector(n, r), b = a.clone().addScaledVector(n, 2 * r);
      q = { capsule: { a: [a.x, a.y, a.z], b: [b.x, b.y, b.z], radius: r } };
      probe = new THREE.Mesh(new THREE.CapsuleGeometry(r, 2 * r, 8, 16), new THREE.MeshBasicMaterial({ color: 0xffffff, wireframe: true }));
      probe.position.copy(a.clone().add(b).multiplyScalar(0.5));
      probe.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), n);
    }
    marks.add(probe);
    const ov = await query(q);
    if (ov.error) { text += '\nprobe error: ' + ov.error; } else {
      text += `\n${mode} r ${r}: ${ov.overlaps.length} overlap(s)`;
      for (const c of ov.overlaps) {
        dot(c.point, 0xff3355, scale * 0.4);
        arrow(c.point, c.normal, 0xff3355, Math.max(c.depth, scale * 3));
        text += `\n  ${c.object}: depth ${c.depth.toFixed(4)}`;
      }
    }
  }
  out.textContent = text;
  redraw();
  return answer;
}

renderer.domElement.addEventListener('pointerdown', (e) => { state.down = [e.clientX, e.clientY]; });
renderer.domElement.addEventListener('pointerup', (e) => {
  // a click, not the end of a drag that turned the camera
  if (!state.down || Math.hypot(e.clientX - state.down[0], e.clientY - state.down[1]) > 4) return;
  const rect = renderer.domElement.getBoundingClientRect();
  click(e.clientX - rect.left, e.clientY - rect.top).catch((err) => report('click: ' + err.message));
});

async function poll() {
  try {
    const v = await (await fetch('/api/version')).json();
    if (v.generation !== state.generation) await load();
    else banner(v.error);
  } catch (e) {
    banner('the baker view server is not answering (' + e.message + ')');
  }
  setTimeout(poll, 250);
}

// drawn on demand (camera moves, loads, clicks), not every frame: an idle
// viewer costs no CPU or GPU
let pending = false;
function redraw() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => { pending = false; renderer.render(scene, camera); });
}
controls.addEventListener('change', redraw);

async function main() {
  kinds();
  resize();
  try {
    await load();
  } catch (e) {
    document.body.dataset.state = 'error';
    banner('could not load the level: ' + e.message);
    throw e;
  }
  const sel = params.get('select');
  if (sel) {
    const o = state.level.objects.find((o) => o.name === sel);
    if (o) await select(o.index, !params.get('camera'));
  }
  renderer.render(scene, camera);
  const at = (params.get('click') || '').split(',').map(Number);
  if (at.length === 2 && at.every(Number.isFinite)) await click(at[0], at[1]);
  document.body.dataset.state = 'ready';
  redraw();
  setTimeout(poll, 250);
}

main();
