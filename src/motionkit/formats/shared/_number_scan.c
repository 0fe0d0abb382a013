/* The decimal-number scan of motionkit.formats.shared.number_scan, compiled.
 *
 * number_scan.py states the rule (scan_reference, in Python) and the tests hold this
 * file to it bit for bit: tokens are runs of bytes other than ASCII blanks (what the
 * regular expression rb"\S+" finds); a token that is a plain decimal number
 * ([+-], digits with at most one point, an optional exponent) is stored as exactly the
 * double Python's float() gives for it; the scan stops at the first other token (nan,
 * 1_000, text, a broken number), and the caller's Python decides what that one is.
 *
 * The value: with at most 19 significant digits, a mantissa w <= 2^53 and a decimal
 * exponent within +-22, w and 10^|e| are exact doubles, so one IEEE multiplication or
 * division gives the correctly rounded result (Clinger's fast path). Every other plain
 * number goes to PyOS_string_to_double, the very function float() calls: locale
 * independent, correctly rounded, the same bits by construction. Nothing is allocated;
 * at most len(out) numbers are stored, and the tokens after that are still checked and
 * counted, so the caller learns how many the text holds.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <stdint.h>

/* The fast path needs doubles evaluated as doubles (no x87 extended precision). */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define FAST_PATH 1
#else
#define FAST_PATH 0
#endif

static const double powers[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* ASCII blanks as rb"\s" knows them: \t \n \v \f \r and space. */
static inline int blank(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static inline int is_digit(unsigned char c) { return (unsigned char)(c - '0') < 10; }

/* Parse the plain decimal number at p; on success store its value, set *next past it and
 * return 1; return 0 when the token is anything else, -1 with an exception set when
 * PyOS_string_to_double fails (no memory). The text ends in a NUL byte (a bytes object's
 * always does), which no loop here reads past: it is no digit, sign, point, letter or
 * blank, so the loops need no bound; end only tells that NUL from one inside the text. */
static int number(const unsigned char *p, const unsigned char *end, double *value,
                  const unsigned char **next) {
    const unsigned char *token = p;
    int negative = *p == '-';
    if (*p == '+' || *p == '-') p++;
    /* w gathers every digit after the leading zeros (it may wrap past 19 digits: such a
     * number takes the slow path, which does not read w) */
    uint64_t w = 0;
    unsigned d;
    const unsigned char *first = p;
    while (*p == '0') p++;
    const unsigned char *from = p;
    for (; (d = (unsigned)*p - '0') < 10; p++) w = 10 * w + d;
    Py_ssize_t significant = p - from, shift = 0; /* as wide as the text can be long */
    int seen = p > first;
    if (*p == '.') {
        const unsigned char *point = ++p;
        if (!significant) {
            while (*p == '0') p++; /* zeros after the point, before any digit */
        }
        const unsigned char *digits = p;
        for (; (d = (unsigned)*p - '0') < 10; p++) w = 10 * w + d;
        significant += p - digits;
        shift = -(p - point);
        seen = seen || p > point;
    }
    if (!seen) return 0;
    Py_ssize_t exponent = 0;
    int huge = 0; /* the exponent has more digits than are gathered: it is no longer exact */
    if (*p == 'e' || *p == 'E') {
        p++;
        int minus = *p == '-';
        if (*p == '+' || *p == '-') p++;
        if (!is_digit(*p)) return 0;
        for (; (d = (unsigned)*p - '0') < 10; p++) {
            if (exponent < 100000) exponent = 10 * exponent + (Py_ssize_t)d;
            else huge = 1;
        }
        if (minus) exponent = -exponent;
    }
    if (p != end && !blank(*p)) return 0;
    *next = p;
    Py_ssize_t e = exponent + shift;
    /* a huge exponent may cancel a long shift (0.<99999 zeros>1e1000000): only the slow
     * path, which reads the whole token, knows its value */
    if (!huge && FAST_PATH && significant <= 19 && w <= ((uint64_t)1 << 53) && e >= -22 && e <= 22) {
        double v = (double)w;
        v = e < 0 ? v / powers[-e] : v * powers[e];
        *value = negative ? -v : v;
        return 1;
    }
    char *stop = NULL;
    double v = PyOS_string_to_double((const char *)token, &stop, NULL);
    if (v == -1.0 && PyErr_Occurred()) return -1;
    if ((const unsigned char *)stop != p) return 0; /* cannot happen on a plain number */
    *value = v;
    return 1;
}

static PyObject *scan(PyObject *self, PyObject *args) {
    PyObject *raw, *target;
    Py_ssize_t start;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!nO", &PyBytes_Type, &raw, &start, &target)) return NULL;
    Py_ssize_t size = PyBytes_GET_SIZE(raw);
    if (start < 0 || start > size) {
        PyErr_SetString(PyExc_ValueError, "start outside the text");
        return NULL;
    }
    Py_buffer out;
    if (PyObject_GetBuffer(target, &out, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (out.itemsize != sizeof(double) || out.format == NULL || strcmp(out.format, "d") != 0) {
        PyBuffer_Release(&out);
        PyErr_SetString(PyExc_ValueError, "out must be a C-contiguous float64 buffer");
        return NULL;
    }
    double *dst = (double *)out.buf;
    Py_ssize_t room = out.len / (Py_ssize_t)sizeof(double), found = 0, stop = -1;
    /* a bytes object's data always ends in a NUL byte, which PyOS_string_to_double needs */
    const unsigned char *text = (const unsigned char *)PyBytes_AS_STRING(raw);
    const unsigned char *p = text + start, *end = text + size;
    for (;;) {
        while (blank(*p)) p++; /* the final NUL is no blank */
        if (p == end) break;
        double value;
        const unsigned char *next = p;
        int ok = number(p, end, &value, &next);
        if (ok < 0) {
            PyBuffer_Release(&out);
            return NULL;
        }
        if (!ok) {
            stop = p - text;
            break;
        }
        if (found < room) dst[found] = value;
        found++;
        p = next;
    }
    PyBuffer_Release(&out);
    return Py_BuildValue("nn", found, stop);
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS,
     "scan(raw, start, out) -> (found, stop): the plain decimal numbers of raw[start:] "
     "into out; stop is where the first other token starts, or -1."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_number_scan",
    "Compiled decimal-number scan (see number_scan.py).", -1, methods,
    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__number_scan(void) { return PyModule_Create(&module_definition); }
