"""A ``.skel`` ``<skeleton>``: its bodies and joints put in the order DART builds them, with
the names DART issues.

Strict where DART crashes or hangs: an orphan body or a joint cycle is a FormatError.
"""

from __future__ import annotations

import numpy as np

from ...model.skeleton import Body, Joint, Skeleton, default_dof_names
from ..shared.xml import Node
from ._bodies import BodyReader
from ._joints import JointReader
from ._values import ValueReader

#: Bodies by name: (element, body).
Bodies = dict[str, tuple[Node, Body]]
#: Joints by child body name: (element, joint, parent body name or None for the world).
Joints = dict[str, tuple[Node, Joint, str | None]]


class NameManager:
    """DART's name manager: an empty name becomes the default; a taken one ``name(1)``,
    ``name(2)``… (the first free one)."""

    def __init__(self, default: str) -> None:
        self.default = default
        self.taken: set[str] = set()

    def issue(self, name: str) -> str:
        """Register ``name`` and return the name DART gives it."""
        base = name or self.default
        issued, count = base, 0
        while issued in self.taken:
            count += 1
            issued = f"{base}({count})"
        self.taken.add(issued)
        return issued


class SkeletonReader:
    """The ``<skeleton>`` elements of one ``.skel`` file."""

    def __init__(self, values: ValueReader) -> None:
        self.values = values
        self.bodies = BodyReader(values)
        self.joints = JointReader(values)

    def skeleton(self, node: Node) -> Skeleton:
        """A skeleton with its bodies in build order, each attached by its joint."""
        name = node.attrib.get("name", "")
        frame = self.values.transform(node.find("transformation"))
        mobile_node = node.find("mobile")
        mobile = True if mobile_node is None else self.values.boolean(mobile_node)
        bodies: Bodies = {}
        for body_node in node.findall("body"):
            body = self.bodies.body(body_node, frame)
            if body.name in bodies:
                self.bodies.merge_duplicate(body_node, bodies[body.name][1], body, name)
            else:
                bodies[body.name] = (body_node, body)
        joints = self._joints(node, bodies)
        built = self.assemble(node, name, bodies, joints)
        self.name_joints(node, built)
        skeleton = Skeleton(name, built, mobile=mobile)
        if not np.array_equal(frame, np.eye(4)):
            skeleton.attrs["frame"] = frame
        return skeleton

    def _joints(self, node: Node, bodies: Bodies) -> Joints:
        """Joints by child body, in file order; a second parent joint of a body is ignored
        (with a warning), as in DART."""
        joints: Joints = {}
        for joint_node in node.findall("joint"):
            joint, parent, child = self.joints.joint(joint_node, bodies)
            if child in joints:
                self.values.warn(joint_node, f"body {child!r} already has a parent joint; joint "
                                 f"{joint.name!r} is ignored, as DART does")
                continue
            joints[child] = (joint_node, joint, parent)
        return joints

    def name_joints(self, node: Node, built: list[Body]) -> None:
        """Joint and DOF names as DART issues them, in build order: a taken name gets
        ``(1)``, ``(2)``…; generated DOF names come from the final joint name; a planar
        joint's rotation DOF has no name, so it becomes ``default``."""
        joint_names = NameManager("default")
        dof_names = NameManager("default")
        for body in built:
            joint = body.joint
            issued = joint_names.issue(joint.name)
            if issued != joint.name:
                self.values.warn(node, f"a second joint named {joint.name!r} in skeleton "
                                 f"{node.attrib.get('name', '')!r}; renamed {issued!r}, as DART "
                                 "does")
                joint.attrs["skel_name"] = joint.name
            generated = default_dof_names(issued, joint.type, joint.axis_order, joint.plane)
            if joint.type == "planar":
                generated[2] = ""
            explicit = self.joints.explicit_dofs.get(id(joint), set())
            for index, dof in enumerate(joint.dofs):
                dof.name = dof_names.issue(dof.name if index in explicit else generated[index])
            joint.name = issued

    def assemble(self, node: Node, name: str, bodies: Bodies, joints: Joints) -> list[Body]:
        """Order bodies as DART builds them and fill parent indices and parent→joint frames."""
        index: dict[str, int] = {}
        out: list[Body] = []
        parents_needed = {parent for _, _, parent in joints.values() if parent is not None}
        for child in joints:
            self._place(child, bodies, joints, index, out)
        for body_name, (body_node, _) in bodies.items():
            if body_name not in index:
                if body_name in parents_needed:
                    continue
                raise self.values.error(body_node, f"body {body_name!r} of skeleton {name!r} has "
                                        "no joint (an orphan body: DART crashes or drops it); "
                                        "attach it with a <joint>, e.g. type=\"weld\" to world")
        return out

    def _place(self, child: str, bodies: Bodies, joints: Joints, index: dict[str, int],
               out: list[Body]) -> None:
        """Place ``child`` after its unplaced ancestors, walking up in a loop (not by
        recursion: a valid chain listed child-first can be thousands of bodies deep)."""
        chain: list[str] = []
        on_chain: set[str] = set()
        name: str | None = child
        while name is not None and name not in index:
            if name in on_chain:
                raise self.values.error(joints[name][0], "joint cycle: "
                                        + " -> ".join([*chain, name])
                                        + " (DART never finishes loading this)")
            chain.append(name)
            on_chain.add(name)
            name = joints[name][2] if name in joints else None
        for name in reversed(chain):
            body_node, body = bodies[name]
            if name not in joints:  # a parent body without a joint: DART gives it a free joint
                body.joint = Joint("root", "free", parent_to_joint=body.rest_pose.copy())
                self.values.warn(body_node, f"body {name!r} is a parent but has no joint; it gets "
                                 "a free joint named 'root', as in DART")
                parent_index = -1
            else:
                _, joint, parent = joints[name]
                parent_index = -1
                parent_pose = np.eye(4)
                if parent is not None:
                    parent_index = index[parent]
                    parent_pose = bodies[parent][1].rest_pose
                joint.parent_to_joint = np.linalg.inv(parent_pose) @ body.rest_pose @ \
                    joint.child_to_joint
                body.joint = joint
            body.parent = parent_index
            index[name] = len(out)
            out.append(body)
