/* The per-frame checks of motionkit.quality, compiled.
 *
 * _compiled.py lays a model's shapes out as a table (per shape a row of ints and a row of
 * doubles, the enums below) and calls:
 *
 *   frames()  one pass over the body poses (frames, bodies, 7): per frame the lowest
 *             shape point above the ground (a flat plane, or a heightfield's nearest
 *             cell, PARC's rule), the lowest body origin, per frame pair the body speed
 *             and the joint angular speed (each body's rotation in its parent), and
 *             per (frame, body) ProtoMotions' horizon-3 contact label;
 *   gaps()    self-penetration: per checked frame the least gap over the shape pairs
 *             (bounding balls first, exact work only on near pairs), where it is, and the
 *             least gap that is a number.
 *
 * The rules are those of check.py and shapes.py (the NumPy statement, which the tests hold
 * this one to), in the same order of operations where NumPy's is known. A value that is
 * not a number propagates as NumPy's minimum and maximum propagate it, so a frame that is
 * not a number fails every check as on the NumPy path. Buffers come through the buffer
 * protocol, are checked against the sizes given before the GIL is released, and the only
 * allocation is scratch of a few doubles per body and shape, once per call.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* On x86-64 Linux with GCC, the passes are also built for AVX2 (rounding to an integer in
 * one instruction), taken at load time where the CPU has it. AVX2 alone, not x86-64-v3:
 * with FMA in the target GCC's vectoriser fuses multiply-adds (vfmaddsub) even under
 * -ffp-contract=off, and the results then depended on the CPU (4e-14 on joint speeds). */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

/* A shape's int row. */
enum { S_BODY, S_KIND, SHAPE_INTS = 2 };
/* What a shape is: a ball around a point, around a segment (capsule), a cylinder (taken as
 * its capsule for gaps), a box, or a body origin (no shape: its own z, its own ground). */
enum { K_SPHERE, K_CAPSULE, K_CYLINDER, K_BOX, K_ORIGIN, KINDS };
/* A shape's double row: its rotation in the body (row-major), its centre in the body, the
 * radius, half the height (capsules, cylinders), half the sizes (boxes), and the radius of
 * a ball round its centre that holds it. */
enum { S_TURN = 0, S_AT = 9, S_RADIUS = 12, S_HALF = 13, S_SIZE = 14, S_REACH = 17,
       SHAPE_DOUBLES = 18 };

/* Most bodies, shapes or pairs a model may have (far beyond any). */
#define MAX_SIZE ((Py_ssize_t)1 << 24)
/* NumPy's np.minimum and np.maximum: a NaN on either side wins. */
static inline double nmin(double a, double b) { return (a < b || a != a) ? a : b; }
static inline double nmax(double a, double b) { return (a > b || a != a) ? a : b; }

/* Golden-section search, as shapes.py. */
#define GOLDEN 0.6180339887498949
#define SEARCH_STEPS 28
/* Squared lengths: a segment shorter than 1e-12 m is a point. */
#define TINY 1e-24

typedef struct {
    double height;      /* the plane, or what the heightfield's heights are raised by */
    const double *hf;   /* (nx, ny) or NULL: flat */
    Py_ssize_t nx, ny;
    double ox, oy, dx, dy;
} Ground;

/* The ground under world (x, y): the nearest cell, clamped to the grid (round half to
 * even, as np.round); NaN under a point whose x or y is not a finite number. */
static inline double under(const Ground *g, double x, double y) {
    if (g->hf == NULL) return g->height;
    if (!isfinite(x) || !isfinite(y)) return NAN;
    double u = nearbyint((x - g->ox) / g->dx), v = nearbyint((y - g->oy) / g->dy);
    u = u < 0 ? 0 : (u > (double)(g->nx - 1) ? (double)(g->nx - 1) : u);
    v = v < 0 ? 0 : (v > (double)(g->ny - 1) ? (double)(g->ny - 1) : v);
    return g->height + g->hf[(Py_ssize_t)u * g->ny + (Py_ssize_t)v];
}

/* The rotation rows of quaternion q (x, y, z, w) as check._rows makes them (scaled by
 * 2 / |q|^2): the z row only unless `all`. */
static inline void rows(const double *q, int all, double *m) {
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double norm = x * x + y * y + z * z + w * w;
    double s = 2.0 / (norm > 0 ? norm : 1.0);
    m[6] = s * (x * z - w * y);
    m[7] = s * (y * z + w * x);
    m[8] = 1.0 - s * (x * x + y * y);
    if (!all) return;
    m[0] = 1.0 - s * (y * y + z * z);
    m[1] = s * (x * y - w * z);
    m[2] = s * (x * z + w * y);
    m[3] = s * (x * y + w * z);
    m[4] = 1.0 - s * (x * x + z * z);
    m[5] = s * (y * z - w * x);
}

/* Hamilton product a * b, as spatial.quaternion.multiply. */
static inline void multiply(const double *a, const double *b, double *out) {
    double ax = a[0], ay = a[1], az = a[2], aw = a[3];
    double bx = b[0], by = b[1], bz = b[2], bw = b[3];
    out[0] = aw * bx + ax * bw + ay * bz - az * by;
    out[1] = aw * by - ax * bz + ay * bw + az * bx;
    out[2] = aw * bz + ax * by - ay * bx + az * bw;
    out[3] = aw * bw - ax * bx - ay * by - az * bz;
}

static inline void conjugate(const double *q, double *out) {
    out[0] = -q[0]; out[1] = -q[1]; out[2] = -q[2]; out[3] = q[3];
}

/* The lowest point of shape `s` on a body at `at` turned by rows `m` (the z row, or all
 * three where the ground is a heightfield), above the ground under the shape's centre. */
static inline double shape_height(const int *si, const double *sd, const double *at,
                                  const double *m, const Ground *g) {
    if (si[S_KIND] == K_ORIGIN) return at[2] - under(g, at[0], at[1]);
    const double *t = sd + S_AT, *r = sd + S_TURN;
    double centre = at[2] + (m[6] * t[0] + m[7] * t[1] + m[8] * t[2]);
    double turn[3];
    for (int k = 0; k < 3; k++) turn[k] = m[6] * r[k] + m[7] * r[3 + k] + m[8] * r[6 + k];
    double low;
    switch (si[S_KIND]) {
    case K_SPHERE:
        low = centre - sd[S_RADIUS];
        break;
    case K_BOX:
        low = centre - (fabs(turn[0]) * sd[S_SIZE] + fabs(turn[1]) * sd[S_SIZE + 1] +
                        fabs(turn[2]) * sd[S_SIZE + 2]);
        break;
    case K_CAPSULE:
        low = centre - fabs(turn[2]) * sd[S_HALF] - sd[S_RADIUS];
        break;
    default: { /* cylinder: its rim */
        double axis = fabs(turn[2]);
        low = centre - axis * sd[S_HALF] - sd[S_RADIUS] * sqrt(nmax(1.0 - axis * axis, 0.0));
    }
    }
    if (g->hf == NULL) return low - g->height;
    double x = at[0] + (m[0] * t[0] + m[1] * t[1] + m[2] * t[2]);
    double y = at[1] + (m[3] * t[0] + m[4] * t[1] + m[5] * t[2]);
    return low - under(g, x, y);
}

/* Exponential map of a rotation (w made >= 0), as quaternion.to_exp_map, divided by dt:
 * into v. */
static inline void rate(const double *q, double dt, double *v) {
    double x = q[0], y = q[1], z = q[2], w = q[3];
    if (w < 0) { x = -x; y = -y; z = -z; w = -w; }
    double sin_half = sqrt(x * x + y * y + z * z);
    double angle = 2.0 * atan2(sin_half, w);
    double scale = sin_half > 1e-12 ? angle / sin_half : 2.0 / nmax(w, 1e-12);
    v[0] = x * scale / dt; v[1] = y * scale / dt; v[2] = z * scale / dt;
}

typedef struct {
    const double *poses;  /* (frames, bodies, 7) */
    Py_ssize_t frames, bodies, shapes;
    const int *parents;   /* (bodies) */
    const int *si;        /* (shapes, SHAPE_INTS) */
    const double *sd;     /* (shapes, SHAPE_DOUBLES) */
    Ground ground;
    const double *steps;  /* (frames - 1) seconds */
    int largest;          /* speeds as the largest |component| (ProtoMotions), else norms */
    double fps, contact_speed, contact_height;
    double squares[3];    /* (fps / h)^2 for h = 1, 2, 3 */
    double slow_low, slow_high; /* least squared speeds clearly below, above the contact
                                   speed squared (between them, sqrt decides) */
    double *lowest, *origin_low, *body, *joint; /* (frames), (frames), (frames - 1) x 2 */
    unsigned char *contacts;                    /* (frames, bodies) */
    double *m;            /* (bodies, 9) scratch */
    double *local;        /* (2, bodies, 4) scratch: rotations in the parent, two frames */
} Pass;

static inline unsigned char labelled(const Pass *p, double least, const double *at) {
    if (!(least < p->slow_high)) return 0; /* NaN too */
    if (!(least < p->slow_low) && !(sqrt(least) < p->contact_speed)) return 0;
    return at[2] - under(&p->ground, at[0], at[1]) < p->contact_height;
}

static inline double moved(const double *a, const double *c) {
    double dx = c[0] - a[0], dy = c[1] - a[1], dz = c[2] - a[2];
    return dx * dx + dy * dy + dz * dz;
}

/* ProtoMotions' contact labels of every body on frame f: the least norm of the forward
 * differences over 1..3 frames (the last h frames take the last one) below the contact
 * speed, and the origin below the contact height above the ground. The norm is compared
 * squared, and through its square root (as NumPy) only within a hair of the speed. */
static inline void contacts(const Pass *p, Py_ssize_t f) {
    Py_ssize_t frames = p->frames, bodies = p->bodies, row = bodies * 7;
    const double *now = p->poses + f * row;
    unsigned char *out = p->contacts + f * bodies;
    if (f + 3 < frames) { /* every horizon ahead of f */
        for (Py_ssize_t b = 0; b < bodies; b++) {
            const double *a = now + 7 * b;
            double least = moved(a, a + row) * p->squares[0];
            least = nmin(least, moved(a, a + 2 * row) * p->squares[1]);
            least = nmin(least, moved(a, a + 3 * row) * p->squares[2]);
            out[b] = labelled(p, least, a);
        }
        return;
    }
    for (Py_ssize_t b = 0; b < bodies; b++) {
        double least = INFINITY;
        for (Py_ssize_t h = 1; h <= 3; h++) {
            if (frames <= h) break;
            Py_ssize_t g = f < frames - h ? f : frames - h - 1;
            const double *a = p->poses + (g * bodies + b) * 7;
            least = nmin(least, moved(a, a + h * row) * p->squares[h - 1]);
        }
        out[b] = labelled(p, least, now + 7 * b);
    }
}

/* The angular speed of each joint between two frames (its rotation in its parent, `before`
 * and `local`), the fastest: its norm, or ProtoMotions' largest |component|. The norm of
 * exp_map(turn) / dt is the turn's angle / dt, which grows with |xyz| / |w| (w >= 0): the
 * fastest joint is found on that ratio (squared, crosswise: no root, no atan2), then its
 * rate is made as quaternion.to_exp_map makes it. */
static inline double turning(const Pass *p, const double *before, const double *local, double dt) {
    double best_s = 0.0, best_w = 1.0, largest = 0.0, turn[4], best[4] = {0.0, 0.0, 0.0, 1.0};
    int broken = 0, joints = 0;
    for (Py_ssize_t b = 0; b < p->bodies; b++) {
        if (p->parents[b] < 0) continue;
        joints++;
        double inverse[4];
        conjugate(before + 4 * b, inverse);
        multiply(inverse, local + 4 * b, turn);
        if (p->largest) {
            /* its largest |component| is at most 2 max|xyz| min(1/w, pi/2 / |xyz|) / dt
             * (atan2(s, w) <= min(s/w, pi/2)): a joint that cannot be the fastest is
             * passed over without its atan2 */
            double ax = fabs(turn[0]), ay = fabs(turn[1]), az = fabs(turn[2]);
            double top = ax > ay ? ax : ay;
            top = top > az ? top : az;
            double bound = 2.0 * top * fmin(1.0 / fabs(turn[3]),
                                            1.5707963267948966 / sqrt(ax * ax + ay * ay + az * az)) / dt;
            if (dt > 0 && bound * (1.0 + 1e-9) < largest) continue; /* NaN: never passed over */
            double v[3];
            rate(turn, dt, v);
            largest = nmax(largest, nmax(nmax(fabs(v[0]), fabs(v[1])), fabs(v[2])));
            continue;
        }
        double s = turn[0] * turn[0] + turn[1] * turn[1] + turn[2] * turn[2], w = turn[3] * turn[3];
        if (s != s || w != w) broken = 1;
        if (s * best_w > best_s * w) {
            best_s = s; best_w = w;
            memcpy(best, turn, sizeof best);
        }
    }
    if (p->largest || !joints) return largest; /* no joint: 0, as NumPy's empty rates */
    if (broken) return NAN;
    double v[3];
    rate(best, dt, v);
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

CLONES
static void run_pass(Pass *p) {
    Py_ssize_t bodies = p->bodies;
    int all = p->ground.hf != NULL;
    for (Py_ssize_t f = 0; f < p->frames; f++) {
        const double *now = p->poses + f * bodies * 7;
        if (p->lowest) {
            for (Py_ssize_t b = 0; b < bodies; b++) rows(now + 7 * b + 3, all, p->m + 9 * b);
            double low = INFINITY;
            for (Py_ssize_t s = 0; s < p->shapes; s++) {
                const int *si = p->si + s * SHAPE_INTS;
                int body = si[S_BODY];
                low = nmin(low, shape_height(si, p->sd + s * SHAPE_DOUBLES, now + 7 * body,
                                             p->m + 9 * body, &p->ground));
            }
            p->lowest[f] = low;
        }
        if (p->origin_low) {
            double low = INFINITY;
            for (Py_ssize_t b = 0; b < bodies; b++) low = nmin(low, now[7 * b + 2]);
            p->origin_low[f] = low;
        }
        double *local = p->local + (f & 1) * bodies * 4, *before = p->local + ((f + 1) & 1) * bodies * 4;
        if (p->joint) {
            for (Py_ssize_t b = 0; b < bodies; b++) {
                if (p->parents[b] < 0) continue;
                double inverse[4];
                conjugate(now + 7 * p->parents[b] + 3, inverse);
                multiply(inverse, now + 7 * b + 3, local + 4 * b);
            }
        }
        if (f > 0 && (p->body || p->joint)) {
            const double *last = now - bodies * 7;
            double dt = p->steps[f - 1], inv = 1.0 / dt, fastest = 0.0;
            for (Py_ssize_t b = 0; b < bodies && p->body; b++) {
                double v[3];
                for (int i = 0; i < 3; i++) v[i] = (now[7 * b + i] - last[7 * b + i]) * inv;
                fastest = nmax(fastest, p->largest ? nmax(nmax(fabs(v[0]), fabs(v[1])), fabs(v[2]))
                                                   : v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            }
            if (p->body) p->body[f - 1] = p->largest ? fastest : sqrt(fastest);
            if (p->joint) p->joint[f - 1] = turning(p, before, local, dt);
        }
        if (p->contacts) contacts(p, f);
    }
}

/* ---- foot skating ---- */

typedef struct {
    const double *poses;
    Py_ssize_t frames, bodies, foot, points;
    const double *local;  /* (points, 3) sole points in the foot's frame */
    const double *radii;  /* (points) */
    Ground ground;
    double height;        /* planted: every sole point within this of the ground */
    unsigned char *planted, *broken; /* (frames) */
    double *step;         /* (frames - 1): how far the sole's middle moved in x, y */
} Soles;

/* Per frame whether the foot is planted (its highest sole point, less its radius, above
 * the ground under it, within the height: NaN is not), whether a sole point is not a
 * finite number, and between frames how far the mean of its sole points moved in x, y:
 * check._foot_skating's NumPy statement. */
CLONES
static void run_soles(Soles *s) {
    double last[2] = {0.0, 0.0};
    for (Py_ssize_t f = 0; f < s->frames; f++) {
        const double *pose = s->poses + (f * s->bodies + s->foot) * 7;
        double m[9];
        rows(pose + 3, 1, m);
        double top = -INFINITY, sum[2] = {0.0, 0.0};
        int finite = 1;
        for (Py_ssize_t k = 0; k < s->points; k++) {
            const double *l = s->local + 3 * k;
            double w[3];
            for (int i = 0; i < 3; i++)
                w[i] = (m[3 * i] * l[0] + m[3 * i + 1] * l[1] + m[3 * i + 2] * l[2]) + pose[i];
            finite &= isfinite(w[0]) && isfinite(w[1]) && isfinite(w[2]);
            top = nmax(top, w[2] - s->radii[k] - under(&s->ground, w[0], w[1]));
            sum[0] += w[0];
            sum[1] += w[1];
        }
        s->planted[f] = top < s->height;
        s->broken[f] = !finite;
        double middle[2] = {sum[0] / (double)s->points, sum[1] / (double)s->points};
        if (f > 0) {
            double dx = middle[0] - last[0], dy = middle[1] - last[1];
            s->step[f - 1] = sqrt(dx * dx + dy * dy);
        }
        last[0] = middle[0];
        last[1] = middle[1];
    }
}

/* ---- self-penetration ---- */

typedef struct {
    double r[9];  /* rotation, row-major; its columns are the shape's axes */
    double c[3];  /* centre */
    double p[3], q[3]; /* the swept segment's ends (a box: its centre twice) */
} World;

static inline double dot3(const double *u, const double *v) {
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
}

/* shapes.segment_distance: the clamped closest-point rule. */
static double segment_distance(const double *p1, const double *q1, const double *p2,
                               const double *q2) {
    double d1[3], d2[3], r[3];
    for (int i = 0; i < 3; i++) { d1[i] = q1[i] - p1[i]; d2[i] = q2[i] - p2[i]; r[i] = p1[i] - p2[i]; }
    double a = dot3(d1, d1), e = dot3(d2, d2), f = dot3(d2, r), c = dot3(d1, r), b = dot3(d1, d2);
    int point_a = a <= TINY, point_e = e <= TINY;
    double safe_a = point_a ? 1.0 : a, safe_e = point_e ? 1.0 : e;
#define CLIP01(x) ((x) < 0.0 ? 0.0 : ((x) > 1.0 ? 1.0 : (x)))
    double denom = a * e - b * b;
    double s0 = denom > TINY * nmax(a * e, TINY) ? CLIP01((b * f - c * e) / (denom > 0 ? denom : 1.0))
                                                  : 0.0;
    double t0 = (b * s0 + f) / safe_e;
    double s_general = t0 < 0 ? CLIP01(-c / safe_a) : (t0 > 1 ? CLIP01((b - c) / safe_a) : s0);
    double t_general = CLIP01(t0);
    double s = point_a ? 0.0 : (point_e ? CLIP01(-c / safe_a) : s_general);
    double t = point_e ? 0.0 : (point_a ? CLIP01(f / safe_e) : t_general);
    double gap[3];
    for (int i = 0; i < 3; i++) gap[i] = (p1[i] + d1[i] * s) - (p2[i] + d2[i] * t);
    return sqrt(dot3(gap, gap));
}

/* shapes._box_distance: signed distance of a point to a box. */
static inline double box_distance(const double *point, const World *box, const double *half) {
    double d[3], excess[3];
    for (int i = 0; i < 3; i++) d[i] = point[i] - box->c[i];
    double outside = 0.0, largest = -INFINITY;
    for (int i = 0; i < 3; i++) {
        double local = box->r[i] * d[0] + box->r[3 + i] * d[1] + box->r[6 + i] * d[2];
        excess[i] = fabs(local) - half[i];
        largest = i == 0 ? excess[i] : nmax(largest, excess[i]);
    }
    for (int i = 0; i < 3; i++) {
        double e = excess[i] > 0.0 || excess[i] != excess[i] ? excess[i] : 0.0;
        outside += e * e;
    }
    return sqrt(outside) + nmin(largest, 0.0);
}

static inline double segment_box_at(const double *p, const double *d, double t, const World *box,
                                    const double *half) {
    double point[3] = {p[0] + d[0] * t, p[1] + d[1] * t, p[2] + d[2] * t};
    return box_distance(point, box, half);
}

/* shapes._segment_box: the least signed distance from a segment to a box. */
static double segment_box(const double *p, const double *q, const World *box, const double *half) {
    double d[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
    double low = 0.0, high = 1.0;
    double c = high - GOLDEN * (high - low), e = low + GOLDEN * (high - low);
    double fc = segment_box_at(p, d, c, box, half), fe = segment_box_at(p, d, e, box, half);
    for (int step = 0; step < SEARCH_STEPS; step++) {
        int left = fc < fe;
        double new_low = left ? low : c, new_high = left ? e : high;
        low = new_low; high = new_high;
        double span = GOLDEN * (high - low);
        double new_c = left ? high - span : e, new_e = left ? c : low + span;
        c = new_c; e = new_e;
        double fresh = segment_box_at(p, d, left ? c : e, box, half);
        double new_fc = left ? fresh : fe, new_fe = left ? fc : fresh;
        fc = new_fc; fe = new_fe;
    }
    double ends = nmin(segment_box_at(p, d, 0.0, box, half), segment_box_at(p, d, 1.0, box, half));
    return nmin(nmin(fc, fe), ends);
}

/* shapes._box_box: the separating-axis gap over the 15 axes. */
static double box_box(const World *a, const double *half_a, const World *b, const double *half_b) {
    double centre[3] = {b->c[0] - a->c[0], b->c[1] - a->c[1], b->c[2] - a->c[2]};
    double best = -INFINITY;
    for (int k = 0; k < 15; k++) {
        double axis[3];
        if (k < 3) {
            for (int i = 0; i < 3; i++) axis[i] = a->r[3 * i + k];
        } else if (k < 6) {
            for (int i = 0; i < 3; i++) axis[i] = b->r[3 * i + k - 3];
        } else {
            int i = (k - 6) / 3, j = (k - 6) % 3;
            double u[3] = {a->r[i], a->r[3 + i], a->r[6 + i]}, v[3] = {b->r[j], b->r[3 + j], b->r[6 + j]};
            axis[0] = u[1] * v[2] - u[2] * v[1];
            axis[1] = u[2] * v[0] - u[0] * v[2];
            axis[2] = u[0] * v[1] - u[1] * v[0];
        }
        double size = sqrt(dot3(axis, axis));
        if (!(size > 1e-9)) continue;
        double unit[3] = {axis[0] / size, axis[1] / size, axis[2] / size};
        double reach_a[3], reach_b[3];
        for (int i = 0; i < 3; i++) {
            reach_a[i] = fabs(a->r[i] * unit[0] + a->r[3 + i] * unit[1] + a->r[6 + i] * unit[2]);
            reach_b[i] = fabs(b->r[i] * unit[0] + b->r[3 + i] * unit[1] + b->r[6 + i] * unit[2]);
        }
        double gap = fabs(dot3(centre, unit)) - dot3(reach_a, half_a) - dot3(reach_b, half_b);
        best = nmax(best, gap);
    }
    return best;
}

/* The world pose of every shape on frame `now` (poses_to_matrices, then the shape's pose
 * in its body). */
static void place(const double *now, const int *si, const double *sd, Py_ssize_t shapes,
                  World *out) {
    for (Py_ssize_t s = 0; s < shapes; s++) {
        const double *pose = now + 7 * si[s * SHAPE_INTS + S_BODY], *d = sd + s * SHAPE_DOUBLES;
        double x = pose[3], y = pose[4], z = pose[5], w = pose[6];
        double norm = sqrt(x * x + y * y + z * z + w * w);
        x /= norm; y /= norm; z /= norm; w /= norm;
        double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                       2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                       2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)};
        World *o = out + s;
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++)
                o->r[3 * i + j] = m[3 * i] * d[S_TURN + j] + m[3 * i + 1] * d[S_TURN + 3 + j] +
                                  m[3 * i + 2] * d[S_TURN + 6 + j];
            o->c[i] = m[3 * i] * d[S_AT] + m[3 * i + 1] * d[S_AT + 1] + m[3 * i + 2] * d[S_AT + 2] +
                      pose[i];
        }
        double half = si[s * SHAPE_INTS + S_KIND] == K_BOX ? 0.0 : d[S_HALF];
        for (int i = 0; i < 3; i++) {
            double reach = o->r[3 * i + 2] * half;
            o->p[i] = o->c[i] - reach;
            o->q[i] = o->c[i] + reach;
        }
    }
}

typedef struct {
    const double *poses;
    Py_ssize_t bodies, shapes, pairs, first, stride, count;
    const int *si;
    const double *sd;
    const int *pair;       /* (pairs, 2) */
    double near;
    double *least, *closest; /* (count) */
    int64_t *where;          /* (count) */
    World *world;            /* (shapes) scratch */
} Gaps;

static double pair_gap(const Gaps *g, Py_ssize_t k) {
    int i = g->pair[2 * k], j = g->pair[2 * k + 1];
    const World *a = g->world + i, *b = g->world + j;
    const double *da = g->sd + i * SHAPE_DOUBLES, *db = g->sd + j * SHAPE_DOUBLES;
    int box_a = g->si[i * SHAPE_INTS + S_KIND] == K_BOX, box_b = g->si[j * SHAPE_INTS + S_KIND] == K_BOX;
    /* the bounding balls, in the order shapes.pair_gaps takes them (box first if mixed) */
    const World *first = (box_b && !box_a) ? b : a, *second = (box_b && !box_a) ? a : b;
    const double *dfirst = (box_b && !box_a) ? db : da, *dsecond = (box_b && !box_a) ? da : db;
    double apart[3] = {first->c[0] - second->c[0], first->c[1] - second->c[1], first->c[2] - second->c[2]};
    double bound = sqrt(dot3(apart, apart)) - (dfirst[S_REACH] + dsecond[S_REACH]);
    if (!(bound < g->near)) return bound;
    if (!box_a && !box_b)
        return segment_distance(a->p, a->q, b->p, b->q) - da[S_RADIUS] - db[S_RADIUS];
    if (box_a && box_b) return box_box(a, da + S_SIZE, b, db + S_SIZE);
    return segment_box(second->p, second->q, first, dfirst + S_SIZE) - dsecond[S_RADIUS];
}

CLONES
static void run_gaps(Gaps *g) {
    for (Py_ssize_t n = 0; n < g->count; n++) {
        Py_ssize_t f = g->first + n * g->stride;
        place(g->poses + f * g->bodies * 7, g->si, g->sd, g->shapes, g->world);
        double least = INFINITY, closest = INFINITY;
        int64_t where = 0;
        int broken = 0;
        for (Py_ssize_t k = 0; k < g->pairs; k++) {
            double gap = pair_gap(g, k);
            if (gap != gap) {
                if (!broken) { broken = 1; least = gap; where = k; }
                continue;
            }
            if (isfinite(gap) && gap < closest) closest = gap;
            if (!broken && gap < least) { least = gap; where = k; }
        }
        g->least[n] = least;
        g->where[n] = where;
        g->closest[n] = closest;
    }
}

/* ---- the Python side ---- */

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

/* Every shape's body inside the model, every kind known. */
static int check_shapes(const int *si, Py_ssize_t shapes, Py_ssize_t bodies) {
    for (Py_ssize_t s = 0; s < shapes; s++)
        if (si[s * SHAPE_INTS + S_BODY] < 0 || si[s * SHAPE_INTS + S_BODY] >= bodies ||
            si[s * SHAPE_INTS + S_KIND] < 0 || si[s * SHAPE_INTS + S_KIND] >= KINDS) {
            PyErr_Format(PyExc_ValueError, "bad shape row %zd", s);
            return 0;
        }
    return 1;
}

#define VIEWS 12

static PyObject *frames(PyObject *self, PyObject *args) {
    PyObject *poses_o, *parents_o, *si_o, *sd_o, *hf_o, *steps_o, *lowest_o, *origin_o, *body_o,
        *joint_o, *contacts_o;
    Pass p = {0};
    int largest;
    if (!PyArg_ParseTuple(args, "OnnOOOndOnnddddOpdddOOOOO:frames", &poses_o, &p.frames, &p.bodies,
                          &parents_o, &si_o, &sd_o, &p.shapes, &p.ground.height, &hf_o,
                          &p.ground.nx, &p.ground.ny, &p.ground.ox, &p.ground.oy, &p.ground.dx,
                          &p.ground.dy, &steps_o, &largest, &p.fps, &p.contact_speed,
                          &p.contact_height, &lowest_o, &origin_o, &body_o, &joint_o, &contacts_o))
        return NULL;
    p.largest = largest;
    Py_ssize_t frames = p.frames, bodies = p.bodies;
    if (frames < 0 || bodies < 0 || p.shapes < 0 || bodies > MAX_SIZE || p.shapes > MAX_SIZE ||
        frames > ((Py_ssize_t)1 << 62) / (7 * bodies + 8)) {
        PyErr_SetString(PyExc_ValueError, "bad sizes");
        return NULL;
    }
    if (hf_o != Py_None && (p.ground.nx < 1 || p.ground.ny < 1 || p.ground.nx > MAX_SIZE ||
                            p.ground.ny > MAX_SIZE || !(p.ground.dx > 0) || !(p.ground.dy > 0))) {
        PyErr_SetString(PyExc_ValueError, "bad heightfield");
        return NULL;
    }
    Py_ssize_t pairs = frames > 0 ? frames - 1 : 0;
    PyObject *objs[VIEWS] = {poses_o, parents_o, si_o, sd_o, hf_o, steps_o, lowest_o, origin_o,
                             body_o, joint_o, contacts_o, NULL};
    Py_ssize_t sizes[VIEWS] = {8, sizeof(int), sizeof(int), 8, 8, 8, 8, 8, 8, 8, 1, 0};
    Py_ssize_t needs[VIEWS] = {frames * bodies * 7, bodies, p.shapes * SHAPE_INTS,
                               p.shapes * SHAPE_DOUBLES, p.ground.nx * p.ground.ny, pairs,
                               frames, frames, pairs, pairs, frames * bodies, 0};
    const char *names[VIEWS] = {"poses", "parents", "shape ints", "shape doubles", "heightfield",
                                "steps", "lowest", "origin_low", "body", "joint", "contacts", ""};
    Py_buffer views[VIEWS];
    int taken = 0, ok = 1;
    for (; taken < VIEWS - 1 && ok; taken++)
        if (objs[taken] != Py_None)
            ok = take(objs[taken], &views[taken], taken >= 6, sizes[taken], needs[taken], names[taken]);
    if (!ok) taken--;
#define BUF(i, type) (objs[i] != Py_None ? (type)views[i].buf : NULL)
    if (ok) {
        p.poses = BUF(0, const double *);
        p.parents = BUF(1, const int *);
        p.si = BUF(2, const int *);
        p.sd = BUF(3, const double *);
        p.ground.hf = BUF(4, const double *);
        p.steps = BUF(5, const double *);
        p.lowest = BUF(6, double *);
        p.origin_low = BUF(7, double *);
        p.body = BUF(8, double *);
        p.joint = BUF(9, double *);
        p.contacts = BUF(10, unsigned char *);
        if (!p.poses || !p.parents || !p.si || !p.sd || (pairs && !p.steps && (p.body || p.joint))) {
            PyErr_SetString(PyExc_ValueError, "poses, parents, shapes and steps are needed");
            ok = 0;
        }
    }
    if (ok) ok = check_shapes(p.si, p.shapes, bodies);
    for (Py_ssize_t b = 0; ok && b < bodies; b++)
        if (p.parents[b] >= b || p.parents[b] < -1) {
            PyErr_Format(PyExc_ValueError, "bad parent of body %zd", b);
            ok = 0;
        }
    for (int h = 1; h <= 3; h++) {
        double k = p.fps / (double)h;
        p.squares[h - 1] = k * k;
    }
    /* sqrt is correctly rounded: a square this far from the speed's is on its side */
    p.slow_low = p.contact_speed * p.contact_speed * (1.0 - 1e-12);
    p.slow_high = p.contact_speed * p.contact_speed * (1.0 + 1e-12);
    if (ok && frames > 0 && bodies > 0) {
        p.m = malloc((size_t)bodies * (9 + 8) * sizeof(double));
        if (p.m == NULL) {
            PyErr_NoMemory();
            ok = 0;
        } else {
            p.local = p.m + bodies * 9;
            Py_BEGIN_ALLOW_THREADS
            run_pass(&p);
            Py_END_ALLOW_THREADS
            free(p.m);
        }
    }
    for (int i = 0; i < taken; i++)
        if (objs[i] != Py_None) PyBuffer_Release(&views[i]);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

static PyObject *gaps(PyObject *self, PyObject *args) {
    PyObject *poses_o, *si_o, *sd_o, *pair_o, *least_o, *where_o, *closest_o;
    Py_ssize_t frames;
    Gaps g = {0};
    if (!PyArg_ParseTuple(args, "OnnOOnOnnnndOOO:gaps", &poses_o, &frames, &g.bodies, &si_o, &sd_o,
                          &g.shapes, &pair_o, &g.pairs, &g.first, &g.stride, &g.count, &g.near,
                          &least_o, &where_o, &closest_o))
        return NULL;
    if (frames < 0 || g.bodies < 0 || g.shapes < 0 || g.pairs < 0 || g.first < 0 || g.stride < 1 ||
        g.count < 0 || g.bodies > MAX_SIZE || g.shapes > MAX_SIZE || g.pairs > MAX_SIZE ||
        frames > ((Py_ssize_t)1 << 62) / (7 * g.bodies + 8) ||
        (g.count > 0 && (g.first >= frames || (g.count - 1) > (frames - 1 - g.first) / g.stride))) {
        PyErr_SetString(PyExc_ValueError, "bad sizes or frames");
        return NULL;
    }
    PyObject *objs[7] = {poses_o, si_o, sd_o, pair_o, least_o, where_o, closest_o};
    Py_ssize_t sizes[7] = {8, sizeof(int), 8, sizeof(int), 8, 8, 8};
    Py_ssize_t needs[7] = {frames * g.bodies * 7, g.shapes * SHAPE_INTS, g.shapes * SHAPE_DOUBLES,
                           g.pairs * 2, g.count, g.count, g.count};
    const char *names[7] = {"poses", "shape ints", "shape doubles", "pairs", "least", "where",
                            "closest"};
    Py_buffer views[7];
    int taken = 0, ok = 1;
    for (; taken < 7 && ok; taken++) ok = take(objs[taken], &views[taken], taken >= 4, sizes[taken],
                                               needs[taken], names[taken]);
    if (!ok) taken--;
    if (ok) {
        g.poses = views[0].buf;
        g.si = views[1].buf;
        g.sd = views[2].buf;
        g.pair = views[3].buf;
        g.least = views[4].buf;
        g.where = views[5].buf;
        g.closest = views[6].buf;
        ok = check_shapes(g.si, g.shapes, g.bodies);
    }
    for (Py_ssize_t k = 0; ok && k < 2 * g.pairs; k++)
        if (g.pair[k] < 0 || g.pair[k] >= g.shapes) {
            PyErr_Format(PyExc_ValueError, "bad pair %zd", k / 2);
            ok = 0;
        }
    if (ok && g.count > 0 && g.shapes > 0) {
        g.world = malloc((size_t)g.shapes * sizeof(World));
        if (g.world == NULL) {
            PyErr_NoMemory();
            ok = 0;
        } else {
            Py_BEGIN_ALLOW_THREADS
            run_gaps(&g);
            Py_END_ALLOW_THREADS
            free(g.world);
        }
    } else if (ok) {
        for (Py_ssize_t n = 0; n < g.count; n++) {
            g.least[n] = INFINITY;
            g.where[n] = 0;
            g.closest[n] = INFINITY;
        }
    }
    for (int i = 0; i < taken; i++) PyBuffer_Release(&views[i]);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

static PyObject *soles(PyObject *self, PyObject *args) {
    PyObject *poses_o, *local_o, *radii_o, *hf_o, *planted_o, *step_o, *broken_o;
    Soles s = {0};
    if (!PyArg_ParseTuple(args, "OnnnOOndOnndddddOOO:soles", &poses_o, &s.frames, &s.bodies,
                          &s.foot, &local_o, &radii_o, &s.points, &s.ground.height, &hf_o,
                          &s.ground.nx, &s.ground.ny, &s.ground.ox, &s.ground.oy, &s.ground.dx,
                          &s.ground.dy, &s.height, &planted_o, &step_o, &broken_o))
        return NULL;
    if (poses_o == Py_None || local_o == Py_None || radii_o == Py_None || planted_o == Py_None ||
        step_o == Py_None || broken_o == Py_None) {
        PyErr_SetString(PyExc_ValueError, "every buffer but the heightfield is needed");
        return NULL;
    }
    if (s.frames < 0 || s.bodies < 1 || s.foot < 0 || s.foot >= s.bodies || s.points < 1 ||
        s.bodies > MAX_SIZE || s.points > MAX_SIZE ||
        s.frames > ((Py_ssize_t)1 << 62) / (7 * s.bodies + 8)) {
        PyErr_SetString(PyExc_ValueError, "bad sizes");
        return NULL;
    }
    if (hf_o != Py_None && (s.ground.nx < 1 || s.ground.ny < 1 || s.ground.nx > MAX_SIZE ||
                            s.ground.ny > MAX_SIZE || !(s.ground.dx > 0) || !(s.ground.dy > 0))) {
        PyErr_SetString(PyExc_ValueError, "bad heightfield");
        return NULL;
    }
    PyObject *objs[7] = {poses_o, local_o, radii_o, hf_o, planted_o, step_o, broken_o};
    Py_ssize_t sizes[7] = {8, 8, 8, 8, 1, 8, 1};
    Py_ssize_t needs[7] = {s.frames * s.bodies * 7, s.points * 3, s.points,
                           s.ground.nx * s.ground.ny, s.frames, s.frames > 0 ? s.frames - 1 : 0,
                           s.frames};
    const char *names[7] = {"poses", "sole points", "radii", "heightfield", "planted", "step",
                            "broken"};
    Py_buffer views[7];
    int taken = 0, ok = 1;
    for (; taken < 7 && ok; taken++)
        if (objs[taken] != Py_None)
            ok = take(objs[taken], &views[taken], taken >= 4, sizes[taken], needs[taken], names[taken]);
    if (!ok) taken--;
    if (ok) {
        s.poses = views[0].buf;
        s.local = views[1].buf;
        s.radii = views[2].buf;
        s.ground.hf = hf_o != Py_None ? views[3].buf : NULL;
        s.planted = views[4].buf;
        s.step = views[5].buf;
        s.broken = views[6].buf;
    }
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        run_soles(&s);
        Py_END_ALLOW_THREADS
    }
    for (int i = 0; i < taken; i++)
        if (objs[i] != Py_None) PyBuffer_Release(&views[i]);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"frames", frames, METH_VARARGS, "The per-frame checks in one pass (see _compiled.py)."},
    {"gaps", gaps, METH_VARARGS, "Self-penetration gaps per checked frame (see _compiled.py)."},
    {"soles", soles, METH_VARARGS, "A foot's planted frames and sole moves (see _compiled.py)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_check_kernel", "Compiled quality checks (see _compiled.py).", -1,
    methods};

PyMODINIT_FUNC PyInit__check_kernel(void) {
    PyObject *module = PyModule_Create(&module_definition);
    if (module == NULL) return NULL;
    if (PyModule_AddIntConstant(module, "SHAPE_INTS", SHAPE_INTS) < 0 ||
        PyModule_AddIntConstant(module, "SHAPE_DOUBLES", SHAPE_DOUBLES) < 0 ||
        PyModule_AddIntConstant(module, "SEARCH_STEPS", SEARCH_STEPS) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
