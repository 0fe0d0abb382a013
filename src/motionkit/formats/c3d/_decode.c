/* C3D frames decoded in one pass (see decode.py, whose NumPy decode_reference states the
 * same rule and which the tests hold this to, bit for bit).
 *
 * A frame is `words` words: markers x (x y z residual), then the analog samples (sample-major:
 * `samples` rows of `channels`); a word is a float32 or an int16, in the processor's format.
 * Output: xyz (markers, total, 3) float64 = word * point_factor, NaN where the residual word is
 * negative; residual (total, markers) float64 = the low byte of trunc(word) * residual_factor
 * (a word that is NaN or not below 2^31 counts 0), -1 where negative; analog (channels,
 * total * samples) float32 = (word - offset[c]) * factor[c] computed in float64. Frames are
 * taken in blocks of BLOCK so that a block's bytes stay in cache while each marker's and
 * channel's row is written contiguously. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { K_LE_F4, K_LE_I2, K_BE_F4, K_BE_I2, K_DEC_F4, KINDS };
#define BLOCK 64

static inline float as_float(uint32_t bits) {
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* The `count` words at `p` as floats (exact: every float32 and int16 is one). */
static void words_to_floats(const unsigned char *p, Py_ssize_t count, int kind, float *out) {
    Py_ssize_t i;
    switch (kind) {
    case K_LE_F4:
        for (i = 0; i < count; i++, p += 4)
            out[i] = as_float((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        break;
    case K_BE_F4:
        for (i = 0; i < count; i++, p += 4)
            out[i] = as_float((uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24);
        break;
    case K_DEC_F4: /* the two 16-bit halves swapped, and 4 times the IEEE value */
        for (i = 0; i < count; i++, p += 4)
            out[i] = as_float((uint32_t)p[2] | (uint32_t)p[3] << 8 | (uint32_t)p[0] << 16 | (uint32_t)p[1] << 24) / 4.0f;
        break;
    case K_LE_I2:
        for (i = 0; i < count; i++, p += 2) out[i] = (int16_t)(uint16_t)(p[0] | p[1] << 8);
        break;
    default: /* K_BE_I2 */
        for (i = 0; i < count; i++, p += 2) out[i] = (int16_t)(uint16_t)(p[1] | p[0] << 8);
        break;
    }
}

typedef struct {
    const unsigned char *raw;
    Py_ssize_t frames, markers, words, analog_at, channels, samples, first, total, frame_bytes;
    int kind;
    double point_factor, residual_factor;
    const double *offsets, *factors;
    double *xyz, *residual;
    float *analog;
    float *scratch; /* BLOCK frames of words as floats */
} Job;

static void run(const Job *j) {
    for (Py_ssize_t block = 0; block < j->frames; block += BLOCK) {
        Py_ssize_t n = block + BLOCK < j->frames ? BLOCK : j->frames - block;
        words_to_floats(j->raw + block * j->frame_bytes, n * j->words, j->kind, j->scratch);
        for (Py_ssize_t m = 0; m < j->markers; m++) {
            double *out = j->xyz + (m * j->total + j->first + block) * 3;
            double *res = j->residual + (j->first + block) * j->markers + m;
            const float *w = j->scratch + 4 * m;
            for (Py_ssize_t f = 0; f < n; f++, out += 3, res += j->markers, w += j->words) {
                double word = w[3];
                if (word < 0) {
                    out[0] = out[1] = out[2] = NAN;
                    *res = -1.0;
                    continue;
                }
                out[0] = (double)w[0] * j->point_factor;
                out[1] = (double)w[1] * j->point_factor;
                out[2] = (double)w[2] * j->point_factor;
                double byte = word < 2147483648.0 ? (double)((int64_t)word & 0xFF) : 0.0; /* NaN: 0 */
                *res = byte * j->residual_factor;
            }
        }
        if (j->analog == NULL) continue;
        for (Py_ssize_t c = 0; c < j->channels; c++) {
            float *out = j->analog + c * j->total * j->samples + (j->first + block) * j->samples;
            double offset = j->offsets[c], factor = j->factors[c];
            const float *w = j->scratch + j->analog_at + c;
            for (Py_ssize_t f = 0; f < n; f++, w += j->words)
                for (Py_ssize_t s = 0; s < j->samples; s++)
                    *out++ = (float)(((double)w[s * j->channels] - offset) * factor);
        }
    }
}

/* A C-contiguous buffer of at least `need` items of `size` bytes; 0 with an error set. */
static int take(PyObject *obj, Py_buffer *view, int writable, Py_ssize_t size, Py_ssize_t need,
                const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return 0;
    if (view->len / size < need) {
        PyErr_Format(PyExc_ValueError, "%s: need %zd items of %zd bytes", name, need, size);
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

static PyObject *decode(PyObject *self, PyObject *args) {
    PyObject *objs[6]; /* raw, offsets, factors, xyz, residual, analog (or None) */
    Job j = {0};
    (void)self;
    if (!PyArg_ParseTuple(args, "OnnninnnddOOOOOnn:decode", &objs[0], &j.frames, &j.markers,
                          &j.words, &j.kind, &j.analog_at, &j.channels, &j.samples,
                          &j.point_factor, &j.residual_factor, &objs[1], &objs[2], &objs[3],
                          &objs[4], &objs[5], &j.first, &j.total))
        return NULL;
    /* Each count alone first (below 2^31), then every product in doubles, so that no
       integer product here or below can overflow whatever the caller passed. */
    const Py_ssize_t one = (Py_ssize_t)1 << 31;
    const double most = (double)((Py_ssize_t)1 << 46);
    if (j.kind < 0 || j.kind >= KINDS || j.frames < 0 || j.frames > one || j.markers < 0 ||
        j.markers > one || j.words < 0 || j.words > one || j.channels < 0 || j.channels > one ||
        j.samples < 0 || j.samples > one || j.analog_at < 0 || j.analog_at > one ||
        j.first < 0 || j.first > one || j.total < 0 || j.total > one ||
        j.total < j.first + j.frames || j.analog_at < 4 * j.markers ||
        (double)j.channels * (double)j.samples > most ||
        (double)j.words < (double)j.analog_at + (double)j.channels * (double)j.samples ||
        (double)j.total * (3.0 * (double)j.markers + (double)j.channels * (double)j.samples) > most ||
        (double)j.frames * (double)j.words * 4.0 > most) {
        PyErr_SetString(PyExc_ValueError, "inconsistent sizes");
        return NULL;
    }
    int width = j.kind == K_LE_I2 || j.kind == K_BE_I2 ? 2 : 4;
    j.frame_bytes = j.words * width;
    int has_analog = objs[5] != Py_None;
    Py_ssize_t sizes[6] = {1, 8, 8, 8, 8, 4};
    Py_ssize_t needs[6] = {j.frames * j.frame_bytes, j.channels, j.channels, j.total * j.markers * 3,
                           j.total * j.markers, j.channels * j.total * j.samples};
    const char *names[6] = {"raw", "offsets", "factors", "xyz", "residual", "analog"};
    Py_buffer views[6];
    int taken = 0, ok = 1;
    for (; taken < (has_analog ? 6 : 5) && ok; taken++)
        ok = take(objs[taken], &views[taken], taken >= 3, sizes[taken], needs[taken], names[taken]);
    if (!ok) taken--; /* the failed one holds nothing */
    if (ok) {
        j.raw = views[0].buf;
        j.offsets = views[1].buf;
        j.factors = views[2].buf;
        j.xyz = views[3].buf;
        j.residual = views[4].buf;
        j.analog = has_analog ? views[5].buf : NULL;
        j.scratch = malloc(sizeof(float) * (size_t)(j.words > 0 ? j.words : 1) * BLOCK);
        if (j.scratch == NULL) {
            PyErr_NoMemory();
            ok = 0;
        } else {
            Py_BEGIN_ALLOW_THREADS
            run(&j);
            Py_END_ALLOW_THREADS
            free(j.scratch);
        }
    }
    for (int i = 0; i < taken; i++) PyBuffer_Release(&views[i]);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS,
     "decode(raw, frames, markers, words, kind, analog_at, channels, samples, point_factor, "
     "residual_factor, offsets, factors, xyz, residual, analog, first, total): the frames of raw "
     "into the outputs from frame `first` (see decode.py)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_decode", "Compiled C3D frame decode (see decode.py).", -1, methods,
    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__decode(void) { return PyModule_Create(&module_definition); }
