/* The forward-kinematics kernel of motionkit.kinematics, compiled.
 *
 * _compiled.py turns a skeleton into a plan (per body: a row of ints and a row of
 * doubles, laid out below) and calls run() on a range of frames; this file only walks
 * that plan, one frame at a time and one body after another in depth-first order,
 * writing each body's world pose x y z qx qy qz qw straight into the output array. The
 * rule is the one of _fast.py (the readable NumPy statement, which the tests hold this
 * one equal to): for a body with parent p,
 *
 *   q_W = q_p (x) (M . q_Q)           M: the constant 4x4 matrix of q_P (x) . (x) q_C^-1
 *   t_W = t_p + R_p (t_P + T . u) - R_W t_C
 *
 * with q_Q the joint's rotation, u its translation coordinates and T the constant
 * matrix taking them into the parent-to-joint frame. Quaternions are (x, y, z, w) with
 * w >= 0 on output. Buffers come through the buffer protocol (no NumPy headers needed),
 * are checked against the plan before the GIL is released, and nothing is allocated
 * per frame: the only allocation, once per call, is one rotation matrix per body and the
 * half-angle sines and cosines of one frame's coordinates and rotation vectors, which
 * are computed for the whole frame first, in one loop that vectorises.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* On x86-64 Linux with GCC, the sine loop is also built for x86-64-v3 (AVX2, FMA), taken
 * at load time where the CPU has it (the frame loop gains nothing from it). */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define CLONES
#endif

/* The int row of a body. */
enum { I_PARENT, I_ROT_KIND, I_ROT_DOF, I_MOVE_COUNT, I_MOVE_DOF, I_FLAGS, PLAN_INTS = 8 };
/* The double row of a body. */
enum {
    D_REST = 0,   /* M[:, 3]: q_P (x) q_C^-1, the rotation of a joint at zero (4) */
    D_MIX = 4,    /* M, row-major (16) */
    D_SINE = 20,  /* M[:, :3] . a: what sin(angle / 2) brings, for one axis a (4) */
    D_AXES = 24,  /* up to three unit axes (9) */
    D_OFFSET = 33, /* t_P (3) */
    D_MOVE = 36,  /* T, row-major, column k for translation coordinate k (9) */
    D_CHILD = 45, /* -t_C (3) */
    PLAN_DOUBLES = 48
};
/* What rotates a joint. */
enum { ROT_NONE, ROT_ONE_AXIS, ROT_TWO_AXES, ROT_THREE_AXES, ROT_VECTOR, ROT_KINDS };
/* Flags. */
enum { F_MIX = 1, F_MATRIX = 2, F_CHILD = 4 };

typedef struct {
    const int *ints;
    const double *consts;
    Py_ssize_t bodies, dofs, stride;
    const double *q;     /* (frames, dofs), frame f at q + f * stride (0: one row for all) */
    const double *root;  /* (frames, 7) or NULL */
    const double *given; /* (frames, bodies - 1, 4) or NULL: joint rotations after body 0 */
    double *out;         /* (frames, bodies, 7) */
    double *matrices;    /* (bodies, 9) scratch */
    double *sines, *cosines; /* (dofs) scratch: sin and cos of half of each coordinate */
    Py_ssize_t vectors;      /* joints rotated by a rotation vector (ball, free) */
    int *vector_dofs;        /* (vectors) their first coordinate */
    int *vector_slot;        /* (bodies) a body's index among them */
    double *norms, *vector_sines, *vector_cosines; /* (vectors) scratch: the angles, sin
                                                       and cos of their halves */
} Plan;

static inline void multiply(const double *a, const double *b, double *out) {
    double x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    double y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    double z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    out[0] = x; out[1] = y; out[2] = z; out[3] = w;
}

/* sin and cos of angle / 2 (one sincos call under -fno-math-errno). */
static inline void half_sincos(double angle, double *sine, double *cosine) {
    *sine = sin(0.5 * angle);
    *cosine = cos(0.5 * angle);
}

/* sin and cos of half of each of n angles, into sine[] and cosine[], to within about one
 * unit in the last place: the half angle less the nearest multiple k of pi/2 (pi/2 split
 * in three parts whose first two carry 33 bits, so that k times them is exact for
 * |k| < 2^20), the Taylor series of sin and cos on [-pi/4, pi/4] to the terms of degree
 * 15 and 16 (truncation below 5e-17), then the quadrant of k, taken from the low bits of
 * k + 1.5 * 2^52 (which is how k is rounded) and applied by bit operations. The loop has
 * no branch and no call, so that it vectorises; angles whose half is not below 1e5 in
 * magnitude (or not finite) are redone by the C library afterwards. */
CLONES
static void half_sincos_all(const double *restrict angle, Py_ssize_t n, double *restrict sine,
                            double *restrict cosine) {
    const double magic = 6755399441055744.0; /* 1.5 * 2^52 */
    for (Py_ssize_t i = 0; i < n; i++) {
        double x = 0.5 * angle[i];

        double shifted = x * 0.63661977236758134308 + magic;
        double k = shifted - magic;
        double r = ((x - k * 1.5707963267341256) - k * 6.077100506303966e-11) -
                   k * 2.0222662487959506e-21;
        double z = r * r;
        double s = r + r * z * (-1.0 / 6 + z * (1.0 / 120 + z * (-1.0 / 5040 + z * (1.0 / 362880 +
                   z * (-1.0 / 39916800 + z * (1.0 / 6227020800.0 + z * (-1.0 / 1307674368000.0)))))));
        double c = 1.0 + z * (-0.5 + z * (1.0 / 24 + z * (-1.0 / 720 + z * (1.0 / 40320 +
                   z * (-1.0 / 3628800 + z * (1.0 / 479001600.0 + z * (-1.0 / 87178291200.0 +
                   z * (1.0 / 20922789888000.0))))))));
        uint64_t quadrant, sb, cb;
        memcpy(&quadrant, &shifted, 8);
        memcpy(&sb, &s, 8);
        memcpy(&cb, &c, 8);
        uint64_t odd = 0 - (quadrant & 1); /* all ones in quadrants 1 and 3: sin and cos swap */
        uint64_t sv = (sb & ~odd) | (cb & odd), cv = (cb & ~odd) | (sb & odd);
        sv ^= (quadrant & 2) << 62;       /* sin < 0 in quadrants 2 and 3 */
        cv ^= ((quadrant + 1) & 2) << 62; /* cos < 0 in quadrants 1 and 2 */
        memcpy(sine + i, &sv, 8);
        memcpy(cosine + i, &cv, 8);
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(fabs(0.5 * angle[i]) < 1.0e5)) {
            sine[i] = sin(0.5 * angle[i]);
            cosine[i] = cos(0.5 * angle[i]);
        }
}

static inline void about_axis(const double *axis, double angle, double *out) {
    double s, c;
    half_sincos(angle, &s, &c);
    out[0] = s * axis[0]; out[1] = s * axis[1]; out[2] = s * axis[2]; out[3] = c;
}

static inline void apply_mix(const double *m, const double *q, double *out) {
    for (int i = 0; i < 4; i++)
        out[i] = m[4 * i] * q[0] + m[4 * i + 1] * q[1] + m[4 * i + 2] * q[2] + m[4 * i + 3] * q[3];
}

/* The joint rotation of one body, mixed with its constant frames: M . q_Q. */
static inline void joint_rotation(const Plan *plan, Py_ssize_t body, const double *q,
                                  const double *given, double *out) {
    const int *ints = plan->ints + body * PLAN_INTS;
    const double *d = plan->consts + body * PLAN_DOUBLES;
    const double *u = q + ints[I_ROT_DOF];
    double joint[4], tmp[4], tmp2[4];
    if (given != NULL) {
        double norm = sqrt(given[0] * given[0] + given[1] * given[1] + given[2] * given[2] +
                           given[3] * given[3]);
        for (int i = 0; i < 4; i++) joint[i] = given[i] / norm;
    } else {
        switch (ints[I_ROT_KIND]) {
        case ROT_ONE_AXIS: {
            double s = plan->sines[ints[I_ROT_DOF]], c = plan->cosines[ints[I_ROT_DOF]];
            for (int i = 0; i < 4; i++) out[i] = c * d[D_REST + i] + s * d[D_SINE + i];
            return;
        }
        case ROT_TWO_AXES:
            about_axis(d + D_AXES, u[0], tmp);
            about_axis(d + D_AXES + 3, u[1], tmp2);
            multiply(tmp, tmp2, joint);
            break;
        case ROT_THREE_AXES:
            about_axis(d + D_AXES, u[0], tmp);
            about_axis(d + D_AXES + 3, u[1], tmp2);
            multiply(tmp, tmp2, joint);
            about_axis(d + D_AXES + 6, u[2], tmp);
            multiply(joint, tmp, tmp2);
            memcpy(joint, tmp2, sizeof joint);
            break;
        case ROT_VECTOR: {
            Py_ssize_t slot = plan->vector_slot[body];
            double angle = plan->norms[slot];
            double k = angle > 0.0 ? plan->vector_sines[slot] / angle : 0.5;
            joint[0] = k * u[0]; joint[1] = k * u[1]; joint[2] = k * u[2];
            joint[3] = plan->vector_cosines[slot];
            break;
        }
        default:
            memcpy(out, d + D_REST, 4 * sizeof(double));
            return;
        }
    }
    if (ints[I_FLAGS] & F_MIX)
        apply_mix(d + D_MIX, joint, out);
    else
        memcpy(out, joint, sizeof joint);
}

static inline void to_matrix(const double *q, double *m) {
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double x2 = 2.0 * x, y2 = 2.0 * y, z2 = 2.0 * z;
    m[0] = 1.0 - (y * y2 + z * z2); m[1] = x * y2 - w * z2; m[2] = x * z2 + w * y2;
    m[3] = x * y2 + w * z2; m[4] = 1.0 - (x * x2 + z * z2); m[5] = y * z2 - w * x2;
    m[6] = x * z2 - w * y2; m[7] = y * z2 + w * x2; m[8] = 1.0 - (x * x2 + y * y2);
}

static inline void rotate_add(const double *m, const double *v, double *target) {
    target[0] += m[0] * v[0] + m[1] * v[1] + m[2] * v[2];
    target[1] += m[3] * v[0] + m[4] * v[1] + m[5] * v[2];
    target[2] += m[6] * v[0] + m[7] * v[1] + m[8] * v[2];
}

/* One body of one frame: its pose into pose[0..7]. */
static inline void body_pose(const Plan *plan, Py_ssize_t body, const double *q,
                             const double *given, const double *poses, double *pose) {
    const int *ints = plan->ints + body * PLAN_INTS;
    const double *d = plan->consts + body * PLAN_DOUBLES;
    int parent = ints[I_PARENT];
    double rot[4], local[3];
    joint_rotation(plan, body, q, given, rot);
    local[0] = d[D_OFFSET]; local[1] = d[D_OFFSET + 1]; local[2] = d[D_OFFSET + 2];
    if (given == NULL) {
        const double *move = d + D_MOVE, *u = q + ints[I_MOVE_DOF];
        for (int k = 0; k < ints[I_MOVE_COUNT]; k++) {
            local[0] += move[k] * u[k];
            local[1] += move[3 + k] * u[k];
            local[2] += move[6 + k] * u[k];
        }
    }
    if (parent < 0) {
        memcpy(pose, local, sizeof local);
        memcpy(pose + 3, rot, sizeof rot);
    } else {
        const double *up = poses + 7 * parent;
        memcpy(pose, up, 3 * sizeof(double));
        rotate_add(plan->matrices + 9 * parent, local, pose);
        multiply(up + 3, rot, pose + 3);
    }
    /* canonical sign w >= 0 (w + 0.0 turns -0.0 into +0.0); no branch: the sign of w
     * is a coin toss for random angles, which a branch predictor cannot learn */
    double sign = copysign(1.0, pose[6] + 0.0);
    for (int i = 3; i < 7; i++) pose[i] *= sign;
}

/* Most bodies, coordinates or row stride a plan may have (far beyond any model). */
#define MAX_SIZE ((Py_ssize_t)1 << 24)

static void run_frames(const Plan *plan, Py_ssize_t start, Py_ssize_t stop) {
    Py_ssize_t bodies = plan->bodies;
    for (Py_ssize_t f = start; f < stop; f++) {
        const double *q = plan->q + f * plan->stride;
        double *poses = plan->out + f * bodies * 7;
        const double *given = plan->given ? plan->given + f * (bodies - 1) * 4 : NULL;
        if (given == NULL || f == start || plan->stride != 0) {
            half_sincos_all(q, plan->dofs, plan->sines, plan->cosines);
            for (Py_ssize_t j = 0; j < plan->vectors; j++) {
                const double *v = q + plan->vector_dofs[j];
                plan->norms[j] = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            }
            half_sincos_all(plan->norms, plan->vectors, plan->vector_sines, plan->vector_cosines);
        }
        for (Py_ssize_t b = 0; b < bodies; b++) {
            const int *ints = plan->ints + b * PLAN_INTS;
            double *pose = poses + 7 * b, *matrix = plan->matrices + 9 * b;
            int rooted = b == 0 && plan->root != NULL; /* the given pose is the body's own */
            if (rooted) {
                const double *r = plan->root + 7 * f;
                double norm = sqrt(r[3] * r[3] + r[4] * r[4] + r[5] * r[5] + r[6] * r[6]);
                double sign = copysign(1.0, r[6] / norm + 0.0);
                for (int i = 0; i < 3; i++) pose[i] = r[i];
                for (int i = 3; i < 7; i++) pose[i] = sign * (r[i] / norm);
            } else {
                body_pose(plan, b, q, b > 0 && given ? given + 4 * (b - 1) : NULL, poses, pose);
            }
            if (ints[I_FLAGS] & (F_MATRIX | F_CHILD)) to_matrix(pose + 3, matrix);
            if ((ints[I_FLAGS] & F_CHILD) && !rooted) rotate_add(matrix, plan->consts + b * PLAN_DOUBLES + D_CHILD, pose);
        }
    }
}

/* A buffer of at least `need` items of `size` bytes, C-contiguous; 0 with an error set. */
static int take(PyObject *obj, Py_buffer *view, int writable, Py_ssize_t size, Py_ssize_t need,
                const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return 0;
    if (view->itemsize != size || view->len / size < need) {
        PyErr_Format(PyExc_ValueError, "%s: need %zd items of %zd bytes", name, need, size);
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

/* Every parent and coordinate index of the plan inside its arrays. */
static int check_plan(const Plan *plan) {
    for (Py_ssize_t b = 0; b < plan->bodies; b++) {
        const int *i = plan->ints + b * PLAN_INTS;
        int width[ROT_KINDS] = {0, 1, 2, 3, 3};
        if (i[I_PARENT] >= b || i[I_PARENT] < -1 || i[I_ROT_KIND] < 0 || i[I_ROT_KIND] >= ROT_KINDS ||
            i[I_ROT_DOF] < 0 || (Py_ssize_t)i[I_ROT_DOF] + width[i[I_ROT_KIND]] > plan->dofs ||
            i[I_MOVE_COUNT] < 0 || i[I_MOVE_COUNT] > 3 || i[I_MOVE_DOF] < 0 ||
            (Py_ssize_t)i[I_MOVE_DOF] + i[I_MOVE_COUNT] > plan->dofs) {
            PyErr_Format(PyExc_ValueError, "bad plan row %zd", b);
            return 0;
        }
    }
    return 1;
}

static PyObject *run(PyObject *self, PyObject *args) {
    PyObject *ints_obj, *consts_obj, *q_obj, *root_obj, *given_obj, *out_obj;
    Py_ssize_t bodies, dofs, stride, start, stop;
    if (!PyArg_ParseTuple(args, "OOnOnnOOOnn:run", &ints_obj, &consts_obj, &bodies, &q_obj, &dofs,
                          &stride, &root_obj, &given_obj, &out_obj, &start, &stop))
        return NULL;
    if (bodies < 0 || dofs < 0 || stride < 0 || start < 0 || stop < start) {
        PyErr_SetString(PyExc_ValueError, "negative size or range");
        return NULL;
    }
    /* every size product below stays far from overflow (2^62 items) */
    if (bodies > MAX_SIZE || dofs > MAX_SIZE || stride > MAX_SIZE ||
        stop > ((Py_ssize_t)1 << 62) / (bodies * 7 + stride + dofs + 8)) {
        PyErr_SetString(PyExc_ValueError, "sizes too large");
        return NULL;
    }
    Py_buffer views[6];
    int taken = 0, ok = 1;
    PyObject *objs[6] = {ints_obj, consts_obj, q_obj, out_obj, root_obj, given_obj};
    Py_ssize_t sizes[6] = {sizeof(int), sizeof(double), 8, 8, 8, 8};
    Py_ssize_t needs[6] = {bodies * PLAN_INTS, bodies * PLAN_DOUBLES,
                           stop > 0 ? (stop - 1) * stride + dofs : 0,
                           stop * bodies * 7, stop * 7, stop * (bodies > 0 ? bodies - 1 : 0) * 4};
    const char *names[6] = {"ints", "consts", "q", "out", "root", "given"};
    for (; taken < 6 && ok; taken++)
        if (objs[taken] != Py_None)
            ok = take(objs[taken], &views[taken], taken == 3, sizes[taken], needs[taken], names[taken]);
    if (!ok) taken--;  /* the failed one holds nothing */
    Plan plan = {0};
    plan.bodies = bodies;
    plan.dofs = dofs;
    plan.stride = stride;
    if (ok) {
        plan.ints = views[0].buf;
        plan.consts = views[1].buf;
        plan.q = views[2].buf;
        plan.out = views[3].buf;
        plan.root = root_obj != Py_None ? views[4].buf : NULL;
        plan.given = given_obj != Py_None ? views[5].buf : NULL;
        ok = check_plan(&plan);
    }
    if (ok && bodies > 0 && stop > start) {
        /* doubles: matrices, sines, cosines, norms and their sines and cosines; then ints */
        size_t doubles = (size_t)bodies * 9 + 2 * (size_t)dofs + 3 * (size_t)bodies;
        plan.matrices = malloc(doubles * sizeof(double) + 2 * (size_t)bodies * sizeof(int));
        if (plan.matrices == NULL) {
            PyErr_NoMemory();
            ok = 0;
        } else {
            plan.sines = plan.matrices + bodies * 9;
            plan.cosines = plan.sines + dofs;
            plan.norms = plan.cosines + dofs;
            plan.vector_sines = plan.norms + bodies;
            plan.vector_cosines = plan.vector_sines + bodies;
            plan.vector_dofs = (int *)(plan.matrices + doubles);
            plan.vector_slot = plan.vector_dofs + bodies;
            plan.vectors = 0;
            for (Py_ssize_t b = 0; b < bodies; b++) {
                const int *row = plan.ints + b * PLAN_INTS;
                plan.vector_slot[b] = (int)plan.vectors;
                if (row[I_ROT_KIND] == ROT_VECTOR) plan.vector_dofs[plan.vectors++] = row[I_ROT_DOF];
            }
            Py_BEGIN_ALLOW_THREADS
            run_frames(&plan, start, stop);
            Py_END_ALLOW_THREADS
            free(plan.matrices);
        }
    }
    for (int i = 0; i < taken; i++)
        if (objs[i] != Py_None) PyBuffer_Release(&views[i]);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS,
     "run(ints, consts, bodies, q, dofs, stride, root, given, out, start, stop): poses of frames "
     "[start, stop) into out (see _compiled.py)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_fk_kernel", "Compiled forward kinematics (see _compiled.py).", -1,
    methods};

PyMODINIT_FUNC PyInit__fk_kernel(void) {
    PyObject *module = PyModule_Create(&module_definition);
    if (module == NULL) return NULL;
    if (PyModule_AddIntConstant(module, "INT_WIDTH", PLAN_INTS) < 0 ||
        PyModule_AddIntConstant(module, "DOUBLE_WIDTH", PLAN_DOUBLES) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
