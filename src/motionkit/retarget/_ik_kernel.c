/* One IK stage of motionkit.retarget, compiled: every step of one clip's stage until the
 * stop rule, in one call.
 *
 * ik.py is the statement this file follows (and the fallback where it was not built);
 * _ik.py packs a Robot into the flat plan read here and calls solve(). A step:
 *
 *   FK of the bodies from (root position, root rotation, q), and every joint axis's world
 *   direction and a point on it;
 *   per task i: e_i = log6(T_b^-1 T_t), W_i J_i = -W_i jlog6(T_t^-1 T_b) J_body (J_body in
 *   MuJoCo's velocity coordinates: root linear in world axes, angular in its own);
 *   H = sum (W J)^T W J + damping I (+ posture weight on the joints), c = sum (W J)^T W e
 *   (+ posture weight (q - target));
 *   the step: argmin 1/2 x^T H x + c^T x within 0.95 of each joint's distance to its
 *   limits (the free Cholesky solve, else ik.box_qp's primal active set);
 *   the state integrated as Robot.integrate_many (the root rotation re-orthonormalised to
 *   its polar factor, which is what numpy's u @ vt of the SVD is).
 *
 * The plan (ints, then doubles; sizes from the arguments):
 *   ints:    per body BODY_INTS (parent, kind, coordinate, revolute, first motion, motions),
 *            per motion 2 (coordinate, revolute), per joint 2 (its axis's parent: 0 the
 *            root pose, b + 1 body b; revolute), per body nv (1 where the velocity coordinate moves it);
 *   doubles: per body BODY_DOUBLES (one motion: P0, P1, P2 with local = P0 + s P1 + c P2;
 *            no motion: the local transform; several: before, after), per motion 3 (its
 *            unit axis), per joint 6 (axis and anchor in the parent's frame).
 * Transforms are 4x4 row-major. Buffers come through the buffer protocol, are checked
 * against the sizes before the GIL is released, and one allocation per call holds all
 * the scratch.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { B_PARENT, B_KIND, B_COORD, B_TURNS, B_MOTION, B_MOTIONS, BODY_INTS = 8 };
enum { KIND_FIXED, KIND_SINGLE, KIND_MULTI };
enum { BODY_DOUBLES = 48 };

#define DAMPING 0.5
#define LIMIT_GAIN 0.95
#define MAX_DAMPING 1e8
#define SMALL 1e-4
/* Far beyond any robot; they bound every loop and allocation. */
#define MAX_BODIES 4096
#define MAX_NV 1024
#define MAX_TASKS 4096
#define MAX_REPEATS 100000

typedef struct {
    Py_ssize_t nb, nj, nv, nm, shift;
    const int *body, *motion, *joint, *moved; /* joint: (axis parent, revolute) */
    const double *body_d, *unit, *joint_d;
} Robot;

typedef struct {
    Py_ssize_t count;
    const int *body;
    const double *weight; /* (count, 6) */
    const double *target; /* (count, 16) */
} Tasks;

typedef struct {
    double pos[3], rot[9];
    double *q, *bodies, *axes, *anchors, *error; /* nj, nb*16, nj*3, nj*3, tasks*6 */
} State;

typedef struct {
    double *axis_local, *anchor_local;     /* nj*3 each */
    double *twist;                         /* 6*nv: every coordinate's world twist */
    double *hessian, *factor, *gradient;   /* nv*nv, nv*nv, nv */
    double *rows;                          /* 6*nv */
    double *x, *target, *move, *low, *high, *rhs; /* nv each */
    int *bound, *free_index, *columns;     /* nv each */
} Work;

/* ---- small linear algebra ---- */

static void matmul4(const double *a, const double *b, double *out) {
    double t[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            t[4 * i + j] = a[4 * i] * b[j] + a[4 * i + 1] * b[4 + j] + a[4 * i + 2] * b[8 + j] +
                           a[4 * i + 3] * b[12 + j];
    memcpy(out, t, sizeof t);
}

static void matmul3(const double *a, const double *b, double *out) {
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    memcpy(out, t, sizeof t);
}

static void hat(const double *v, double *m) {
    m[0] = 0.0; m[1] = -v[2]; m[2] = v[1];
    m[3] = v[2]; m[4] = 0.0; m[5] = -v[0];
    m[6] = -v[1]; m[7] = v[0]; m[8] = 0.0;
}

static void cross(const double *a, const double *b, double *out) {
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
           z = a[0] * b[1] - a[1] * b[0];
    out[0] = x; out[1] = y; out[2] = z;
}

/* lie.exp3_many of one rotation vector. */
static void exp3(const double *omega, double *out) {
    double t2 = omega[0] * omega[0] + omega[1] * omega[1] + omega[2] * omega[2];
    double angle = sqrt(t2), a, b, w[9], ww[9];
    if (angle < SMALL) {
        a = 1.0 - t2 / 6.0;
        b = 0.5 - t2 / 24.0;
    } else {
        a = sin(angle) / angle;
        b = (1.0 - cos(angle)) / (angle * angle);
    }
    hat(omega, w);
    matmul3(w, w, ww);
    for (int i = 0; i < 9; i++) out[i] = a * w[i] + b * ww[i];
    out[0] += 1.0; out[4] += 1.0; out[8] += 1.0;
}

/* lie.log3_many of one rotation matrix (3x3 row-major). */
static void log3(const double *m, double *omega) {
    double trace = m[0] + m[4] + m[8], q[4]; /* x y z w */
    if (trace > 0) {
        double s = 2.0 * sqrt(fmax(1.0 + trace, 1e-300));
        q[0] = (m[7] - m[5]) / s; q[1] = (m[2] - m[6]) / s; q[2] = (m[3] - m[1]) / s;
        q[3] = 0.25 * s;
    } else { /* near a half turn: from the largest diagonal term */
        int k = 0;
        if (m[4] > m[0]) k = 1;
        if (m[8] > m[4 * k]) k = 2;
        int i = (k + 1) % 3, j = (k + 2) % 3;
        double s = 2.0 * sqrt(1.0 + m[4 * k] - m[4 * i] - m[4 * j]);
        q[3] = (m[3 * j + i] - m[3 * i + j]) / s;
        q[k] = 0.25 * s;
        q[i] = (m[3 * i + k] + m[3 * k + i]) / s;
        q[j] = (m[3 * j + k] + m[3 * k + j]) / s;
    }
    double sine = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    double angle = 2.0 * atan2(sine, q[3]);
    if (angle > Py_MATH_PI) angle -= 2.0 * Py_MATH_PI;
    double k = sine < 1e-300 ? 0.0 : angle / sine;
    for (int i = 0; i < 3; i++) omega[i] = q[i] * k;
}

/* lie.log6_many of one rigid transform (4x4 row-major): (rho, omega). */
static void log6(const double *t, double *xi) {
    double r[9] = {t[0], t[1], t[2], t[4], t[5], t[6], t[8], t[9], t[10]};
    double p[3] = {t[3], t[7], t[11]}, *omega = xi + 3, wt[3], wwt[3];
    log3(r, omega);
    double t2 = omega[0] * omega[0] + omega[1] * omega[1] + omega[2] * omega[2];
    double angle = sqrt(t2), c;
    if (angle < SMALL) {
        c = 1.0 / 12.0 + t2 / 720.0;
    } else {
        double half = 0.5 * angle;
        c = (1.0 - half * cos(half) / sin(half)) / (angle * angle);
    }
    cross(omega, p, wt);
    cross(omega, wt, wwt);
    for (int i = 0; i < 3; i++) xi[i] = p[i] - 0.5 * wt[i] + c * wwt[i];
}

/* lie.jlog6_of_twist at -e (jlog6(T_t^-1 T_b) from the task error e): the 3x3 blocks
 * inverse (upper left and lower right) and coupling (upper right). */
static void jlog6_of_error(const double *e, double *inverse, double *coupling) {
    const double *rho = e, *omega = e + 3;
    double t2 = omega[0] * omega[0] + omega[1] * omega[1] + omega[2] * omega[2];
    double angle = sqrt(t2), c, a, b, cc;
    if (angle < SMALL) {
        c = 1.0 / 12.0 + t2 / 720.0;
        a = 1.0 / 6.0 - t2 / 120.0;
        b = 1.0 / 24.0 - t2 / 720.0;
        cc = 1.0 / 120.0 - t2 / 2520.0;
    } else {
        double s = sin(angle), co = cos(angle), s2 = angle * angle;
        c = 1.0 / s2 - (1.0 + co) / (2.0 * angle * s);
        a = (angle - s) / (s2 * angle);
        b = (s2 / 2.0 + co - 1.0) / (s2 * s2);
        cc = (2.0 * angle - 3.0 * s + angle * co) / (2.0 * s2 * s2 * angle);
    }
    /* the twist is -e: its hat is -W, and Barfoot's Q takes (rho_e, W) */
    double w[9], ww[9], r[9], rw[9], wr[9], wrw[9], wwr[9], rww[9], wrww[9], wwrw[9], q[9];
    hat(omega, w);
    matmul3(w, w, ww);
    hat(rho, r);
    for (int i = 0; i < 9; i++) inverse[i] = -0.5 * w[i] + c * ww[i];
    inverse[0] += 1.0; inverse[4] += 1.0; inverse[8] += 1.0;
    matmul3(r, w, rw);
    matmul3(w, r, wr);
    matmul3(wr, w, wrw);
    matmul3(ww, r, wwr);
    matmul3(r, ww, rww);
    matmul3(wrw, w, wrww);
    matmul3(w, wrw, wwrw);
    for (int i = 0; i < 9; i++)
        q[i] = 0.5 * r[i] + a * (wr[i] + rw[i] + wrw[i]) + b * (wwr[i] + rww[i] - 3.0 * wrw[i]) +
               cc * (wrww[i] + wwrw[i]);
    double iq[9];
    matmul3(inverse, q, iq);
    matmul3(iq, inverse, coupling);
    for (int i = 0; i < 9; i++) coupling[i] = -coupling[i];
}

/* The lower Cholesky factor of the n x n matrix a (row stride n) into l; 0 if not
 * positive definite. */
static int cholesky(const double *a, Py_ssize_t n, double *l) {
    for (Py_ssize_t i = 0; i < n; i++) {
        for (Py_ssize_t j = 0; j <= i; j++) {
            double s = a[i * n + j];
            for (Py_ssize_t k = 0; k < j; k++) s -= l[i * n + k] * l[j * n + k];
            if (i == j) {
                if (!(s > 0.0)) return 0;
                l[i * n + i] = sqrt(s);
            } else {
                l[i * n + j] = s / l[j * n + j];
            }
        }
    }
    return 1;
}

/* x = (L L^T)^-1 b (x may be b). */
static void cholesky_solve(const double *l, Py_ssize_t n, const double *b, double *x) {
    for (Py_ssize_t i = 0; i < n; i++) {
        double s = b[i];
        for (Py_ssize_t k = 0; k < i; k++) s -= l[i * n + k] * x[k];
        x[i] = s / l[i * n + i];
    }
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        double s = x[i];
        for (Py_ssize_t k = i + 1; k < n; k++) s -= l[k * n + i] * x[k];
        x[i] = s / l[i * n + i];
    }
}

/* ---- the robot ---- */

/* Bodies, axes and anchors of the state (Robot.poses_many). */
static void forward(const Robot *r, State *s, Work *w) {
    double root[16] = {s->rot[0], s->rot[1], s->rot[2], s->pos[0], s->rot[3], s->rot[4],
                       s->rot[5], s->pos[1], s->rot[6], s->rot[7], s->rot[8], s->pos[2],
                       0.0, 0.0, 0.0, 1.0};
    for (Py_ssize_t j = 0; j < r->nj; j++) {
        memcpy(w->axis_local + 3 * j, r->joint_d + 6 * j, 3 * sizeof(double));
        memcpy(w->anchor_local + 3 * j, r->joint_d + 6 * j + 3, 3 * sizeof(double));
    }
    for (Py_ssize_t b = 0; b < r->nb; b++) {
        const int *bi = r->body + BODY_INTS * b;
        const double *d = r->body_d + BODY_DOUBLES * b;
        double local[16];
        if (bi[B_KIND] == KIND_SINGLE) {
            double angle = s->q[bi[B_COORD]], sv, cv;
            if (bi[B_TURNS]) {
                sv = sin(angle);
                cv = 1.0 - cos(angle);
            } else {
                sv = angle;
                cv = 0.0;
            }
            for (int i = 0; i < 16; i++) local[i] = d[i] + sv * d[16 + i] + cv * d[32 + i];
        } else if (bi[B_KIND] == KIND_MULTI) {
            double frame[16];
            memcpy(frame, d, sizeof frame);
            for (int m = bi[B_MOTION]; m < bi[B_MOTION] + bi[B_MOTIONS]; m++) {
                int coord = r->motion[2 * m];
                const double *unit = r->unit + 3 * m;
                double motion[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
                for (int i = 0; i < 3; i++) {
                    w->axis_local[3 * coord + i] = frame[4 * i] * unit[0] +
                                                   frame[4 * i + 1] * unit[1] +
                                                   frame[4 * i + 2] * unit[2];
                    w->anchor_local[3 * coord + i] = frame[4 * i + 3];
                }
                double amount = s->q[coord];
                if (r->motion[2 * m + 1]) {
                    double v[3] = {unit[0] * amount, unit[1] * amount, unit[2] * amount}, e[9];
                    exp3(v, e);
                    for (int i = 0; i < 3; i++)
                        for (int k = 0; k < 3; k++) motion[4 * i + k] = e[3 * i + k];
                } else {
                    for (int i = 0; i < 3; i++) motion[4 * i + 3] = unit[i] * amount;
                }
                matmul4(frame, motion, frame);
            }
            matmul4(frame, d + 16, local);
        } else {
            memcpy(local, d, sizeof local);
        }
        const double *parent = b == 0 ? root : s->bodies + 16 * bi[B_PARENT];
        matmul4(parent, local, s->bodies + 16 * b);
    }
    for (Py_ssize_t j = 0; j < r->nj; j++) {
        int up = r->joint[2 * j];
        const double *p = up == 0 ? root : s->bodies + 16 * (up - 1);
        const double *ax = w->axis_local + 3 * j, *an = w->anchor_local + 3 * j;
        for (int i = 0; i < 3; i++) {
            s->axes[3 * j + i] = p[4 * i] * ax[0] + p[4 * i + 1] * ax[1] + p[4 * i + 2] * ax[2];
            s->anchors[3 * j + i] =
                p[4 * i] * an[0] + p[4 * i + 1] * an[1] + p[4 * i + 2] * an[2] + p[4 * i + 3];
        }
    }
}

/* Every task's error log6(T_b^-1 T_t) into s->error. */
static void errors(const Tasks *t, State *s) {
    for (Py_ssize_t k = 0; k < t->count; k++) {
        const double *pose = s->bodies + 16 * t->body[k], *goal = t->target + 16 * k;
        double rel[16] = {0};
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++)
                rel[4 * i + j] = pose[i] * goal[j] + pose[4 + i] * goal[4 + j] +
                                 pose[8 + i] * goal[8 + j];
            rel[4 * i + 3] = pose[i] * (goal[3] - pose[3]) + pose[4 + i] * (goal[7] - pose[7]) +
                             pose[8 + i] * (goal[11] - pose[11]);
        }
        rel[15] = 1.0;
        log6(rel, s->error + 6 * k);
    }
}

/* Every velocity coordinate's world twist about the origin (Robot.motion_axes): column k
 * of w->twist (6 rows, stride nv). */
static void twists(const Robot *r, const State *s, Work *w) {
    Py_ssize_t nv = r->nv, shift = r->shift;
    double *t = w->twist;
    memset(t, 0, 6 * nv * sizeof(double));
    if (shift) {
        const double *root = s->bodies;
        double turn[9] = {root[0], root[1], root[2], root[4], root[5], root[6], root[8], root[9],
                          root[10]};
        double p[3] = {root[3], root[7], root[11]}, h[9], ht[9];
        hat(p, h);
        matmul3(h, turn, ht);
        for (int i = 0; i < 3; i++) {
            t[i * nv + i] = 1.0;
            for (int k = 0; k < 3; k++) {
                t[i * nv + 3 + k] = ht[3 * i + k];
                t[(3 + i) * nv + 3 + k] = turn[3 * i + k];
            }
        }
    }
    for (Py_ssize_t j = 0; j < r->nj; j++) {
        const double *ax = s->axes + 3 * j, *an = s->anchors + 3 * j;
        Py_ssize_t col = shift + j;
        double linear[3];
        if (r->joint[2 * j + 1]) {
            cross(an, ax, linear);
            for (int i = 0; i < 3; i++) t[(3 + i) * nv + col] = ax[i];
        } else {
            memcpy(linear, ax, sizeof linear);
        }
        for (int i = 0; i < 3; i++) t[i * nv + col] = linear[i];
    }
}

/* ---- one step ---- */

typedef struct {
    const double *lower, *upper; /* nj: the joint limits (±inf where none) */
    const double *posture;       /* nj or NULL: the posture target */
    double posture_weight, min_drop;
    Py_ssize_t max_repeats;
    int adaptive;
} Rule;

/* H, c and the box of the step from state s (damping < 0: GMR's, DAMPING + sum |W e|^2). */
static void build(const Robot *r, const Tasks *t, const State *s, Work *w, const Rule *rule,
                  double damping) {
    Py_ssize_t nv = r->nv, shift = r->shift;
    double *h = w->hessian, *g = w->gradient, werror_sq = 0.0;
    twists(r, s, w);
    memset(h, 0, nv * nv * sizeof(double));
    memset(g, 0, nv * sizeof(double));
    for (Py_ssize_t k = 0; k < t->count; k++) {
        int body = t->body[k];
        const double *pose = s->bodies + 16 * body, *e = s->error + 6 * k;
        const double *weight = t->weight + 6 * k;
        double inverse[9], coupling[9], ar[9], br[9], turn_t[9], kl[18], ka[18], hp[9], p[3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) turn_t[3 * i + j] = pose[4 * j + i];
        jlog6_of_error(e, inverse, coupling);
        matmul3(inverse, turn_t, ar);
        matmul3(coupling, turn_t, br);
        /* K = -W jlog6 blockdiag(R^T, R^T) = [K_L, K_A]; K_A -= K_L hat(p) */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                kl[3 * i + j] = -weight[i] * ar[3 * i + j];
                kl[3 * (3 + i) + j] = 0.0;
                ka[3 * i + j] = -weight[i] * br[3 * i + j];
                ka[3 * (3 + i) + j] = -weight[3 + i] * ar[3 * i + j];
            }
        p[0] = pose[3]; p[1] = pose[7]; p[2] = pose[11];
        hat(p, hp);
        for (int i = 0; i < 6; i++) {
            double row[3];
            for (int j = 0; j < 3; j++)
                row[j] = kl[3 * i] * hp[j] + kl[3 * i + 1] * hp[3 + j] + kl[3 * i + 2] * hp[6 + j];
            for (int j = 0; j < 3; j++) ka[3 * i + j] -= row[j];
        }
        Py_ssize_t m = 0;
        const int *moved = r->moved + body * nv;
        for (Py_ssize_t col = 0; col < nv; col++)
            if (moved[col]) w->columns[m++] = (int)col;
        double *rows = w->rows, we[6];
        for (int i = 0; i < 6; i++) {
            for (Py_ssize_t a = 0; a < m; a++) {
                Py_ssize_t col = w->columns[a];
                const double *tw = w->twist + col;
                rows[i * m + a] = kl[3 * i] * tw[0] + kl[3 * i + 1] * tw[nv] +
                                  kl[3 * i + 2] * tw[2 * nv] + ka[3 * i] * tw[3 * nv] +
                                  ka[3 * i + 1] * tw[4 * nv] + ka[3 * i + 2] * tw[5 * nv];
            }
            we[i] = weight[i] * e[i];
            werror_sq += we[i] * we[i];
        }
        for (Py_ssize_t a = 0; a < m; a++) {
            Py_ssize_t ca = w->columns[a];
            double sum = 0.0;
            for (int i = 0; i < 6; i++) sum += rows[i * m + a] * we[i];
            g[ca] += sum;
            for (Py_ssize_t b = a; b < m; b++) {
                double dot = 0.0;
                for (int i = 0; i < 6; i++) dot += rows[i * m + a] * rows[i * m + b];
                h[ca * nv + w->columns[b]] += dot;
            }
        }
    }
    for (Py_ssize_t i = 0; i < nv; i++)
        for (Py_ssize_t j = 0; j < i; j++) h[i * nv + j] = h[j * nv + i];
    if (damping < 0) damping = DAMPING + werror_sq;
    for (Py_ssize_t i = 0; i < nv; i++) h[i * nv + i] += damping;
    if (rule->posture != NULL)
        for (Py_ssize_t j = 0; j < r->nj; j++) {
            h[(shift + j) * nv + shift + j] += rule->posture_weight;
            g[shift + j] += rule->posture_weight * (s->q[j] - rule->posture[j]);
        }
    for (Py_ssize_t i = 0; i < shift; i++) {
        w->low[i] = -INFINITY;
        w->high[i] = INFINITY;
    }
    for (Py_ssize_t j = 0; j < r->nj; j++) {
        w->low[shift + j] = LIMIT_GAIN * (rule->lower[j] - s->q[j]);
        w->high[shift + j] = LIMIT_GAIN * (rule->upper[j] - s->q[j]);
    }
}

/* Solve h x = b (n x n, positive definite) into x through a Cholesky factor in l; NaN
 * where the factor fails (a NaN or a non-positive pivot). */
static void solve_spd(const double *h, Py_ssize_t n, const double *b, double *x, double *l) {
    memcpy(l, h, n * n * sizeof(double));
    if (cholesky(l, n, l)) {
        cholesky_solve(l, n, b, x);
    } else {
        for (Py_ssize_t i = 0; i < n; i++) x[i] = NAN;
    }
}

/* ik.box_qp: argmin 1/2 x^T H x + c^T x within [low, high] by the primal active set
 * from the point of the box nearest 0; the step into w->x. */
static void box_qp(Py_ssize_t n, const double *h, const double *c, const double *low,
                   const double *high, Work *w) {
    double *x = w->x, *target = w->target, *move = w->move, *rhs = w->rhs;
    int *bound = w->bound, *index = w->free_index;
    double scale = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        x[i] = fmin(fmax(0.0, low[i]), high[i]);
        bound[i] = low[i] > 0 ? -1 : (high[i] < 0 ? 1 : 0);
        scale = fmax(scale, fabs(c[i]));
    }
    for (Py_ssize_t iteration = 0; iteration < 4 * n + 10; iteration++) {
        Py_ssize_t f = 0;
        for (Py_ssize_t i = 0; i < n; i++)
            if (bound[i] == 0) index[f++] = (int)i;
        memcpy(target, x, n * sizeof(double));
        if (f) {
            double *sub = w->factor;
            for (Py_ssize_t a = 0; a < f; a++) {
                const double *row = h + index[a] * n;
                double s = c[index[a]];
                for (Py_ssize_t i = 0; i < n; i++)
                    if (bound[i] != 0) s += row[i] * x[i];
                rhs[a] = -s;
                for (Py_ssize_t b = 0; b < f; b++) sub[a * f + b] = row[index[b]];
            }
            if (cholesky(sub, f, sub)) {
                cholesky_solve(sub, f, rhs, rhs);
            } else {
                for (Py_ssize_t a = 0; a < f; a++) rhs[a] = NAN;
            }
            for (Py_ssize_t a = 0; a < f; a++) target[index[a]] = rhs[a];
        }
        Py_ssize_t blocking = 0;
        double least = INFINITY;
        for (Py_ssize_t i = 0; i < n; i++) {
            move[i] = target[i] - x[i];
            double room = INFINITY;
            if (bound[i] == 0) {
                if (move[i] > 0)
                    room = (high[i] - x[i]) / move[i];
                else if (move[i] < 0)
                    room = (low[i] - x[i]) / move[i];
            }
            if (room < least) {
                least = room;
                blocking = i;
            }
        }
        if (least < 1.0) {
            for (Py_ssize_t i = 0; i < n; i++) x[i] += least * move[i];
            x[blocking] = move[blocking] > 0 ? high[blocking] : low[blocking];
            bound[blocking] = move[blocking] > 0 ? 1 : -1;
            continue;
        }
        memcpy(x, target, n * sizeof(double));
        Py_ssize_t worst = 0;
        double most = -INFINITY;
        for (Py_ssize_t i = 0; i < n; i++) {
            double s = c[i];
            for (Py_ssize_t k = 0; k < n; k++) s += h[i * n + k] * x[k];
            /* at a bound, the multiplier is +- the pull s */
            double wrong = bound[i] < 0 ? -s : (bound[i] > 0 ? s : 0.0);
            if (wrong > most) {
                most = wrong;
                worst = i;
            }
        }
        if (most <= 1e-14 * (1.0 + scale)) return;
        bound[worst] = 0;
    }
}

/* The step: the free solution where it is inside the box, else box_qp's. */
static void qp(const Robot *r, Work *w) {
    Py_ssize_t n = r->nv;
    int inside = 1;
    for (Py_ssize_t i = 0; i < n; i++) w->rhs[i] = -w->gradient[i];
    solve_spd(w->hessian, n, w->rhs, w->x, w->factor);
    for (Py_ssize_t i = 0; i < n; i++)
        if (w->x[i] < w->low[i] || w->x[i] > w->high[i]) inside = 0;
    if (!inside) box_qp(n, w->hessian, w->gradient, w->low, w->high, w);
}

/* The orthogonal polar factor of m (numpy's u @ vt of its SVD), by Newton's iteration
 * X <- (X + X^-T) / 2. */
static void polar(double *m) {
    for (int iteration = 0; iteration < 12; iteration++) {
        double cof[9] = {m[4] * m[8] - m[5] * m[7], m[5] * m[6] - m[3] * m[8],
                         m[3] * m[7] - m[4] * m[6], m[2] * m[7] - m[1] * m[8],
                         m[0] * m[8] - m[2] * m[6], m[1] * m[6] - m[0] * m[7],
                         m[1] * m[5] - m[2] * m[4], m[2] * m[3] - m[0] * m[5],
                         m[0] * m[4] - m[1] * m[3]};
        double det = m[0] * cof[0] + m[1] * cof[1] + m[2] * cof[2], change = 0.0;
        if (!(det != 0.0)) return;
        for (int i = 0; i < 9; i++) {
            double next = 0.5 * (m[i] + cof[i] / det);
            change = fmax(change, fabs(next - m[i]));
            m[i] = next;
        }
        if (change <= 1e-15) return;
    }
}

/* Robot.integrate_many of one state by the step w->x, into n. */
static void integrate(const Robot *r, const State *s, const double *step, State *n) {
    Py_ssize_t shift = r->shift;
    if (shift) {
        double e[9];
        for (int i = 0; i < 3; i++) n->pos[i] = s->pos[i] + step[i];
        exp3(step + 3, e);
        matmul3(s->rot, e, n->rot);
        polar(n->rot);
    } else {
        memcpy(n->pos, s->pos, sizeof n->pos);
        memcpy(n->rot, s->rot, sizeof n->rot);
    }
    for (Py_ssize_t j = 0; j < r->nj; j++) n->q[j] = s->q[j] + step[shift + j];
}

/* The norm the stop rule watches: the unweighted errors (GMR), or the weighted ones with
 * the posture's term (adaptive). */
static double norm_of(const Robot *r, const Tasks *t, const State *s, const Rule *rule) {
    double sum = 0.0;
    for (Py_ssize_t i = 0; i < 6 * t->count; i++) {
        double v = rule->adaptive ? t->weight[i] * s->error[i] : s->error[i];
        sum += v * v;
    }
    double out = sqrt(sum);
    if (rule->posture == NULL || !rule->adaptive) return out;
    double pull = 0.0;
    for (Py_ssize_t j = 0; j < r->nj; j++) {
        double d = s->q[j] - rule->posture[j];
        pull += d * d;
    }
    return sqrt(out * out + rule->posture_weight * pull);
}

/* ik.solve_stage_many's loop for one clip; the steps tried. *current ends as the state. */
static Py_ssize_t stage(const Robot *r, const Tasks *t, const Rule *rule, State **current,
                        State **spare, Work *w) {
    State *cur = *current, *next = *spare;
    forward(r, cur, w);
    errors(t, cur);
    double before = norm_of(r, t, cur, rule), damping = DAMPING;
    Py_ssize_t steps = 0;
    for (;;) {
        build(r, t, cur, w, rule, rule->adaptive ? damping : -1.0);
        qp(r, w);
        integrate(r, cur, w->x, next);
        forward(r, next, w);
        errors(t, next);
        double after = norm_of(r, t, next, rule);
        steps++;
        int taken = rule->adaptive ? after < before : 1;
        /* a refused step that left the norm as it was: nothing moves (converged) */
        int going = taken ? before - after > rule->min_drop
                          : after != before && damping < MAX_DAMPING;
        int keep = going && steps <= rule->max_repeats;
        if (taken) {
            State *swap = cur;
            cur = next;
            next = swap;
            before = after;
        }
        damping = taken ? fmax(damping / 3, DAMPING) : damping * 4;
        if (!keep) break;
    }
    *current = cur;
    *spare = next;
    return steps;
}

/* ---- the module ---- */

/* A buffer of exactly `need` items of `size` bytes, C-contiguous; 0 with an error set. */
/* Whether a buffer's struct format is the one item `code` ('d' double, 'i' int), in native
 * byte order (an optional '@', '=' or, on a little-endian machine, '<' before it). */
static int format_is(const char *format, char code) {
    if (format == NULL) return 0;
    if (*format == '@' || *format == '=') format++;
#if PY_LITTLE_ENDIAN
    else if (*format == '<') format++;
#endif
    return format[0] == code && format[1] == '\0';
}

/* A buffer of exactly `need` items of type `code` ('d' or 'i'), C-contiguous; 0 with an
 * error set. */
static int take(PyObject *obj, Py_buffer *view, int writable, char code, Py_ssize_t need,
                const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    Py_ssize_t size = code == 'i' ? (Py_ssize_t)sizeof(int) : (Py_ssize_t)sizeof(double);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return 0;
    if (view->itemsize != size || view->len != need * size || !format_is(view->format, code)) {
        PyErr_Format(PyExc_ValueError, "%s: need %zd items of type '%c'", name, need, code);
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

/* Every index of the plan inside its arrays, parents before children. */
static int check_plan(const Robot *r, const Tasks *t) {
    for (Py_ssize_t b = 0; b < r->nb; b++) {
        const int *i = r->body + BODY_INTS * b;
        int ok = (b == 0 || (i[B_PARENT] >= 0 && i[B_PARENT] < b)) && i[B_KIND] >= KIND_FIXED &&
                 i[B_KIND] <= KIND_MULTI;
        if (ok && i[B_KIND] == KIND_SINGLE) ok = i[B_COORD] >= 0 && i[B_COORD] < r->nj;
        if (ok && i[B_KIND] == KIND_MULTI)
            ok = i[B_MOTION] >= 0 && i[B_MOTIONS] >= 1 && i[B_MOTIONS] <= 16 &&
                 (Py_ssize_t)i[B_MOTION] + i[B_MOTIONS] <= r->nm;
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "bad plan row %zd", b);
            return 0;
        }
    }
    for (Py_ssize_t m = 0; m < r->nm; m++)
        if (r->motion[2 * m] < 0 || r->motion[2 * m] >= r->nj) {
            PyErr_Format(PyExc_ValueError, "bad motion %zd", m);
            return 0;
        }
    for (Py_ssize_t j = 0; j < r->nj; j++)
        if (r->joint[2 * j] < 0 || r->joint[2 * j] > r->nb) {
            PyErr_Format(PyExc_ValueError, "bad joint %zd", j);
            return 0;
        }
    for (Py_ssize_t k = 0; k < t->count; k++)
        if (t->body[k] < 0 || t->body[k] >= r->nb) {
            PyErr_Format(PyExc_ValueError, "bad task body %zd", k);
            return 0;
        }
    return 1;
}

enum {
    A_INTS, A_DOUBLES, A_TASK_BODIES, A_WEIGHTS, A_TARGETS, A_LOWER, A_UPPER, A_POSTURE,
    A_POS, A_ROT, A_Q, A_OUT_POS, A_OUT_ROT, A_OUT_Q, A_OUT_BODIES, A_OUT_AXES,
    A_OUT_ANCHORS, A_COUNT
};

static PyObject *solve(PyObject *self, PyObject *args) {
    PyObject *objs[A_COUNT];
    Py_ssize_t nb, nj, nm, tasks, max_repeats;
    int floating, adaptive;
    double posture_weight, min_drop;
    if (!PyArg_ParseTuple(args, "OOnnnpOOOnOOOddnpOOOOOOOOO:solve", &objs[A_INTS],
                          &objs[A_DOUBLES], &nb, &nj, &nm, &floating, &objs[A_TASK_BODIES],
                          &objs[A_WEIGHTS], &objs[A_TARGETS], &tasks, &objs[A_LOWER],
                          &objs[A_UPPER], &objs[A_POSTURE], &posture_weight, &min_drop,
                          &max_repeats, &adaptive, &objs[A_POS], &objs[A_ROT], &objs[A_Q],
                          &objs[A_OUT_POS], &objs[A_OUT_ROT], &objs[A_OUT_Q],
                          &objs[A_OUT_BODIES], &objs[A_OUT_AXES], &objs[A_OUT_ANCHORS]))
        return NULL;
    Py_ssize_t shift = floating ? 6 : 0, nv = shift + nj;
    if (nb < 1 || nb > MAX_BODIES || nj < 0 || nv > MAX_NV || nv < 1 || nm < 0 || nm > MAX_NV ||
        tasks < 0 || tasks > MAX_TASKS || max_repeats < 0 || max_repeats > MAX_REPEATS) {
        PyErr_SetString(PyExc_ValueError, "sizes out of range");
        return NULL;
    }
    Py_ssize_t needs[A_COUNT] = {
        [A_INTS] = BODY_INTS * nb + 2 * nm + 2 * nj + nb * nv,
        [A_DOUBLES] = BODY_DOUBLES * nb + 3 * nm + 6 * nj,
        [A_TASK_BODIES] = tasks, [A_WEIGHTS] = 6 * tasks, [A_TARGETS] = 16 * tasks,
        [A_LOWER] = nj, [A_UPPER] = nj, [A_POSTURE] = nj, [A_POS] = 3, [A_ROT] = 9,
        [A_Q] = nj, [A_OUT_POS] = 3, [A_OUT_ROT] = 9, [A_OUT_Q] = nj,
        [A_OUT_BODIES] = 16 * nb, [A_OUT_AXES] = 3 * nj, [A_OUT_ANCHORS] = 3 * nj};
    static const char *names[A_COUNT] = {
        "ints", "doubles", "task bodies", "weights", "targets", "lower", "upper", "posture",
        "root pos", "root rot", "q", "out pos", "out rot", "out q", "out bodies", "out axes",
        "out anchors"};
    Py_buffer views[A_COUNT];
    int held[A_COUNT] = {0}, ok = 1;
    for (int a = 0; a < A_COUNT && ok; a++) {
        if (a == A_POSTURE && objs[a] == Py_None) continue;
        int integer = a == A_INTS || a == A_TASK_BODIES;
        ok = take(objs[a], &views[a], a >= A_OUT_POS, integer ? 'i' : 'd', needs[a], names[a]);
        held[a] = ok;
    }
    Robot robot = {0};
    Tasks task_set = {0};
    Rule rule = {0};
    if (ok) {
        const int *ints = views[A_INTS].buf;
        const double *doubles = views[A_DOUBLES].buf;
        robot.nb = nb; robot.nj = nj; robot.nv = nv; robot.nm = nm; robot.shift = shift;
        robot.body = ints;
        robot.motion = robot.body + BODY_INTS * nb;
        robot.joint = robot.motion + 2 * nm;
        robot.moved = robot.joint + 2 * nj;
        robot.body_d = doubles;
        robot.unit = robot.body_d + BODY_DOUBLES * nb;
        robot.joint_d = robot.unit + 3 * nm;
        task_set.count = tasks;
        task_set.body = views[A_TASK_BODIES].buf;
        task_set.weight = views[A_WEIGHTS].buf;
        task_set.target = views[A_TARGETS].buf;
        rule.lower = views[A_LOWER].buf;
        rule.upper = views[A_UPPER].buf;
        rule.posture = held[A_POSTURE] ? views[A_POSTURE].buf : NULL;
        rule.posture_weight = posture_weight;
        rule.min_drop = min_drop;
        rule.max_repeats = max_repeats;
        rule.adaptive = adaptive;
        ok = check_plan(&robot, &task_set);
    }
    Py_ssize_t steps = 0;
    if (ok) {
        /* a state: q, bodies, axes, anchors, errors; the work: local axes and anchors,
         * twists, H and its factor, c, rows (6 nv) and six vectors of nv */
        size_t per_state = (size_t)(7 * nj + 16 * nb + 6 * tasks);
        size_t doubles = 2 * per_state + 6 * (size_t)nj + 6 * (size_t)nv +
                         2 * (size_t)nv * (size_t)nv + 13 * (size_t)nv;
        double *block = malloc(doubles * sizeof(double) + 3 * (size_t)nv * sizeof(int));
        if (block == NULL) {
            PyErr_NoMemory();
            ok = 0;
        } else {
            State states[2];
            double *at = block;
            for (int k = 0; k < 2; k++) {
                State *s = &states[k];
                s->q = at; at += nj;
                s->bodies = at; at += 16 * nb;
                s->axes = at; at += 3 * nj;
                s->anchors = at; at += 3 * nj;
                s->error = at; at += 6 * tasks;
            }
            Work w;
            w.axis_local = at; at += 3 * nj;
            w.anchor_local = at; at += 3 * nj;
            w.twist = at; at += 6 * nv;
            w.hessian = at; at += nv * nv;
            w.factor = at; at += nv * nv;
            w.gradient = at; at += nv;
            w.rows = at; at += 6 * nv;
            w.x = at; at += nv;
            w.target = at; at += nv;
            w.move = at; at += nv;
            w.low = at; at += nv;
            w.high = at; at += nv;
            w.rhs = at; at += nv;
            if (at != block + doubles) abort(); /* the layout above and the count agree */
            w.bound = (int *)(block + doubles);
            w.free_index = w.bound + nv;
            w.columns = w.free_index + nv;
            State *cur = &states[0], *spare = &states[1];
            memcpy(cur->pos, views[A_POS].buf, sizeof cur->pos);
            memcpy(cur->rot, views[A_ROT].buf, sizeof cur->rot);
            memcpy(cur->q, views[A_Q].buf, nj * sizeof(double));
            Py_BEGIN_ALLOW_THREADS
            steps = stage(&robot, &task_set, &rule, &cur, &spare, &w);
            Py_END_ALLOW_THREADS
            memcpy(views[A_OUT_POS].buf, cur->pos, sizeof cur->pos);
            memcpy(views[A_OUT_ROT].buf, cur->rot, sizeof cur->rot);
            memcpy(views[A_OUT_Q].buf, cur->q, nj * sizeof(double));
            memcpy(views[A_OUT_BODIES].buf, cur->bodies, 16 * nb * sizeof(double));
            memcpy(views[A_OUT_AXES].buf, cur->axes, 3 * nj * sizeof(double));
            memcpy(views[A_OUT_ANCHORS].buf, cur->anchors, 3 * nj * sizeof(double));
            free(block);
        }
    }
    for (int a = 0; a < A_COUNT; a++)
        if (held[a]) PyBuffer_Release(&views[a]);
    if (!ok) return NULL;
    return PyLong_FromSsize_t(steps);
}

static PyMethodDef methods[] = {
    {"solve", solve, METH_VARARGS,
     "solve(ints, doubles, bodies, joints, motions, floating, task_bodies, weights, targets, "
     "tasks, lower, upper, posture, posture_weight, min_drop, max_repeats, adaptive, root_pos, "
     "root_rot, q, out_pos, out_rot, out_q, out_bodies, out_axes, out_anchors): one IK stage "
     "of one clip; its steps (see _ik.py)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_ik_kernel", "Compiled IK stage (see _ik.py).", -1, methods};

PyMODINIT_FUNC PyInit__ik_kernel(void) {
    PyObject *module = PyModule_Create(&module_definition);
    if (module == NULL) return NULL;
    /* the row widths, bounds and solver constants, compared with Python's on import */
    if (PyModule_AddIntConstant(module, "BODY_INTS", BODY_INTS) < 0 ||
        PyModule_AddIntConstant(module, "BODY_DOUBLES", BODY_DOUBLES) < 0 ||
        PyModule_AddIntConstant(module, "MAX_BODIES", MAX_BODIES) < 0 ||
        PyModule_AddIntConstant(module, "MAX_NV", MAX_NV) < 0 ||
        PyModule_AddIntConstant(module, "MAX_TASKS", MAX_TASKS) < 0 ||
        PyModule_AddIntConstant(module, "MAX_REPEATS", MAX_REPEATS) < 0 ||
        PyModule_AddObject(module, "DAMPING", PyFloat_FromDouble(DAMPING)) < 0 ||
        PyModule_AddObject(module, "LIMIT_GAIN", PyFloat_FromDouble(LIMIT_GAIN)) < 0 ||
        PyModule_AddObject(module, "MAX_DAMPING", PyFloat_FromDouble(MAX_DAMPING)) < 0 ||
        PyModule_AddObject(module, "SMALL", PyFloat_FromDouble(SMALL)) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
