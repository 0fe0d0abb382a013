// three.js GLTFLoader in plain Node: load FILE, play every clip once (LoopOnce, clamped),
// and at each time in TIMES (a JSON list of seconds) reset every action, set the mixer's
// time and write the world position and quaternion (x y z w) of every glTF node, by index.
import { readFile } from "node:fs/promises";
import { AnimationMixer, LoopOnce, Vector3, Quaternion } from "three";
import { GLTFLoader } from "three/addons/loaders/GLTFLoader.js";

// Node has no ProgressEvent, which three's FileLoader sends while it reads a data: URI buffer.
globalThis.ProgressEvent ??= class ProgressEvent extends Event {
  constructor(type, init = {}) { super(type); Object.assign(this, init); }
};

const [file, timesJson] = process.argv.slice(2);
const times = JSON.parse(timesJson);
const bytes = await readFile(file);
const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const gltf = await new Promise((resolve, reject) => new GLTFLoader().parse(buffer, "", resolve, reject));
const byNode = new Map();
gltf.scene.traverse((object) => {
  const found = gltf.parser.associations.get(object);
  if (found && found.nodes !== undefined && !byNode.has(found.nodes)) byNode.set(found.nodes, object);
});
const mixer = new AnimationMixer(gltf.scene);
const actions = gltf.animations.map((clip) => {
  const action = mixer.clipAction(clip);
  action.setLoop(LoopOnce);
  action.clampWhenFinished = true;
  action.play();
  return action;
});
const nodes = {};
for (const index of byNode.keys()) nodes[index] = { position: [], quaternion: [] };
const p = new Vector3(), q = new Quaternion(), s = new Vector3();
for (const t of times) {
  for (const action of actions) action.reset();
  mixer.setTime(t);
  gltf.scene.updateMatrixWorld(true);
  for (const [index, object] of byNode) {
    object.matrixWorld.decompose(p, q, s);
    nodes[index].position.push([p.x, p.y, p.z]);
    nodes[index].quaternion.push([q.x, q.y, q.z, q.w]);
  }
}
console.log(JSON.stringify({ clips: gltf.animations.map((c) => ({ name: c.name, duration: c.duration })), nodes }));
